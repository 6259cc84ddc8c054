#!/usr/bin/env python3
"""SQLCipherKit's own version, as the library names it: prints it.

    project_version.py ROOT

The version is defined once, in Sources/SQLCipherKit/Engine/Engine+Release.swift
(`public static let sqlcipherKitVersion = "X.Y.Z"`); build-sqlcipher.sh reads it here and writes it into the
packages, MANIFEST.json, the SBOM and pin.json. Exits 1, saying why, when that line is missing, repeated or not a
semantic version (MAJOR.MINOR.PATCH, what SwiftPM's `from:` takes).
"""
import os
import re
import sys

SOURCE = os.path.join("Sources", "SQLCipherKit", "Engine", "Engine+Release.swift")
LINE = re.compile(r'^\s*public static let sqlcipherKitVersion = "([^"]*)"\s*$', re.MULTILINE)
SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: project_version.py ROOT")
    path = os.path.join(sys.argv[1], SOURCE)
    try:
        with open(path, encoding="utf-8") as handle:
            found = LINE.findall(handle.read())
    except OSError as error:
        sys.exit(f"project_version.py: cannot read {path}: {error.strerror}")
    if len(found) != 1:
        sys.exit(f"project_version.py: {path} must define sqlcipherKitVersion once "
                 f"(`public static let sqlcipherKitVersion = \"X.Y.Z\"`); found it {len(found)} times")
    if not SEMVER.match(found[0]):
        sys.exit(f"project_version.py: sqlcipherKitVersion {found[0]!r} in {path} is not MAJOR.MINOR.PATCH")
    print(found[0])


if __name__ == "__main__":
    main()
