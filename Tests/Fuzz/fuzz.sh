#!/usr/bin/env bash
# Tests/Fuzz/fuzz.sh: builds the libFuzzer target Tests/Fuzz/fuzz_engine.c over the pinned SQLCipher engine
# (the generated amalgamation, compiled with the pin's flags plus ASan, UBSan and coverage) and runs it.
# Build outputs, the working corpus, artifacts and logs all live under Vendor/build/fuzz/ (gitignored).
set -euo pipefail

usage() {
    cat <<'EOF'
Usage:
  Tests/Fuzz/fuzz.sh [SECONDS]        build if needed, run the regression inputs (known-issues/) and the trigram
                                      differential test, then fuzz for SECONDS (default 60): the test command
  Tests/Fuzz/fuzz.sh --reproduce FILE build if needed, then run one input (an artifact) and report
  Tests/Fuzz/fuzz.sh --regressions    only the regression inputs: every input in Tests/Fuzz/known-issues/
                                      must run clean on this engine, known-issue avoidance lifted
  Tests/Fuzz/fuzz.sh --differential [SEED [PATTERNS]]
                                      only the differential test of LIKE/GLOB on FTS5 trigram tables against a
                                      plain table (trigram_differential.c; default seed 1, 200 patterns); it
                                      also fails when under 2 pattern/operator pairs per pattern were answered
                                      through the trigram index or under 1 per 2 patterns matched rows
  Tests/Fuzz/fuzz.sh --sql 'SQL'      run SQL on an in-memory database of the sanitizer engine, lookaside off
                                      (run_sql.c: the reports' minimal reproducer)
  Tests/Fuzz/fuzz.sh --campaign [SECONDS]
                                      a long run (default 3 hours) with a corpus kept and minimized between runs
                                      in Vendor/cache/fuzz-campaign/ (gitignored), restarting after each finding;
                                      coverage sampled every 5 minutes into coverage.tsv, findings in findings/
  Tests/Fuzz/fuzz.sh --campaign-api [SECONDS]
                                      the Swift API fuzz (APIFuzzTests) in a loop with a new seed each round
                                      for SECONDS (default 1 hour); results in Vendor/cache/fuzz-campaign/api.tsv
  Tests/Fuzz/fuzz.sh --build-only     build (or find up to date) and stop
  Tests/Fuzz/fuzz.sh --make-seeds     regenerate the seed corpus Tests/Fuzz/corpus/ (writes into the repo)

Options:
  --fresh   start from the committed seeds only, dropping what earlier runs added to the working corpus

Exit status: 0 clean; 1 the fuzzer reported a crash, sanitizer error, leak, timeout or out-of-memory (the
input's path and a reproduce command are printed), or the run was too shallow (fewer inputs than
FUZZ_MIN_RUNS, or no file opened, keyed, read and checked in mode 0 or 1); 2 usage or setup error.
Environment: FUZZ_CLANG (compiler; default: clang on PATH, else /opt/swift/usr/bin/clang), FUZZ_MIN_RUNS
  (inputs a run must reach to pass; default 5 per second asked for), TMPDIR (where
  the per-run scratch folder goes; default /dev/shm when writable, else /tmp), FUZZ_KNOWN_ISSUES=1 (stop
  steering around the known engine bugs listed in Tests/Fuzz/README.md), FUZZ_CAMPAIGN_DIR (the campaign's
  folder; default Vendor/cache/fuzz-campaign), FUZZ_SAMPLE_SECONDS (the campaign's coverage sampling period;
  default 300), FUZZ_TIMEOUT (the campaign's per-input time-out; default 30 s), ASAN_OPTIONS, UBSAN_OPTIONS.
EOF
}

die() {
    printf 'fuzz.sh: error: %s\n' "$*" >&2
    exit 2
}

# ------------------------------------------------------------------------------------------ arguments ---

CALLER_PWD=$PWD
SECONDS_TO_RUN=60
ACTION=run
REPRODUCE_FILE=
FRESH=0
SQL_TEXT=
DIFF_SEED=${FUZZ_DIFF_SEED:-1}
DIFF_PATTERNS=200
SECONDS_GIVEN=0
while [ $# -gt 0 ]; do
    case $1 in
        --build-only) ACTION=build ;;
        --make-seeds) ACTION=seeds ;;
        --regressions) ACTION=regressions ;;
        --campaign) ACTION=campaign ;;
        --campaign-api) ACTION=campaign-api ;;
        --fresh) FRESH=1 ;;
        --sql)
            [ $# -ge 2 ] || die "--sql needs the SQL text"
            ACTION=sql
            SQL_TEXT=$2
            shift
            ;;
        --differential)
            ACTION=differential
            if [[ ${2:-} =~ ^[0-9]+$ ]]; then DIFF_SEED=$2; shift; fi
            if [[ ${2:-} =~ ^[0-9]+$ ]]; then DIFF_PATTERNS=$2; shift; fi
            ;;
        --reproduce)
            [ $# -ge 2 ] || die "--reproduce needs a FILE"
            ACTION=reproduce
            REPRODUCE_FILE=$2
            shift
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        *)
            [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -gt 0 ] || die "unknown argument '$1' (see --help)"
            SECONDS_TO_RUN=$1
            SECONDS_GIVEN=1
            ;;
    esac
    shift
done

if [ "$ACTION" = reproduce ]; then
    case $REPRODUCE_FILE in /*) ;; *) REPRODUCE_FILE=$CALLER_PWD/$REPRODUCE_FILE ;; esac
    [ -f "$REPRODUCE_FILE" ] || die "no such input: $REPRODUCE_FILE"
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"

FUZZ_SRC=Tests/Fuzz
OUT=Vendor/build/fuzz
AMALGAMATION=Vendor/build/amalgamation
HARNESS=$FUZZ_SRC/fuzz_engine.c
SEEDS=$FUZZ_SRC/corpus
DICT=$FUZZ_SRC/sql.dict
EXTRA_DICTS=$FUZZ_SRC/dict
KNOWN_ISSUES=$FUZZ_SRC/known-issues

# shellcheck source=../../Vendor/sqlcipher.pin
source Vendor/sqlcipher.pin

[ -f "$AMALGAMATION/sqlite3.c" ] && [ -f "$AMALGAMATION/sqlite3.h" ] ||
    die "the generated amalgamation ($AMALGAMATION/sqlite3.c, sqlite3.h) is missing: run ./build-sqlcipher.sh first"

# ------------------------------------------------------------------------------------------ toolchain ---

CLANG=${FUZZ_CLANG:-$(command -v clang || true)}
[ -n "$CLANG" ] || CLANG=/opt/swift/usr/bin/clang
[ -x "$CLANG" ] || die "no clang found (looked on PATH and at /opt/swift/usr/bin/clang; set FUZZ_CLANG)"
CLANG_DIR=$(dirname "$CLANG")
CLANG_ID=$("$CLANG" --version | head -n 1)

# lld when it is there: quicker, and quiet where gold warns about every ASan symbol.
LINK_FLAGS=()
if [ -x "$CLANG_DIR/ld.lld" ] || command -v ld.lld >/dev/null 2>&1; then LINK_FLAGS+=(-fuse-ld=lld); fi
LIBS=(-lcrypto -lm -lpthread)

# The engine gets the pin's flags with -O1 -g in place of its optimisation level, plus the sanitizers and coverage.
# shellcheck source=../Support/sanitizer-flags.sh
source Tests/Support/sanitizer-flags.sh
SANITIZE=(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
sanitizer_engine_flags "${SANITIZE[@]}"
HARNESS_FLAGS=(-std=c11 -Wall -Wextra -I"$AMALGAMATION" "${DEFINES[@]}" -O1 -g "${SANITIZE[@]}")

hash_of() { printf '%s\n' "$@" | sha256sum | cut -d' ' -f1; }
file_hash() { sha256sum "$1" | cut -d' ' -f1; }

# Rebuilds OUTPUT when the hash of everything that decides it differs from the one stored beside it.
# Usage: build_step OUTPUT STAMP LABEL COMMAND...  (COMMAND writes to $TMP_OUTPUT)
build_step() {
    local output=$1 stamp=$2 label=$3 started=$SECONDS
    shift 3
    if [ -f "$output" ] && [ "$(cat "$output.stamp" 2>/dev/null)" = "$stamp" ]; then
        printf '==> %s: up to date\n' "$label"
        return
    fi
    printf '==> %s\n' "$label"
    TMP_OUTPUT=$output.tmp
    rm -f "$TMP_OUTPUT" "$output.stamp"
    if ! "$@" 2> >(grep -v 'Cannot export local symbol' >&2); then
        rm -f "$TMP_OUTPUT"
        die "$label: the compiler failed (see above)"
    fi
    mv -f "$TMP_OUTPUT" "$output"
    printf '%s\n' "$stamp" >"$output.stamp"
    printf '    (%ss)\n' "$((SECONDS - started))"
}

compile_engine() { "$CLANG" -c "$AMALGAMATION/sqlite3.c" -o "$TMP_OUTPUT" "${ENGINE_FLAGS[@]}"; }
compile_harness() { "$CLANG" -c "$HARNESS" -o "$TMP_OUTPUT" "${HARNESS_FLAGS[@]}" "$@"; }
compile_tool() { "$CLANG" -c "$1" -o "$TMP_OUTPUT" "${HARNESS_FLAGS[@]}"; }
link() {
    local sanitizer=$1
    shift
    "$CLANG" "${LINK_FLAGS[@]}" "$sanitizer" -fsanitize=address,undefined "$@" -o "$TMP_OUTPUT" "${LIBS[@]}"
}

build() {
    mkdir -p "$OUT/obj"
    local header_hash engine_stamp harness_stamp
    header_hash=$(file_hash "$AMALGAMATION/sqlite3.h")
    engine_stamp=$(hash_of "$CLANG_ID" "${ENGINE_FLAGS[@]}" "$(file_hash "$AMALGAMATION/sqlite3.c")" "$header_hash")
    build_step "$OUT/obj/sqlite3.o" "$engine_stamp" \
        "engine object (sqlite3.c, $(du -h "$AMALGAMATION/sqlite3.c" | cut -f1), ASan+UBSan+coverage; 1-3 min)" \
        compile_engine
    harness_stamp=$(hash_of "$CLANG_ID" "${HARNESS_FLAGS[@]}" "$(file_hash "$HARNESS")" "$header_hash")
    build_step "$OUT/obj/fuzz_engine.o" "$harness_stamp" "harness object (fuzz_engine.c)" compile_harness
    build_step "$OUT/fuzz_engine" "$(hash_of "$engine_stamp" "$harness_stamp" "${LINK_FLAGS[@]}" "${LIBS[@]}")" \
        "link $OUT/fuzz_engine" link -fsanitize=fuzzer "$OUT/obj/fuzz_engine.o" "$OUT/obj/sqlite3.o"
    # The differential test and the SQL runner: plain programs over the same sanitizer engine object.
    local tool
    for tool in trigram_differential run_sql; do
        local tool_stamp
        tool_stamp=$(hash_of "$CLANG_ID" "${HARNESS_FLAGS[@]}" "$(file_hash "$FUZZ_SRC/$tool.c")" "$header_hash")
        build_step "$OUT/obj/$tool.o" "$tool_stamp" "$tool object ($tool.c)" compile_tool "$FUZZ_SRC/$tool.c"
        build_step "$OUT/$tool" "$(hash_of "$engine_stamp" "$tool_stamp" "${LINK_FLAGS[@]}" "${LIBS[@]}")" \
            "link $OUT/$tool" link -fsanitize=fuzzer-no-link "$OUT/obj/$tool.o" "$OUT/obj/sqlite3.o"
    done
    # One dictionary for libFuzzer (it takes one -dict): sql.dict and the topic dictionaries of dict/.
    cat "$DICT" "$EXTRA_DICTS"/*.dict >"$OUT/fuzz.dict"
    if [ "$ACTION" = seeds ]; then
        build_step "$OUT/obj/make_seeds.o" "$(hash_of "$harness_stamp" seeds)" "seed generator object" \
            compile_harness -DFUZZ_MAKE_SEEDS
        build_step "$OUT/make-seeds" "$(hash_of "$engine_stamp" "$harness_stamp" "${LINK_FLAGS[@]}" seeds)" \
            "link $OUT/make-seeds" link -fsanitize=fuzzer-no-link "$OUT/obj/make_seeds.o" "$OUT/obj/sqlite3.o"
    fi
}

# -------------------------------------------------------------------------------------- run settings ---

# A scratch folder per run for the databases the harness writes (it makes its own folder inside), removed
# however the script ends. tmpfs when available: the SQL mode commits often and fsync on a disk costs 2-4x.
make_scratch() {
    local base=${TMPDIR:-}
    if [ -z "$base" ]; then
        if [ -d /dev/shm ] && [ -w /dev/shm ]; then base=/dev/shm; else base=/tmp; fi
    fi
    SCRATCH=$(mktemp -d "$base/sqlcipherkit-fuzz.XXXXXX")
    trap 'rm -rf "$SCRATCH"' EXIT
}

fuzzer_env() {
    RUN_ENV=(env TMPDIR="$SCRATCH" FUZZ_STATS=1 "UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}")
    if [ -x "$CLANG_DIR/llvm-symbolizer" ]; then RUN_ENV+=(ASAN_SYMBOLIZER_PATH="$CLANG_DIR/llvm-symbolizer"); fi
}

# "FUZZ_KNOWN_ISSUES=1 " when set, so that printed commands reproduce under the same harness behaviour.
known_prefix() {
    case ${FUZZ_KNOWN_ISSUES:-} in '' | 0) ;; *) printf 'FUZZ_KNOWN_ISSUES=%s ' "$FUZZ_KNOWN_ISSUES" ;; esac
}

# The sanitizer's or libFuzzer's one-line verdict from a log.
failure_summary() {
    local line
    line=$(grep -m 1 -E '^SUMMARY: ' "$1" || true)
    [ -n "$line" ] || line=$(grep -m 1 -E '==ERROR: |ERROR: libFuzzer' "$1" || true)
    printf '%s' "${line:-no sanitizer summary (see the log)}"
}

# --------------------------------------------------------------------------- regressions, differential ---

# The inputs of known findings (known-issues/: every file without an extension; the reports are *.md, their
# programs *.c). Each must run clean on this engine with the known-issue avoidance lifted: a finding that is fixed
# here (by upstream or by a local change of the pin) stays fixed. Exit status 1 names the input that failed.
run_regressions() {
    local inputs=() file log=$OUT/regressions.log rc failed
    for file in "$KNOWN_ISSUES"/*; do
        case $file in *.md | *.c) continue ;; esac
        [ -f "$file" ] && inputs+=("$file")
    done
    [ ${#inputs[@]} -gt 0 ] || die "no regression inputs in $KNOWN_ISSUES"
    echo "==> regression inputs: ${#inputs[@]} known findings from $KNOWN_ISSUES/ (avoidance lifted)"
    set +e
    # A time-out of 60 s, not the fuzzing runs' 10: these inputs are chosen for being heavy (the 4.6.1 OOM-path
    # input takes about 3 s of wall time on a loaded 2-core machine, and over 10 s at nice 19), and a regression
    # run must not fail on a slow machine; a hang still fails it.
    "${RUN_ENV[@]}" FUZZ_KNOWN_ISSUES=1 "$OUT/fuzz_engine" -timeout="${FUZZ_REGRESSION_TIMEOUT:-60}" \
        -rss_limit_mb=2048 -artifact_prefix="$SCRATCH/" "${inputs[@]}" >"$log" 2>&1
    rc=$?
    set -e
    if [ "$rc" -ne 0 ]; then
        failed=$(sed -n 's/^Running: //p' "$log" | tail -n 1)
        echo "fuzz.sh: FAILED: regression input $failed: $(failure_summary "$log") (log: $log)"
        echo "fuzz.sh: reproduce: FUZZ_KNOWN_ISSUES=1 $ROOT/Tests/Fuzz/fuzz.sh --reproduce $failed"
        return 1
    fi
    echo "fuzz.sh: regression inputs: all ${#inputs[@]} ran clean ($(grep -c '^Executed ' "$log") executed)"
}

# trigram_differential.c with SEED and PATTERNS: exit status 1 on a disagreement, on too few pairs answered
# through the index or matching rows (the program's minimums, which keep agreement from being trivial), or on a
# sanitizer report.
run_differential() {
    local seed=$1 patterns=$2 log=$OUT/differential.log rc verdict
    echo "==> differential test: LIKE/GLOB on trigram tables against a plain table (seed $seed, $patterns patterns)"
    set +e
    "${RUN_ENV[@]}" "$OUT/trigram_differential" "$seed" "$patterns" >"$log" 2>&1
    rc=$?
    set -e
    if [ "$rc" -ne 0 ]; then
        tail -n 40 "$log"
        # The program's own verdict when it gave one (a difference, a minimum not met), else the sanitizer's.
        verdict=$(grep -m 1 -E '^trigram_differential: (DIFFERENT ROWS|TOO FEW)' "$log" || true)
        [ -n "$verdict" ] || verdict=$(failure_summary "$log")
        echo "fuzz.sh: FAILED: differential test (seed $seed): $verdict (exit $rc; log: $log)"
        echo "fuzz.sh: reproduce: $ROOT/Tests/Fuzz/fuzz.sh --differential $seed $patterns"
        return 1
    fi
    grep '^trigram_differential: ' "$log"
}

# ------------------------------------------------------------------------------------------- actions ---

build

case $ACTION in
    build)
        echo "fuzz.sh: built $OUT/fuzz_engine"
        exit 0
        ;;

    seeds)
        make_scratch
        mkdir -p "$SEEDS"
        TMPDIR=$SCRATCH "$OUT/make-seeds" "$SEEDS"
        exit 0
        ;;

    regressions)
        make_scratch
        fuzzer_env
        run_regressions || exit 1
        exit 0
        ;;

    differential)
        make_scratch
        fuzzer_env
        run_differential "$DIFF_SEED" "$DIFF_PATTERNS" || exit 1
        exit 0
        ;;

    sql)
        make_scratch
        fuzzer_env
        set +e
        "${RUN_ENV[@]}" "$OUT/run_sql" "$SQL_TEXT" 2>&1 | tee "$OUT/sql.log"
        rc=${PIPESTATUS[0]}
        set -e
        [ "$rc" -eq 0 ] || echo "fuzz.sh: --sql: $(failure_summary "$OUT/sql.log") (exit $rc; log: $OUT/sql.log)"
        exit "$rc"
        ;;

    campaign | campaign-api)
        make_scratch
        fuzzer_env
        # shellcheck source=campaign.sh
        source "$FUZZ_SRC/campaign.sh"
        if [ "$ACTION" = campaign ]; then run_campaign; else run_api_campaign; fi
        exit $?
        ;;

    reproduce)
        make_scratch
        fuzzer_env
        LOG=$OUT/reproduce.log
        echo "==> running $REPRODUCE_FILE"
        set +e
        "${RUN_ENV[@]}" "$OUT/fuzz_engine" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$SCRATCH/" \
            "$REPRODUCE_FILE" 2>&1 | tee "$LOG"
        rc=${PIPESTATUS[0]}
        set -e
        if [ "$rc" -eq 0 ]; then
            echo "fuzz.sh: $REPRODUCE_FILE ran cleanly (no crash, sanitizer error, leak or timeout)"
        else
            echo "fuzz.sh: reproduced: $(failure_summary "$LOG") (exit $rc; log: $OUT/reproduce.log)"
        fi
        exit "$rc"
        ;;
esac

# run: the known findings and the differential test first (seconds), then the fuzzer.
compgen -G "$SEEDS/*" >/dev/null || die "no seeds in $SEEDS (regenerate them with --make-seeds)"
make_scratch
fuzzer_env
run_regressions || exit 1
run_differential "$DIFF_SEED" "$DIFF_PATTERNS" || exit 1
WORK=$OUT/corpus
ARTIFACTS=$OUT/artifacts
LOG=$OUT/fuzz.log
[ "$FRESH" -eq 0 ] || rm -rf "$WORK"
mkdir -p "$WORK" "$ARTIFACTS"
# The committed seeds are copied, never fuzzed in place: what libFuzzer adds stays under Vendor/build/.
cp "$SEEDS"/* "$WORK"/
seed_count=$(find "$SEEDS" -type f | wc -l)
before=$(find "$WORK" -type f | wc -l)

echo "==> fuzzing for ${SECONDS_TO_RUN}s: corpus $WORK ($before inputs), artifacts $ARTIFACTS/, log $LOG"
started=$SECONDS
set +e
# The full output goes to the log; the console skips libFuzzer's lines per new or reduced input (and per
# newly covered function) and its "recommended dictionary" (tokens it found useful).
"${RUN_ENV[@]}" "$OUT/fuzz_engine" \
    -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -dict="$OUT/fuzz.dict" -artifact_prefix="$ARTIFACTS/" -print_final_stats=1 \
    "$WORK" 2>&1 | tee "$LOG" | awk '
        /^###### Recommended dictionary/ { skip = 1 }
        !skip && !/^#[0-9]+[ \t]+(NEW|REDUCE) / && !/^\tNEW_FUNC/ { print; fflush() }
        /^###### End of recommended dictionary/ { skip = 0 }'
rc=${PIPESTATUS[0]}
set -e
elapsed=$((SECONDS - started))

artifact=$(sed -n 's/.*Test unit written to //p' "$LOG" | tail -n 1)
if [ "$rc" -ne 0 ] || [ -n "$artifact" ]; then
    if grep -q 'libFuzzer: run interrupted' "$LOG"; then
        echo "fuzz.sh: interrupted after ${elapsed}s (log: $LOG)"
        exit 130
    fi
    echo
    echo "fuzz.sh: FAILED after ${elapsed}s: $(failure_summary "$LOG")"
    if [ -n "$artifact" ]; then
        case $artifact in /*) ;; *) artifact=$ROOT/$artifact ;; esac
        echo "fuzz.sh: input: $artifact"
        echo "fuzz.sh: reproduce: $(known_prefix)$ROOT/Tests/Fuzz/fuzz.sh --reproduce $artifact"
    fi
    echo "fuzz.sh: full log: $LOG"
    exit 1
fi

final_stat() { sed -n "s/^stat::$1: *//p" "$LOG" | tail -n 1; }
last=$(grep -E '^#[0-9]+[[:space:]].* cov: ' "$LOG" | tail -n 1 || true)
field() { sed -n "s/.* $1: \([^ ]*\).*/\1/p" <<<"$last"; }
after=$(find "$WORK" -type f | wc -l)

# A clean exit proves nothing unless inputs ran, and ran deep: at least MIN_RUNS inputs (5 a second of the
# requested time, a fifth of what this target ran on a loaded 2-core machine), and in both file modes files
# opened, keyed, read and integrity-checked (the harness's counters, printed at exit with FUZZ_STATS=1). A
# zero means the harness, its key or the seeds no longer match the engine: the run fuzzed error paths only.
MIN_RUNS=${FUZZ_MIN_RUNS:-$((SECONDS_TO_RUN * 5))}
shallow=()
runs=$(final_stat number_of_executed_units)
[ "${runs:-0}" -ge "$MIN_RUNS" ] || shallow+=("${runs:-no} inputs ran, fewer than the $MIN_RUNS required")
# "fuzz_engine: mode N (...): A inputs, B opened, C keyed, D read sqlite_schema, E integrity_check ok, ..."
counter() { sed -n "s/^fuzz_engine: mode $1 ([^)]*):.* \([0-9][0-9]*\) $2,.*/\1/p" "$LOG" | tail -n 1; }
for mode in 0 1; do
    for name in inputs opened keyed 'read sqlite_schema' 'integrity_check ok'; do
        value=$(counter "$mode" "$name")
        [ "${value:-0}" -gt 0 ] || shallow+=("mode $mode: ${value:-no} '$name' in the harness's counters")
    done
done
sql_inputs=$(sed -n 's/^fuzz_engine: mode 2 (SQL): \([0-9][0-9]*\) inputs,.*/\1/p' "$LOG" | tail -n 1)
[ "${sql_inputs:-0}" -gt 0 ] || shallow+=("mode 2: ${sql_inputs:-no} SQL inputs in the harness's counters")
if [ ${#shallow[@]} -gt 0 ]; then
    echo
    echo "fuzz.sh: FAILED after ${elapsed}s: the run was too shallow to count:"
    printf 'fuzz.sh:   - %s\n' "${shallow[@]}"
    echo "fuzz.sh: full log: $LOG"
    exit 1
fi

printf 'fuzz.sh: OK: %s runs in %ss (%s/s), coverage %s edges / %s features, corpus %s inputs (%s seeds, %s new this run; libFuzzer corpus %s), peak RSS %s MB\n' \
    "$(final_stat number_of_executed_units)" "$elapsed" "$(final_stat average_exec_per_sec)" "$(field cov)" \
    "$(field ft)" "$after" "$seed_count" "$((after - before))" "$(field corp)" "$(final_stat peak_rss_mb)"
