#!/usr/bin/env bash
# The SQLCipherKit DocC catalogue converts with no warning (a part of the test command's docs part): builds the
# SQLCipherKit target's symbol graphs in a build folder of its own (.build-docs, so the main build is not
# disturbed), runs `docc convert` on Sources/SQLCipherKit/Documentation.docc with them, and prints one line:
#   ok: docc: Sources/SQLCipherKit/Documentation.docc, 0 warnings
# or a FAIL: line per warning (where, and what), then the count. docc comes with the Swift toolchain.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
catalogue=Sources/SQLCipherKit/Documentation.docc
docc=$(command -v docc || true)
[ -n "$docc" ] || docc=$(dirname "$(readlink -f "$(command -v swift)")")/docc
[ -x "$docc" ] || { echo "FAIL: docc: no docc beside swift ($docc)"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-docc.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/symbols"
if ! swift build --scratch-path .build-docs --target SQLCipherKit -Xswiftc -emit-symbol-graph \
    -Xswiftc -emit-symbol-graph-dir -Xswiftc "$work/symbols" >"$work/build.log" 2>&1; then
    tail -n 20 "$work/build.log"
    echo "FAIL: docc: the symbol-graph build of SQLCipherKit failed"
    exit 1
fi
"$docc" convert "$catalogue" --additional-symbol-graph-dir "$work/symbols" --fallback-display-name SQLCipherKit \
    --fallback-bundle-identifier SQLCipherKit --output-path "$work/out" >"$work/docc.log" 2>&1
status=$?
# Each warning: "warning: WHAT" then "  --> FILE:LINE:COLUMN…" (the file relative to the catalogue).
warnings=$(awk '/^warning:/ { if (w != "") print w; w = $0; next }
                /^ *--> / && w != "" { sub(/^ *--> /, ""); sub(/-[0-9]+:[0-9]+$/, ""); print w " (" $0 ")"; w = "" }
                END { if (w != "") print w }' "$work/docc.log")
count=$(grep -c '^warning:' "$work/docc.log")
if [ "$status" != 0 ]; then
    tail -n 20 "$work/docc.log"
    echo "FAIL: docc: docc convert exited $status"
    exit 1
fi
if [ "$count" != 0 ]; then
    while IFS= read -r line; do echo "FAIL: docc: ${line#warning: }"; done <<<"$warnings"
    echo "docc: $catalogue, $count warnings"
    exit 1
fi
echo "ok: docc: $catalogue, 0 warnings"
