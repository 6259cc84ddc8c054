#!/usr/bin/env bash
# Tests/CryptoProvider/engine.sh NAME: prints the build folder of an engine compiled with crypto provider NAME
# (sqlcipherkit or reference), building it first through the switch itself when needed: Vendor/build when the
# main build's pin.json says it holds NAME, else Vendor/build/engine-NAME/ (gitignored), built with
# `SQLCIPHERKIT_BUILD_DIR=… build-sqlcipher.sh engine --crypto-provider NAME` (about 3 minutes the first time,
# seconds after: stamps). In the folder: amalgamation/sqlite3.c (the reference's is SQLCipher from the pinned
# tarball without SQLCipherKit's provider: the differential test compiles ours beside it), include/sqlite3.h and
# lib/libsqlcipher.a (the file matrix links one program per engine). The build's output goes to its build.log.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NAME=${1:?usage: engine.sh sqlcipherkit|reference}
MAIN=$ROOT/Vendor/build
if [ -s "$MAIN/lib/libsqlcipher.a" ] && [ -f "$MAIN/amalgamation/sqlite3.c" ] \
    && [ "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("cryptoProvider", "sqlcipherkit"))' \
        "$MAIN/pin.json" 2>/dev/null)" = "$NAME" ]; then
    echo "$MAIN"
    exit 0
fi
DIR=$MAIN/engine-$NAME
mkdir -p "$DIR"
if ! SQLCIPHERKIT_BUILD_DIR=$DIR SQLCIPHERKIT_NO_INSTALL=1 "$ROOT/build-sqlcipher.sh" engine --crypto-provider "$NAME" \
    >"$DIR/build.log" 2>&1; then
    tail -n 20 "$DIR/build.log" >&2
    echo "engine.sh: building the $NAME engine failed (log: $DIR/build.log)" >&2
    exit 1
fi
echo "$DIR"
