#!/usr/bin/env bash
# The packages build-sqlcipher.sh writes under dist/SQLCipherKit/swiftpm/, as their release repositories would
# hold them, for a consumer outside the repository that depends on them as the docs say (the Moving article's
# `.package(url: …, from: VERSION)` lines, their URLs pointed here: Tests/Support/use-release-repositories.py):
#   OUT/SQLCipherKit           the release package, copied as shipped
#   OUT/FluentSQLCipherDriver  the driver package as `SQLCIPHERKIT_PACKAGE_URL=file://OUT/SQLCipherKit
#                              ./build-sqlcipher.sh` writes it (the build's own step, BuildSupport/driver_package.py,
#                              with that URL), as the docs tell a publisher to build it: its manifest names
#                              SQLCipherKit by the same URL as the app's line, so SwiftPM sees one package (with the
#                              placeholder URL it warns "Conflicting identity", to become an error; issue 48)
#   OUT/SQLCipherKitObservability  the observability bridge's package, written the same way
#                              (BuildSupport/observability_package.py)
# each a git repository with one commit, tagged with the version the build wrote (Engine.sqlcipherKitVersion, in
# Vendor/build/pin.json). Used by Tests/Examples/run-app-examples.sh.
#
# Usage: release-repositories.sh OUT   (OUT exists and holds neither folder; needs ./build-sqlcipher.sh's dist/)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ $# = 1 ] && [ -d "$1" ] || { echo "usage: release-repositories.sh OUT (an existing folder)" >&2; exit 2; }
OUT=$(cd "$1" && pwd)
PACKAGES=$ROOT/dist/SQLCipherKit/swiftpm
[ -f "$PACKAGES/SQLCipherKit/Package.swift" ] \
    || { echo "release-repositories.sh: no release package in $PACKAGES: run ./build-sqlcipher.sh" >&2; exit 1; }
VERSION=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sqlcipherKitVersion"])' \
    "$ROOT/Vendor/build/pin.json") \
    || { echo "release-repositories.sh: Vendor/build/pin.json names no sqlcipherKitVersion: run ./build-sqlcipher.sh" >&2; exit 1; }

cp -R "$PACKAGES/SQLCipherKit" "$OUT/SQLCipherKit"
python3 "$ROOT/BuildSupport/driver_package.py" --out "$OUT/FluentSQLCipherDriver" --root "$ROOT" \
    --sqlcipherkit-url "file://$OUT/SQLCipherKit" --version "$VERSION"
python3 "$ROOT/BuildSupport/observability_package.py" --out "$OUT/SQLCipherKitObservability" --root "$ROOT" \
    --sqlcipherkit-url "file://$OUT/SQLCipherKit" --version "$VERSION"
for name in SQLCipherKit FluentSQLCipherDriver SQLCipherKitObservability; do
    (cd "$OUT/$name" && git init -q && git add -A \
        && git -c user.name=release -c user.email=release@example.invalid commit -q -m release && git tag "$VERSION")
done
echo "release-repositories.sh: $OUT/SQLCipherKit, $OUT/FluentSQLCipherDriver and $OUT/SQLCipherKitObservability, tagged $VERSION"
