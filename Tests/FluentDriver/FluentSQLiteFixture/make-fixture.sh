#!/usr/bin/env bash
# Rewrites the driver's compatibility fixture (not part of the test command): builds this package, has
# fluent-sqlite-driver write its models into a plain SQLite file, dumps the file as SQL text with the sqlite3 shell
# (Debian's sqlite3), and keeps what the models read back as through fluent-sqlite-driver.
#
#   Tests/FluentDriver/FluentSQLiteFixture/make-fixture.sh
#
# Output: Drivers/FluentSQLCipherDriver/Tests/FluentSQLCipherDriverTests/Fixtures/fluent-sqlite-driver.sql and
# fluent-sqlite-driver.json. The driver's test (FluentSQLCipherDriverTests, "a fluent-sqlite-driver file …") loads the
# dump into a plain file, encrypts it with `sqlcipherkit encrypt`, reads the models through FluentSQLCipherDriver and
# compares them with the JSON.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$here/../../../Drivers/FluentSQLCipherDriver/Tests/FluentSQLCipherDriverTests/Fixtures
command -v sqlite3 >/dev/null || { echo "make-fixture.sh: the sqlite3 shell is missing: apt-get install sqlite3" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
swift build --package-path "$here" --scratch-path "$here/.build-fixture"
"$here/.build-fixture/debug/make-fluent-sqlite-fixture" "$work/fluent.sqlite" > "$work/models.json"
mkdir -p "$out"
sqlite3 "$work/fluent.sqlite" .dump > "$out/fluent-sqlite-driver.sql"
mv "$work/models.json" "$out/fluent-sqlite-driver.json"
echo "wrote $out/fluent-sqlite-driver.sql and fluent-sqlite-driver.json"
