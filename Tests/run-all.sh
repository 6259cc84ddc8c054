#!/usr/bin/env bash
# The test command (README, docs/TESTING.md, .ci/run): builds the artifact, or finds it up to date, with the tools
# the downstream tests link with; checks the documents (Tests/Docs: their links, and the DocC catalogues with no
# warning); runs every Swift Testing suite (the API, the reliability suite with its child processes, the CLI, the
# build pipeline, interoperability with an independent SQLCipher build); then runs
# SQLCipher's own test/sqlcipher.test on a harness built from the shipped engine (Tests/Upstream/harness.sh); then
# SQLite's own test files for what the build changes (FTS5, temporary storage, WAL, journal, pager, and the crash
# files with every connection keyed) on that harness; then the aarch64 engine under qemu (Tests/Emulation: a C
# consumer, files exchanged with x86_64, three upstream files on an aarch64 testfixture); then fuzzes the engine for
# 60 seconds under ASan and UBSan; then runs the promises under every cipher configuration on the engine built with
# ASan and UBSan (Tests/Sanitized, with its controls). From the upstream part on, the Fluent and SQLKit driver (Tests/FluentDriver:
# sql-kit's SQLBenchmarker and fluent-kit's FluentBenchmarker on encrypted databases) and the app examples
# (Tests/Examples: FluentDriverConsumer, VaporTodo and HummingbirdTodo, their HTTP tests and servers on encrypted
# files) build and run in the background beside them, counted at the end.
#
# Every part runs, whatever the parts before it came to; the last line is one summary of all of them,
#   SUMMARY: N passed, N failed, N skipped; failed: …; skipped: … [what each part counted]
# (Swift Testing's tests, each upstream test file, the fuzz run), and the exit status is 1 when anything failed.
# Only a failed build stops it early, as nothing can run without the artifact; it still ends with that line.
#
# Every part must also count at least what it counted when it was last changed (MINIMUM below): a part that passes
# having run less (a test target not built, a file list cut, a suite skipped whole) fails as shrunk.
#
# The whole run is the default and the only one CI takes. A narrower run for local work is asked for by name:
#   --only PART[,PART…]   only those parts (docs, swift, pipeline, upstream, sqlite, emulation, fuzz, sanitized, driver,
#                         apps),
#                         after the build
#   --narrow              keep the variables that narrow a part (NARROWING below) when they are set; without this
#                         flag the command refuses to start while one of them is set
# and the SUMMARY line then begins "NARROWED (…):", saying how.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The variables that narrow or redirect a part: upstream's file list and target, the app examples' list, the fuzz
# run's depth and its steering, the engine the file matrix reads, the artifact the tests read.
NARROWING=(UPSTREAM_FILES UPSTREAM_TARGET UPSTREAM_HARNESS_SOURCE SQLITE_TESTS_FILES APP_EXAMPLES FUZZ_MIN_RUNS
           FUZZ_KNOWN_ISSUES MATRIX_SQLCIPHERKIT_ENGINE SQLCIPHERKIT_DIST)
ALL_PARTS="docs swift pipeline upstream sqlite emulation fuzz sanitized driver apps"
ONLY=$ALL_PARTS NARROWED=()
while [ $# -gt 0 ]; do
    case $1 in
        --only)
            [ $# -ge 2 ] || { echo "run-all.sh: --only needs a list of parts ($ALL_PARTS)" >&2; exit 2; }
            ONLY=${2//,/ }
            for part in $ONLY; do
                [[ " $ALL_PARTS " == *" $part "* ]] || { echo "run-all.sh: no part '$part' (parts: $ALL_PARTS)" >&2; exit 2; }
            done
            NARROWED+=("only: $ONLY")
            shift 2 ;;
        --narrow) NARROW=1; shift ;;
        -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "run-all.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
for variable in "${NARROWING[@]}"; do
    [ -n "${!variable+set}" ] || continue
    if [ "${NARROW:-0}" = 1 ]; then
        NARROWED+=("$variable=${!variable}")
    else
        echo "run-all.sh: $variable is set ('${!variable}'), which narrows or redirects a part of the test command:" \
            "unset it, or ask for a narrower run with --narrow (the summary then says so)" >&2
        exit 2
    fi
done
# Whether part $1 runs.
wanted() { [[ " $ONLY " == *" $1 "* ]]; }

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-run-all.XXXXXX") || exit 1
trap '[ -z "${FLUENT_STAGE:-}" ] || pkill -P "$FLUENT_STAGE" 2>/dev/null; rm -rf "$LOGS"' EXIT
PASSED=0 FAILED=0 SKIPPED=0
FAILED_NAMES=() SKIPPED_NAMES=() PARTS=()

# Runs a part, its output shown and kept in $LOGS/$1.log; returns its exit status. Its wall time goes to TIMES
# (printed before the summary, to keep the whole under the 45 minutes docs/TESTING.md gives it on 2 cores).
TIMES=()
run_part() {
    local log=$LOGS/$1.log label=$1 start=$SECONDS status
    shift
    "$@" 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    TIMES+=("$label $((SECONDS - start)) s")
    return "$status"
}

failed() { FAILED=$((FAILED + 1)); FAILED_NAMES+=("$1"); }

# One line at most 200 characters long, for the summary.
short() { tr '\n' ' ' <<<"$1" | sed -E 's/ +$//' | cut -c1-200; }

# The names in "$@", joined with "; ", the first 10 only.
names() {
    local joined
    joined=$(printf '%s; ' "${@:1:10}")
    joined=${joined%; }
    [ $# -le 10 ] || joined+="; and $(($# - 10)) more (above)"
    printf '%s' "$joined"
}

# "$@" joined with ", " (an item may hold a comma of its own).
joined() {
    local text
    text=$(printf '%s, ' "$@")
    printf '%s' "${text%, }"
}

# The least each part must count: what it counted when it was last changed (raise it with the part; lower it only
# with the reason in the commit). swift test and BuildPipelineTests count Swift Testing's tests; the upstream parts
# and SQLite's files their files; the emulated, driver and app parts their ok: lines; the documents their links and the docc check.
declare -A MINIMUM=(
    ["swift test"]=235 ["swift test (async suites)"]=26 ["blocking waits"]=7 ["swift test BuildPipelineTests"]=56
    [upstream]=11 ["upstream (reference provider)"]=11 ["upstream (aarch64, qemu)"]=3 ["sqlite files"]=199
    ["sqlite controls"]=15
    ["emulation (aarch64)"]=25 ["Fluent driver"]=54 ["app examples"]=44 ["docs (links, docc)"]=370
    ["sanitized (ASan, UBSan)"]=9
)

# A failure unless part $1 counted $2, at least its MINIMUM; $3 names what is counted.
require_minimum() {
    local label=$1 count=$2 noun=$3 minimum=${MINIMUM[$1]:-1}
    [ "$count" -lt "$minimum" ] || return 0
    # With --narrow a part may run less by request; the summary says the run was narrowed.
    if [ "${NARROW:-0}" = 1 ]; then
        echo "run-all.sh: $label: $count $noun, fewer than its $minimum (accepted: --narrow)"
    else
        failed "$label: $count $noun, fewer than the $minimum it counts (the part shrank, or some of it did not run)"
    fi
}

# The last line of log $1 matching the extended regex $2, or else its last line.
last_line() {
    local found
    found=$(grep -E "$2" "$1" 2>/dev/null | tail -n1)
    [ -n "$found" ] || found=$(tail -n1 "$1" 2>/dev/null)
    printf '%s' "$found"
}

summary() {
    local line="SUMMARY: $PASSED passed, $FAILED failed, $SKIPPED skipped"
    [ ${#NARROWED[@]} = 0 ] || line="NARROWED ($(joined "${NARROWED[@]}")): $line"
    echo
    echo "TIMES: $(joined ${TIMES[@]+"${TIMES[@]}"}); in all $SECONDS s"
    [ ${#FAILED_NAMES[@]} -eq 0 ] || line+="; failed: $(names "${FAILED_NAMES[@]}")"
    [ ${#SKIPPED_NAMES[@]} -eq 0 ] || line+="; skipped: $(names "${SKIPPED_NAMES[@]}")"
    [ ${#PARTS[@]} -eq 0 ] || line+=" [$(joined "${PARTS[@]}")]"
    echo
    echo "$line"
}

# Counts one `swift test` run from what Swift Testing prints (without colours, as it prints into a pipe):
#   ✔ Test NAME passed after S seconds.          ✘ Test NAME [with N test cases] failed after S seconds …
#   ➜ Test NAME skipped: "REASON"                ➜ Suite "NAME" skipped: "REASON" (then each of its tests)
#   ✔/✘ Test run with N tests in M suites passed/failed after S seconds [with K issues].
# A run without that last line (it did not build, or crashed) is a failure; so is a non-zero exit.
count_swift_run() {
    local label=$1 status=$2 text tests passed failed skipped line reason known suite_reasons=()
    text=$(sed -E 's/\x1b\[[0-9;]*m//g' "$LOGS/$label.log")
    tests=$(sed -nE 's/^[^ ]+ Test run with ([0-9]+) tests? .*/\1/p' <<<"$text" | tail -n1)
    passed=$(grep -E '^[^ ]+ Test .+ passed after [0-9.]+ seconds' <<<"$text" | grep -cvE '^[^ ]+ Test run with ')
    PASSED=$((PASSED + passed))
    failed=0
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        failed=$((failed + 1))
        failed "$(short "$label: $line")"
    done < <(grep -E '^[^ ]+ Test .+ failed after [0-9.]+ seconds' <<<"$text" | grep -vE '^[^ ]+ Test run with ' \
        | sed -E 's/^[^ ]+ Test (.+) failed after .*/\1/; s/ with [0-9]+ test cases?$//')
    skipped=0
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        suite_reasons+=("${line#*skipped}")
        SKIPPED_NAMES+=("$(short "$label: Suite ${line%% skipped*}${line#*skipped}")")
    done < <(sed -nE 's/^[^ ]+ Suite (.+ skipped.*)/\1/p' <<<"$text")
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        skipped=$((skipped + 1))
        reason=${line#*skipped}
        # A test of a skipped suite is counted, and named by its suite above (the same reason).
        for known in ${suite_reasons[@]+"${suite_reasons[@]}"}; do [ "$known" != "$reason" ] || continue 2; done
        SKIPPED_NAMES+=("$(short "$label: ${line%% skipped*}$reason")")
    done < <(sed -nE 's/^[^ ]+ Test (.+ skipped.*)/\1/p' <<<"$text")
    SKIPPED=$((SKIPPED + skipped))
    if [ -z "$tests" ]; then
        failed "$label: exit $status and no 'Test run with N tests' line (it did not build, or crashed)"
        PARTS+=("$label: no test run")
        return
    fi
    if [ "$status" != 0 ] && [ "$failed" = 0 ]; then
        failed "$label: exit $status with no failed test"
    fi
    require_minimum "$label" "$tests" "tests"
    PARTS+=("$label: $tests test$([ "$tests" = 1 ] || echo s)")
}

# Counts a part that prints one "ok: NAME" or "FAIL: NAME" line per check (Tests/Support/checks.sh, the emulated
# part): $1 its log's name, $2 its label, $3 what its ok: lines count, $4 its exit status. Exit 0: one pass per
# ok: line; otherwise one failure per FAIL: line (or one saying there was none).
count_checks() {
    local log=$LOGS/$1.log label=$2 noun=$3 status=$4 count line
    if [ "$status" = 0 ]; then
        count=$(grep -c '^ok: ' "$log")
        PASSED=$((PASSED + count))
        PARTS+=("$label: $count $noun")
        require_minimum "$label" "$count" "$noun"
    else
        while IFS= read -r line; do failed "$label: $(short "${line#FAIL: }")"; done < <(grep '^FAIL: ' "$log" 2>/dev/null)
        grep -q '^FAIL: ' "$log" 2>/dev/null || failed "$label: exit $status with no FAIL line"
        PARTS+=("$label: failed")
    fi
}

if ! run_part build ./build-sqlcipher.sh --test-tools; then
    failed "the build (./build-sqlcipher.sh --test-tools): nothing else can run without it"
    summary
    exit 1
fi

# The documents (Tests/Docs/run-docs.sh): every Markdown document and DocC article git lists (both catalogues, the
# benchmark analyses), each relative link naming a file that exists, each #anchor a heading of its file (GitHub's
# slugs), each <doc:> an article of its catalogue and each symbol link's names declared in its module, one "ok:" or
# "FAIL:" line per link (check-links.py); then `docc convert` of the SQLCipherKit catalogue with no warning, on
# symbol graphs built in .build-docs (check-docc.sh), one line. Each runs its planted controls first (a dead link,
# anchor, <doc:> and symbol link in a synthetic article of a temporary copy must each fail; one line each). Counted
# as the emulated part's checks are. (The FluentSQLCipherDriver catalogue's `docc convert` is in the driver part.)
if wanted docs; then
    run_part docs Tests/Docs/run-docs.sh
    count_checks docs "docs (links, docc)" "links and checks" $?
fi

# Three runs: the build-pipeline tests spend minutes waiting on child builds (consumer packages, a second
# checkout), and on 2 cores they would hold the threads the other suites need; apart, neither starves. The suites
# whose tests are async (they await the pool's and the queue's work) run first, in a process of their own: in the
# same process as the suites that wait synchronously on child processes (the CLI, the interop suite's pip, the
# multi-process suite), they waited behind them for the cooperative pool's two threads and hit their time limits
# on a loaded machine (issue 49), while alone they take seconds.
ASYNC_SUITES='HangGuardTests|WriterSessionTests|DatabasePoolTests|WorkerThreadTests|DatabaseQueueTests|ForeignKeyTests|SQLRoutesAsyncTests'
if wanted swift; then
    # That split holds only while every async test is in a listed suite and no listed suite's test waits
    # synchronously on the cooperative pool (Tests/Support/check_blocking_waits.py, which first shows on planted
    # inputs, a waitUntilExit among them, that it catches each case).
    run_part "blocking waits" python3 Tests/Support/check_blocking_waits.py
    count_checks "blocking waits" "blocking waits" "checks" $?
    run_part "swift test (async suites)" swift test --filter "$ASYNC_SUITES"
    count_swift_run "swift test (async suites)" $?
    run_part "swift test" swift test --skip BuildPipelineTests --skip "$ASYNC_SUITES"
    count_swift_run "swift test" $?
fi
if wanted pipeline; then
    run_part "swift test BuildPipelineTests" swift test --filter BuildPipelineTests
    count_swift_run "swift test BuildPipelineTests" $?
fi

# The Fluent and SQLKit driver and the apps on it run in the background, beside the upstream, emulated and fuzz
# parts below: those leave a core idle most of the time (a test file runs on one core, and so does compiling
# SQLite's amalgamation), and the Swift builds of the driver and the apps fill it. They share one build folder,
# so that swift-nio, fluent-kit, sql-kit and the rest compile once for all of them. Their output is shown, and
# counted, when they end (after the fuzz part).
#   driver: Tests/FluentDriver/run-driver-tests.sh: sql-kit's SQLBenchmarker, every FluentBenchmarker group on
#     encrypted databases, the driver's own tests, one SQLite in its binary, and its DocC catalogue and
#     SQLCipherSQLKit's doc comments converted with no warning (Tests/Docs/check-docc.sh --driver, with its control).
#   apps: Tests/Examples/run-app-examples.sh: Examples/FluentDriverConsumer, VaporTodo and HummingbirdTodo built
#     outside the repository on the two generated packages as tagged git repositories; their tests, their
#     servers with the key from a file or a systemd credential, the files encrypted.
fluent_stage() {
    local part script start
    for part in driver apps; do
        wanted "$part" || continue
        case $part in
            driver) script=Tests/FluentDriver/run-driver-tests.sh ;;
            apps) script=Tests/Examples/run-app-examples.sh ;;
        esac
        start=$SECONDS
        FLUENT_SCRATCH=$LOGS/fluent-build "$script" >"$LOGS/$part.log" 2>&1
        echo $? >"$LOGS/$part.status"
        echo "$part $((SECONDS - start)) s (in the background)" >>"$LOGS/background.times"
    done
}
fluent_stage &
FLUENT_STAGE=$!

# Counts a background part from its "ok: NAME" and "FAIL: NAME" lines (count_checks), after showing its output.
count_background_part() {
    local part=$1 label=$2
    echo
    echo "==> $label (ran in the background; its output:)"
    cat "$LOGS/$part.log" 2>/dev/null
    count_checks "$part" "$label" "tests and checks" "$(cat "$LOGS/$part.status" 2>/dev/null || echo "no status")"
}

# Upstream: one count per test file, the suite runner included (its lines "  FILE  N tests, E errors", printed
# only when every test passed or differed as Tests/Upstream/sqlite-tests.txt lists); on SQLCipherKit's crypto
# provider, then on SQLCipher's reference one (build-sqlcipher.sh --crypto-provider reference; its harness is kept
# apart, in Vendor/build/upstream-reference/).
run_upstream() {
    local label=$1
    shift
    run_file_part "$label" '^  sqlcipher[^ ]*\.test +[0-9]+ tests, [0-9]+ errors' env "$@" Tests/Upstream/run-upstream.sh
}

# Runs part $1 (the command in the arguments after $2) and counts its log's lines that match the pattern $2, one per
# test file that passed; a failed run is reported with its script's last "SCRIPT: error: " line (the script is the
# command's last word).
run_file_part() {
    local label=$1 pattern=$2 files script
    shift 2
    script=$(basename "${!#}")
    if run_part "$label" "$@"; then
        files=$(grep -cE "$pattern" "$LOGS/$label.log")
        PASSED=$((PASSED + files))
        PARTS+=("$label: $files files")
        require_minimum "$label" "$files" "files passed"
    else
        failed "$label: $(short "$(last_line "$LOGS/$label.log" "^$script: error: ")")"
        PARTS+=("$label: failed")
    fi
}
if wanted upstream; then
    run_upstream upstream UPSTREAM_CRYPTO_PROVIDER=sqlcipherkit
    run_upstream "upstream (reference provider)" UPSTREAM_CRYPTO_PROVIDER=reference
fi

# SQLite's own test files on the same harness (Tests/Upstream/run-sqlite-tests.sh): FTS5, temporary storage, WAL,
# journal and pager files plain, the crash files with every connection keyed, each against the test count, the
# error count and the exact differences Tests/Upstream/sqlite-tests.txt records; one count per file (its lines
# "  MODE FILE  N tests, …"). Before any file runs, the script shows its checker failing where it must (planted
# failures, a planted new upstream file: its "ok: control:" lines) and the list accounting for every file of its
# groups ("ok: accounting"): those ok: lines are counted too, as "sqlite controls".
if wanted sqlite; then
    run_file_part "sqlite files" '^  (plain|keyed) +[^ ]+\.test +[0-9]+ tests, ' Tests/Upstream/run-sqlite-tests.sh
    sqlite_controls=$(grep -c '^ok: ' "$LOGS/sqlite files.log")
    if grep -q '^FAIL: ' "$LOGS/sqlite files.log"; then
        while IFS= read -r line; do failed "sqlite controls: $(short "${line#FAIL: }")"; done \
            < <(grep '^FAIL: ' "$LOGS/sqlite files.log")
    else
        PASSED=$((PASSED + sqlite_controls))
        PARTS+=("sqlite controls: $sqlite_controls checks")
        require_minimum "sqlite controls" "$sqlite_controls" "checks"
    fi
fi

# The aarch64 engine under qemu-user-static (Tests/Emulation): the C consumer on the bundle's aarch64 variant,
# files exchanged with x86_64 both ways, the arm64 pkg-config file; one count per check ("ok:" lines, and the
# "EMULATION: N passed, N failed" line). Then SQLCipher's own core, compatibility and rekey files on an aarch64
# testfixture (counted as the upstream parts are).
if wanted emulation; then
    run_part emulation Tests/Emulation/run-aarch64.sh
    count_checks emulation "emulation (aarch64)" "checks" $?
    # The three files side by side: each qemu process is one core's work, and the machine has two.
    run_upstream "upstream (aarch64, qemu)" UPSTREAM_TARGET=aarch64 UPSTREAM_JOBS=3 \
        UPSTREAM_FILES="sqlcipher-core.test sqlcipher-compatibility.test sqlcipher-rekey.test"
fi

# The fuzz part: the regression inputs, the trigram differential and a 60-second run, each reporting its own line
# (fuzz.sh itself fails a run too shallow to count).
if wanted fuzz; then
    if run_part fuzz Tests/Fuzz/fuzz.sh 60; then
        if grep -qE '^fuzz.sh: OK: [0-9]+ runs' "$LOGS/fuzz.log" \
            && grep -qE '^fuzz.sh: regression inputs: all [1-9][0-9]* ran clean' "$LOGS/fuzz.log"; then
            PASSED=$((PASSED + 1))
            PARTS+=("fuzz: $(sed -nE 's/^fuzz.sh: OK: ([0-9]+ runs).*/\1/p' "$LOGS/fuzz.log")")
        else
            failed "fuzz: exit 0 without its 'OK: N runs' and 'regression inputs: all N ran clean' lines"
            PARTS+=("fuzz: incomplete")
        fi
    else
        failed "fuzz: $(short "$(last_line "$LOGS/fuzz.log" '^fuzz.sh: (FAILED|error)')")"
        PARTS+=("fuzz: failed")
    fi
fi

# The sanitizer part (Tests/Sanitized/run-sanitized.sh, issue 43): the engine built with AddressSanitizer and
# UndefinedBehaviorSanitizer; its controls (upstream's VACUUM INTO must draw a report; so must a read past a heap
# block in the engine the Swift binaries link), the VACUUM INTO reproduction clean on SQLCipherKit's engine, and the
# Swift suites of the promises under every cipher configuration linked against it. One count per check.
if wanted sanitized; then
    run_part sanitized Tests/Sanitized/run-sanitized.sh
    count_checks sanitized "sanitized (ASan, UBSan)" "checks" $?
fi

wait "$FLUENT_STAGE"
! wanted driver || count_background_part driver "Fluent driver"
! wanted apps || count_background_part apps "app examples"
while IFS= read -r line; do TIMES+=("$line"); done < <(cat "$LOGS/background.times" 2>/dev/null)

summary
[ "$FAILED" = 0 ]
