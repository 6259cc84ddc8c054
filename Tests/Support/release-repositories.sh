#!/usr/bin/env bash
# The two packages build-sqlcipher.sh writes under dist/SQLCipherKit/swiftpm/, as their release repositories would
# hold them, for a consumer outside the repository that depends on them as the docs say (the Moving article's
# `.package(url: …, from: VERSION)` lines, their URLs pointed here: Tests/Support/use-release-repositories.py):
#   OUT/SQLCipherKit           the release package, copied as shipped
#   OUT/FluentSQLCipherDriver  the driver package, copied as shipped: its manifest names SQLCipherKit by the URL
#                              the build was given (a placeholder by default), and the app's own line for
#                              SQLCipherKit, which the docs tell it to add, stands in for it (issue 48: the route a
#                              newcomer follows, verbatim; the driver is no longer rewritten for the test)
# each a git repository with one commit, tagged with the version the build wrote (Engine.sqlcipherKitVersion, in
# Vendor/build/pin.json). Used by Tests/Examples/run-app-examples.sh.
#
# Usage: release-repositories.sh OUT   (OUT exists and holds neither folder; needs ./build-sqlcipher.sh's dist/)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ $# = 1 ] && [ -d "$1" ] || { echo "usage: release-repositories.sh OUT (an existing folder)" >&2; exit 2; }
OUT=$(cd "$1" && pwd)
PACKAGES=$ROOT/dist/SQLCipherKit/swiftpm
[ -f "$PACKAGES/SQLCipherKit/Package.swift" ] && [ -f "$PACKAGES/FluentSQLCipherDriver/Package.swift" ] \
    || { echo "release-repositories.sh: no packages in $PACKAGES: run ./build-sqlcipher.sh" >&2; exit 1; }
VERSION=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sqlcipherKitVersion"])' \
    "$ROOT/Vendor/build/pin.json") \
    || { echo "release-repositories.sh: Vendor/build/pin.json names no sqlcipherKitVersion: run ./build-sqlcipher.sh" >&2; exit 1; }

for name in SQLCipherKit FluentSQLCipherDriver; do
    cp -R "$PACKAGES/$name" "$OUT/$name"
    (cd "$OUT/$name" && git init -q && git add -A \
        && git -c user.name=release -c user.email=release@example.invalid commit -q -m release && git tag "$VERSION")
done
echo "release-repositories.sh: $OUT/SQLCipherKit and $OUT/FluentSQLCipherDriver, tagged $VERSION"
