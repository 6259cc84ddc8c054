#!/usr/bin/env python3
"""The info.json of an SE-0482 artifact bundle holding one static library: one artifact, one variant per target
triple (its archive, built for that triple's architecture), the headers they share in NAME/include with a
module map. SwiftPM links the variant whose supportedTriples holds the triple it builds for. build-sqlcipher.sh
writes the engine bundle's with it; release_package.py builds the release package's from the same function.

    bundle_info.py OUT.json --name SQLCipherEngine --version VERSION --variant TRIPLE=PATH [--variant ...]

PATH is the library's path inside the bundle (NAME/TRIPLE/libNAME.a). Variants are written in the order given.
OUT is written whole, then renamed into place.
"""
import argparse
import json
import os


def info(name, version, variants):
    """The info.json document, keys in SwiftPM's documented order; variants: (triple, library path) pairs."""
    if not variants or len({triple for triple, _ in variants}) != len(variants):
        raise SystemExit(f"bundle_info.py: one variant per triple, at least one: {variants}")
    return {
        "schemaVersion": "1.0",
        "artifacts": {
            name: {
                "type": "staticLibrary",
                "version": version,
                "variants": [{
                    "path": library,
                    "supportedTriples": [triple],
                    "staticLibraryMetadata": {
                        "headerPaths": [f"{name}/include"],
                        "moduleMapPath": f"{name}/include/module.modulemap",
                    },
                } for triple, library in variants],
            }
        },
    }


def write(path, document):
    partial = path + ".part"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
        handle.write("\n")
    os.replace(partial, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--name", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--variant", action="append", required=True, metavar="TRIPLE=PATH")
    args = parser.parse_args()
    variants = []
    for spec in args.variant:
        triple, sep, library = spec.partition("=")
        if not sep or not triple or not library:
            parser.error(f"--variant wants TRIPLE=PATH, not {spec!r}")
        variants.append((triple, library))
    write(args.out, info(args.name, args.version, variants))


if __name__ == "__main__":
    main()
