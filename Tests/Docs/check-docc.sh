#!/usr/bin/env bash
# The DocC catalogues convert with no warning. Two uses:
#
#   check-docc.sh                   the docs part: SQLCipherKit. Builds the SQLCipherKit target's symbol graphs in a
#                                   build folder of its own (.build-docs, so the main build is not disturbed) and runs
#                                   `docc convert` on Sources/SQLCipherKit/Documentation.docc with them.
#   check-docc.sh --driver SCRATCH  the driver part (Tests/FluentDriver/run-driver-tests.sh, once it has built the
#                                   driver package in the build folder SCRATCH): the symbol graphs of the package's
#                                   modules from that build (`swift package dump-symbol-graph`, seconds: nothing is
#                                   compiled again), then `docc convert` of the FluentSQLCipherDriver catalogue, and of
#                                   SQLCipherSQLKit's symbol graph (a product without a catalogue: its doc comments).
#                                   Building the driver's dependencies here instead (swift-nio, fluent-kit, sql-kit…)
#                                   took 3 minutes 18 s from nothing on 2 cores, which the driver part spends anyway.
#
# The symbol graphs include extension block symbols (what swift-docc-plugin gives `docc` by default), so the doc
# comments of extensions to other modules' types (FluentKit's DatabaseConfigurationFactory, Swift's Int…) are
# checked too. Prints, per conversion, one line:
#   ok: docc: CATALOGUE, 0 warnings
# or a FAIL: line per warning (what, and where), then the count. Before it, its control: the same conversion of a
# temporary copy of the catalogue with a synthetic article holding a symbol link to no symbol and a <doc:> to no
# article must give a warning for each (one "ok: docc control: …" line each), or the check fails: a warning that
# was not parsed, or a conversion that no longer reports these, would otherwise pass as 0 warnings.
# docc comes with the Swift toolchain.
set -uo pipefail
# (The driver's build folder, named from where the caller is.)
[ "${1:-}" != --driver ] || [ $# != 2 ] || scratch=$(realpath -m "$2")
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
docc=$(command -v docc || true)
[ -n "$docc" ] || docc=$(dirname "$(readlink -f "$(command -v swift)")")/docc
[ -x "$docc" ] || { echo "FAIL: docc: no docc beside swift ($docc)"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-docc.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
STATUS=0

# The warnings of the docc log $1, one a line: "WHAT (FILE:LINE)" (docc prints "warning: WHAT", then
# "  --> FILE:LINE:COLUMN…", the file relative to the catalogue).
warnings_of() {
    awk '/^warning:/ { if (w != "") print w; w = $0; next }
         /^ *--> / && w != "" { sub(/^ *--> /, ""); sub(/-[0-9]+:[0-9]+$/, ""); print w " (" $0 ")"; w = "" }
         END { if (w != "") print w }' "$1" | sed 's/^warning: //'
}

# Converts: $1 the module's name, $2 the catalogue ("" for a symbol graph alone), $3 the symbol graphs' folder, $4
# the log. Returns docc's exit status.
convert() {
    local name=$1 catalogue=$2 symbols=$3 log=$4
    "$docc" convert ${catalogue:+"$catalogue"} --additional-symbol-graph-dir "$symbols" --fallback-display-name "$name" \
        --fallback-bundle-identifier "$name" --output-path "$(mktemp -d "$work/out.XXXXXX")" >"$log" 2>&1
}

# Checks one conversion: $1 the module's name, $2 the catalogue ("" for none), $3 the symbol graphs' folder, $4 what
# the lines call it. One ok: line, or FAIL: lines; STATUS=1 on failure.
check() {
    local name=$1 catalogue=$2 symbols=$3 shown=$4 log status count line where
    log=$(mktemp "$work/docc.XXXXXX.log")
    convert "$name" "$catalogue" "$symbols" "$log"
    status=$?
    count=$(grep -c '^warning:' "$log")
    if [ "$status" != 0 ]; then
        tail -n 20 "$log"
        echo "FAIL: docc: docc convert of $shown exited $status"
        STATUS=1
    elif [ "$count" != 0 ]; then
        while IFS= read -r line; do
            # A file docc names relative to the catalogue (Article.md, ../X.swift), named from the repository's root.
            where=${line##* (}
            if [ -n "$catalogue" ] && [[ "$line" == *" ("* ]] && [ ! -e "${where%%:*}" ] \
                && [ -e "$catalogue/${where%%:*}" ]; then
                line="${line% (*} ($(realpath -m --relative-to="$root" "$catalogue/${where%%:*}"):${where#*:}"
            fi
            echo "FAIL: docc: $line"
        done < <(warnings_of "$log")
        echo "docc: $shown, $count warnings"
        STATUS=1
    else
        echo "ok: docc: $shown, 0 warnings"
    fi
}

# The control for a catalogue: $1 the module's name, $2 the catalogue, $3 the symbol graphs' folder. A temporary
# copy of the catalogue gets PlantedDoccControl.md; its two planted links must each give a warning in that file.
control() {
    local name=$1 catalogue=$2 symbols=$3 copy log warnings planted found
    copy=$work/control/$(basename "$catalogue")
    mkdir -p "$work/control" && cp -R "$catalogue" "$copy" || { echo "FAIL: docc control: copying $catalogue"; STATUS=1; return; }
    cat >"$copy/PlantedDoccControl.md" <<'EOF'
# Planted docc control

A synthetic article the docs check writes into a temporary copy of the catalogue, never into the repository.

## Planted links

- ``NoSuchPlantedSymbol``
- <doc:NoSuchPlantedArticle>
EOF
    log=$work/control.log
    convert "$name" "$copy" "$symbols" "$log"
    warnings=$(warnings_of "$log" | grep -F 'PlantedDoccControl.md')
    for planted in "a symbol link to no symbol:NoSuchPlantedSymbol" "a <doc:> to no article:NoSuchPlantedArticle"; do
        found=$(grep -F "'${planted##*:}'" <<<"$warnings" | head -n1)
        if [ -n "$found" ]; then
            echo "ok: docc control: $(basename "$catalogue"): ${planted%:*} in a planted article is a warning ($found)"
        else
            echo "FAIL: docc control: $(basename "$catalogue"): ${planted%:*} (${planted##*:}) in a planted article" \
                "gave no warning (docc printed $(grep -c '^warning:' "$log") in all; the check would pass a dead link)"
            STATUS=1
        fi
    done
}

if [ "${1:-}" = --driver ]; then
    [ $# = 2 ] || { echo "FAIL: docc: usage: check-docc.sh --driver SCRATCH"; exit 1; }
    catalogue=Drivers/FluentSQLCipherDriver/Sources/FluentSQLCipherDriver/FluentSQLCipherDriver.docc
    # (dump-symbol-graph exits 1 when the build folder has no test modules, FluentSQLCipherDriverPackageTests and
    # the like, whose graphs are not wanted: what counts is that the two modules' graphs were written now.)
    touch "$work/stamp"
    (cd Drivers/FluentSQLCipherDriver && swift package --scratch-path "$scratch" dump-symbol-graph \
        --emit-extension-block-symbols) >"$work/build.log" 2>&1
    graphs=$(sed -n 's/^Files written to //p' "$work/build.log" | tail -n1)
    for module in FluentSQLCipherDriver SQLCipherSQLKit; do
        [ -n "$graphs" ] && [ "$graphs/$module.symbols.json" -nt "$work/stamp" ] && continue
        grep -E '^(error|warning): ' "$work/build.log" | tail -n 20
        echo "FAIL: docc: no $module symbol graph from swift package dump-symbol-graph in $scratch"
        exit 1
    done
    mkdir -p "$work/driver" "$work/sqlkit"
    for module in FluentSQLCipherDriver SQLCipherSQLKit; do
        folder=$work/driver
        [ "$module" = FluentSQLCipherDriver ] || folder=$work/sqlkit
        for graph in "$graphs/$module.symbols.json" "$graphs/$module"@*.symbols.json; do
            [ ! -f "$graph" ] || cp "$graph" "$folder/"
        done
    done
    control FluentSQLCipherDriver "$catalogue" "$work/driver"
    check FluentSQLCipherDriver "$catalogue" "$work/driver" "$catalogue"
    check SQLCipherSQLKit "" "$work/sqlkit" "SQLCipherSQLKit (its doc comments; no catalogue)"
    exit "$STATUS"
fi

catalogue=Sources/SQLCipherKit/Documentation.docc
mkdir -p "$work/symbols"
if ! swift build --scratch-path .build-docs --target SQLCipherKit -Xswiftc -emit-symbol-graph \
    -Xswiftc -emit-symbol-graph-dir -Xswiftc "$work/symbols" -Xswiftc -emit-extension-block-symbols \
    >"$work/build.log" 2>&1; then
    tail -n 20 "$work/build.log"
    echo "FAIL: docc: the symbol-graph build of SQLCipherKit failed"
    exit 1
fi
control SQLCipherKit "$catalogue" "$work/symbols"
check SQLCipherKit "$catalogue" "$work/symbols" "$catalogue"
exit "$STATUS"
