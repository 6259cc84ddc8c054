#!/usr/bin/env python3
"""The info.json of an SE-0482 artifact bundle holding one static library: one artifact, one variant (one
target triple), its headers in NAME/include with a module map. build-sqlcipher.sh writes the engine bundle's
with it; release_package.py builds the release package's from the same function.

    bundle_info.py OUT.json --name SQLCipherEngine --version VERSION --triple TRIPLE --library PATH

PATH is the library's path inside the bundle (NAME/TRIPLE/libNAME.a). OUT is written whole, then renamed
into place.
"""
import argparse
import json
import os


def info(name, version, triple, library):
    """The info.json document, keys in SwiftPM's documented order."""
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
                }],
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
    parser.add_argument("--triple", required=True)
    parser.add_argument("--library", required=True)
    args = parser.parse_args()
    write(args.out, info(args.name, args.version, args.triple, args.library))


if __name__ == "__main__":
    main()
