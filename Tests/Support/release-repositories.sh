#!/usr/bin/env bash
# The two packages build-sqlcipher.sh writes under dist/SQLCipherKit/swiftpm/, as their release repositories would
# hold them, for a consumer outside the repository that depends on them with `.package(url: "file://…", from:
# "1.0.0")`:
#   OUT/SQLCipherKit           the release package, copied
#   OUT/FluentSQLCipherDriver  the driver package, written again by BuildSupport/driver_package.py (as the build
#                              runs it) so that its manifest names OUT/SQLCipherKit's file:// URL
# each a git repository with one commit, tagged 1.0.0. Used by the tests of the examples that consume both
# (DriverPackageTests, Tests/Examples/run-app-examples.sh); Tests/Support/use-release-repositories.py points a
# consumer's manifest at them.
#
# Usage: release-repositories.sh OUT   (OUT exists and holds neither folder; needs ./build-sqlcipher.sh's dist/)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ $# = 1 ] && [ -d "$1" ] || { echo "usage: release-repositories.sh OUT (an existing folder)" >&2; exit 2; }
OUT=$(cd "$1" && pwd)
RELEASE=$ROOT/dist/SQLCipherKit/swiftpm/SQLCipherKit
[ -f "$RELEASE/Package.swift" ] || { echo "release-repositories.sh: no $RELEASE: run ./build-sqlcipher.sh" >&2; exit 1; }

tag() {
    (cd "$1" && git init -q && git add -A \
        && git -c user.name=release -c user.email=release@example.invalid commit -q -m release && git tag 1.0.0)
}

cp -R "$RELEASE" "$OUT/SQLCipherKit"
tag "$OUT/SQLCipherKit"
python3 "$ROOT/BuildSupport/driver_package.py" --out "$OUT/FluentSQLCipherDriver" --root "$ROOT" \
    --sqlcipherkit-url "file://$OUT/SQLCipherKit" --version 1.0.0
tag "$OUT/FluentSQLCipherDriver"
