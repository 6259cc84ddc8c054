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
# sql-kit's SQLBenchmarker and fluent-kit's FluentBenchmarker on encrypted databases), the observability bridge
# (Tests/Observability: logs, metrics and traces; nothing secret in them) and the app examples
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
#                         observability, apps),
#                         after the build
#   --narrow              keep the variables the project reads (PROJECT_VARIABLES, CLEARED_VARIABLES below) when they
#                         are set, and accept a part that counts less than its MINIMUM or the interop suite's skip
# and the SUMMARY line then begins "NARROWED (…):", saying how (--narrow on its own says so too).
#   --dry-run             check the arguments and the environment, print the variables the parts would get
#                         ("environment: NAME…") and the summary's first words, and stop before the build
#   --self-test           run the counting below on recorded and synthetic logs (one ok:/FAIL: line each), and stop
#   --list-variables      print the variables the command refuses and those it clears, and stop
# The last three are for the command's own check (Tests/Support/check_test_command.py, in the swift part).
#
# The environment (issue 45): a run starts from the project's defaults. Every variable the project defines and
# reads (its prefixes and names below: POWERLOSS_CUTS=5 makes 500 power cuts 5, UPSTREAM_FILES runs three files,
# SQLCIPHERKIT_CRYPTO_PROVIDER builds the other engine, SQLCIPHERKIT_DIST_DIR writes the artifact where the tests
# do not read it…) makes the command refuse to start while it is set; a tool's or the system's variable that the
# project reads and that changes what a part does or decides (ASAN_OPTIONS, SQLITE_TMPDIR, a systemd
# CREDENTIALS_DIRECTORY…) is cleared. --narrow keeps both, and the summary names each one kept. Which variables the
# sources read is not left to this list: check_test_command.py finds them (getenv, environment[…], os.environ, ${…})
# and fails when one is neither here nor the system's own (PATH, HOME, TMPDIR, CI…: its EXEMPT, with the reasons).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The project's own variables: refused when set, unless --narrow.
PROJECT_PREFIXES=(SQLCIPHERKIT_ SQLCIPHER_ POWERLOSS_ RELIABILITY_ UPSTREAM_ SQLITE_TESTS_ FUZZ_ MATRIX_ APP_
                  BENCHMARK_ PROFILE_ PRETEND_)
PROJECT_VARIABLES=(TODO_DATABASE TODO_KEY_FILE TODO_KEY_CREDENTIAL TODO_KEY_FORMAT INTEROP_KEY AESPROXY_REPORT
                   DIFFERENTIAL_REQUIRE_WHEEL ENGINE_CONSUMER_KEY GRDB_ON_SQLCIPHER_KEY RELEASE_CONSUMER_KEY
                   FLUENT_CONSUMER_KEY FLUENT_BENCHMARK_DIR FLUENT_SCRATCH LOAD_LOG_LEVEL QEMU_AARCH64_CPU ARM64_CC)
# A tool's or the system's variables that the project reads and that change a verdict: cleared, unless --narrow.
# The sanitizers' options (halt_on_error=0 or detect_leaks=0 turn a report into nothing), SQLite's temporary folder
# (the spill checks look there), systemd's credentials folder (the key-source tests expect none outside a unit), the
# servers' log level (the key-in-no-output checks read their output), OpenTelemetry's exporter endpoints (the apps
# export their traces to the test's own receiver only when the test sets one).
CLEARED_VARIABLES=(ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS SQLITE_TMPDIR CREDENTIALS_DIRECTORY LOG_LEVEL
                   OTEL_EXPORTER_OTLP_ENDPOINT OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
# And every other OpenTelemetry variable swift-otel reads in the apps (OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none
# stop their tracing from starting, OTEL_TRACES_SAMPLER=always_off leaves the traces check nothing, a compression the
# test's receiver does not read…).
CLEARED_PREFIXES=(OTEL_)
ALL_PARTS="docs swift pipeline upstream sqlite emulation fuzz sanitized driver observability apps"
ONLY=$ALL_PARTS NARROWED=() NARROW=0 MODE=run FLUENT_STAGE=
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
        --dry-run) MODE=dry-run; shift ;;
        --self-test) MODE=self-test; shift ;;
        --list-variables) MODE=list; shift ;;
        -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "run-all.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if [ "$MODE" = list ]; then
    echo "prefixes: ${PROJECT_PREFIXES[*]}"
    echo "refused: ${PROJECT_VARIABLES[*]}"
    echo "cleared: ${CLEARED_VARIABLES[*]}"
    exit 0
fi
# Whether $1 is one of the project's variables.
project_variable() {
    local prefix
    for prefix in "${PROJECT_PREFIXES[@]}"; do [[ $1 != "$prefix"* ]] || return 0; done
    [[ " ${PROJECT_VARIABLES[*]} " == *" $1 "* ]]
}
[ "$NARROW" = 0 ] || NARROWED+=("--narrow")
REFUSED=()
while IFS= read -r variable; do
    cleared=0
    [[ " ${CLEARED_VARIABLES[*]} " != *" $variable "* ]] || cleared=1
    for prefix in "${CLEARED_PREFIXES[@]}"; do [[ $variable != "$prefix"* ]] || cleared=1; done
    if project_variable "$variable" || [ "$cleared" = 1 ]; then
        if [ "$NARROW" = 1 ]; then
            # A key's value is never printed (INTEROP_KEY, TODO_KEY_FILE's neighbours…): its name says it was kept.
            if [[ $variable == *KEY* ]]; then NARROWED+=("$variable (set)"); else NARROWED+=("$variable=${!variable}"); fi
        elif project_variable "$variable"; then
            REFUSED+=("$variable")
        else
            echo "run-all.sh: cleared $variable: it changes what a part does or decides (--narrow keeps it)"
            unset "$variable"
        fi
    fi
done < <(compgen -e | sort)
if [ ${#REFUSED[@]} -gt 0 ] && [ "$MODE" != self-test ]; then
    echo "run-all.sh: refused: ${REFUSED[*]}" >&2
    echo "run-all.sh: these variables of the project narrow, redirect or steer a part of the test command, which" \
        "starts from the project's defaults: unset them, or ask for a narrower run with --narrow (the summary then" \
        "says so)" >&2
    exit 2
fi
# The interop suite must run (CI's policy, now the command's own): its skip when no package index answers fails it,
# unless --narrow keeps SQLCIPHERKIT_INTEROP_OFFLINE=1 (an expected skip: EXPECTED_SKIPS below).
[ -n "${SQLCIPHERKIT_REQUIRE_INTEROP+set}" ] || export SQLCIPHERKIT_REQUIRE_INTEROP=1
# Whether part $1 runs.
wanted() { [[ " $ONLY " == *" $1 "* ]]; }

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-run-all.XXXXXX") || exit 1
trap '[ -z "$FLUENT_STAGE" ] || pkill -P "$FLUENT_STAGE" 2>/dev/null; rm -rf "$LOGS"' EXIT
PASSED=0 FAILED=0 SKIPPED=0
FAILED_NAMES=() SKIPPED_NAMES=() PARTS=()

# Runs a part, its output shown and kept in $LOGS/$1.log; returns its exit status. Its wall time goes to TIMES
# (printed before the summary, to keep the whole under the 45 minutes docs/TESTING.md gives it on 2 cores).
TIMES=()
run_part() {
    local log=$LOGS/$1.log label=$1 start=$SECONDS status pid
    shift
    # The part writes to its log, a regular file, and tail shows it as it grows: not through a pipe, whose writes a
    # signal (SIGCHLD from the processes tests start) or a full buffer can cut short. A stop's CI log once lost 52
    # of swift test's "passed" lines at once while its own total said all 251 passed; the part then counted 199.
    "$@" >"$log" 2>&1 &
    pid=$!
    tail -n +1 -s 0.5 --pid="$pid" -f "$log"
    wait "$pid"
    status=$?
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
# with the reason in the commit). swift test and BuildPipelineTests count Swift Testing's tests that passed (not
# "Test run with N tests", which counts skipped ones too); the upstream parts and SQLite's files their files; the
# command's own check (test command) and the emulated, driver and app parts their ok: lines; the documents their links and the docc check.
declare -A MINIMUM=(
    ["swift test"]=277 ["swift test (async suites)"]=57 ["blocking waits"]=7 ["swift test BuildPipelineTests"]=57
    ["test command"]=22
    [upstream]=11 ["upstream (reference provider)"]=11 ["upstream (aarch64, qemu)"]=3 ["sqlite files"]=199
    ["sqlite controls"]=15
    ["emulation (aarch64)"]=25 ["Fluent driver"]=56 ["observability"]=9 ["app examples"]=88 ["docs (links, docc)"]=434
    ["sanitized (ASan, UBSan)"]=10
)

# A failure unless part $1 counted $2, at least its MINIMUM; $3 names what is counted.
require_minimum() {
    local label=$1 count=$2 noun=$3 minimum=${MINIMUM[$1]:-1}
    [ "$count" -lt "$minimum" ] || return 0
    # With --narrow a part may run less by request; the summary says the run was narrowed.
    if [ "$NARROW" = 1 ]; then
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

# The skips a Swift part may have: a skipped test that matches none of these fails its part (issue 45: a suite
# that skips itself whole passed before, and its tests counted toward the part's minimum). Each entry is
# "SUITE OR TEST NAME|WHEN|REASON", WHEN a condition that must hold in this run. In a normal run nothing skips (the
# fresh-clone runs of issues 44 and 49: 0 skipped); the one skip the sources allow is the interop suite's, when no
# package index answers pip, and it is expected only when asked for by name: --narrow with
# SQLCIPHERKIT_INTEROP_OFFLINE=1 (otherwise SQLCIPHERKIT_REQUIRE_INTEROP, which this command sets, turns the offline
# case into a failure of the suite, and any skip there fails the part). The expected skip is counted as skipped, named
# in the summary, and makes it NARROWED.
EXPECTED_SKIPS=(
    'Interoperability with an independent SQLCipher build (sqlcipher3)|interop_offline|no package index answered pip, and the run asked to go on without the interop suite (--narrow, SQLCIPHERKIT_INTEROP_OFFLINE=1)'
)
# Whether the interop suite's offline skip was asked for: kept by --narrow, and true as the suite reads it.
interop_offline() {
    [ "$NARROW" = 1 ] && [[ ${SQLCIPHERKIT_INTEROP_OFFLINE:-} =~ ^[[:space:]]*[^[:space:]] ]] \
        && [[ ! ${SQLCIPHERKIT_INTEROP_OFFLINE,,} =~ ^[[:space:]]*(0|false|no|off)[[:space:]]*$ ]]
}

# Splits Swift Testing's 'NAME skipped: "REASON"' ($1; NAME quoted when it is a display name, and it may hold the
# word "skipped" itself) into SKIP_NAME (unquoted) and SKIP_REASON.
split_skip() {
    local pattern='^(.*) skipped(: "(.*)")?\.?$'
    if [[ $1 =~ $pattern ]]; then
        SKIP_NAME=${BASH_REMATCH[1]} SKIP_REASON=${BASH_REMATCH[3]:-no reason given}
    else
        SKIP_NAME=$1 SKIP_REASON="no reason given"
    fi
    [[ $SKIP_NAME != \"*\" ]] || { SKIP_NAME=${SKIP_NAME#\"}; SKIP_NAME=${SKIP_NAME%\"}; }
}

# The reason an expected skip of the test or suite named $1 (quoted as Swift Testing prints it, or not) has in this
# run; fails when the skip is not expected.
expected_skip() {
    local name=$1 entry
    for entry in "${EXPECTED_SKIPS[@]}"; do
        local listed when reason
        IFS='|' read -r listed when reason <<<"$entry"
        [ "$listed" = "$name" ] && "$when" && { printf '%s' "$reason"; return 0; }
    done
    return 1
}

# Counts one `swift test` run from what Swift Testing prints (without colours, as it prints into a pipe):
#   ✔ Test NAME passed after S seconds.          ✘ Test NAME [with N test cases] failed after S seconds …
#   ➜ Test NAME skipped: "REASON"                ➜ Suite "NAME" skipped: "REASON" (then each of its tests)
#   ✔/✘ Test run with N tests in M suites passed/failed after S seconds [with K issues].
# What counts toward the part's MINIMUM is the tests that passed: "Test run with N tests" counts skipped ones too
# (recorded: 2 passed and 3 skipped print "Test run with 5 tests … passed", exit 0). A skipped test fails the part
# unless it is an expected skip (EXPECTED_SKIPS), or belongs to a suite that is; a suite skipped whole is named once.
# A run without its last line (it did not build, or crashed) is a failure; so is a non-zero exit.
count_swift_run() {
    local label=$1 status=$2 text tests passed failed skipped=0 line name reason expected_reason suite skipped_suites=()
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
    # Suites skipped whole: each named once, expected or failed; their tests follow with the same reason.
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        split_skip "$line"
        skipped_suites+=("$SKIP_REASON")
        if reason=$(expected_skip "$SKIP_NAME"); then
            SKIPPED_NAMES+=("$(short "$label: suite $SKIP_NAME (expected: $reason)")")
            NARROWED+=("skipped: $SKIP_NAME")
        else
            failed "$(short "$label: suite $SKIP_NAME skipped whole ($SKIP_REASON): not an expected skip (EXPECTED_SKIPS)")"
        fi
    done < <(sed -nE 's/^[^ ]+ Suite (.+ skipped.*)/\1/p' <<<"$text")
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        skipped=$((skipped + 1))
        split_skip "$line"
        # A test of a skipped suite (the same reason): counted with that suite, expected or already failed.
        for suite in ${skipped_suites[@]+"${skipped_suites[@]}"}; do [ "$suite" != "$SKIP_REASON" ] || continue 2; done
        if expected_reason=$(expected_skip "$SKIP_NAME"); then
            SKIPPED_NAMES+=("$(short "$label: $SKIP_NAME (expected: $expected_reason)")")
            NARROWED+=("skipped: $SKIP_NAME")
        else
            failed "$(short "$label: $SKIP_NAME skipped ($SKIP_REASON): not an expected skip (EXPECTED_SKIPS)")"
        fi
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
    require_minimum "$label" "$passed" "tests passed"
    PARTS+=("$label: $passed passed of $tests test$([ "$tests" = 1 ] || echo s)$([ "$skipped" = 0 ] || echo ", $skipped skipped")")
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

# --dry-run: what the parts would get, and the summary's first words; nothing runs.
if [ "$MODE" = dry-run ]; then
    echo "run-all.sh: dry run: parts: $ONLY"
    echo "environment: $(compgen -e | sort | tr '\n' ' ')"
    PARTS=("dry run: nothing ran")
    summary
    exit 0
fi

# --self-test: the counting above on recorded and synthetic logs, each case in a subshell of its own (issue 45:
# each rule shown to fail on a planted input in every run). Tests/Support/test-command/swift-testing-skips.log is
# recorded from Swift Testing 6.3.1 (a suite skipped whole, a test skipped alone, two that passed: "Test run with 5
# tests … passed", exit 0); xctest-skip.log from corelibs XCTest of the same toolchain (a case that threw XCTSkip).
# self_test_case NAME EXPECT(passes|fails) CHECKS(extended regexes, one a line, all must match) LOG MINIMUM NARROW
# OFFLINE: count_swift_run on LOG as the part "swift test" with that MINIMUM, NARROW and SQLCIPHERKIT_INTEROP_OFFLINE.
self_test_case() {
    local name=$1 expect=$2 check=$3 log=$4 label="swift test"
    (
        PASSED=0 FAILED=0 SKIPPED=0 FAILED_NAMES=() SKIPPED_NAMES=() PARTS=() NARROWED=()
        MINIMUM[$label]=$5 NARROW=$6 SQLCIPHERKIT_INTEROP_OFFLINE=$7
        printf '%s\n' "$log" >"$LOGS/$label.log"
        count_swift_run "$label" 0 >"$LOGS/self-test.out" 2>&1
        local outcome=passes text
        [ "$FAILED" = 0 ] || outcome=fails
        text="failed: ${FAILED_NAMES[*]-} | skipped $SKIPPED: ${SKIPPED_NAMES[*]-} | narrowed: ${NARROWED[*]-} | ${PARTS[*]-}"
        local pattern matched=yes
        while IFS= read -r pattern; do grep -qE -- "$pattern" <<<"$text" || matched=no; done <<<"$check"
        if [ "$outcome" = "$expect" ] && [ "$matched" = yes ]; then
            echo "ok: $name $expect ($(short "$text"))"
        else
            echo "FAIL: $name: it $outcome, expected it $expect with /$check/ ($text)"
        fi
    )
}
self_tests() {
    local recorded interop offline interop_run clean n
    recorded=$(grep -v '^#' Tests/Support/test-command/swift-testing-skips.log)
    interop='Interoperability with an independent SQLCipher build (sqlcipher3)'
    offline='"sqlcipher3==0.6.4 could not be installed: see the SKIPPED banner on stderr"'
    interop_run="➜ Suite \"$interop\" skipped: $offline"
    for n in 1 2 3 4 5 6 7 8 9 10; do interop_run+=$'\n'"➜ Test \"interop test $n\" skipped: $offline"; done
    for n in 1 2 3 4 5; do interop_run+=$'\n'"✔ Test \"test $n\" passed after 0.1 seconds."; done
    interop_run+=$'\n'"✔ Test run with 15 tests in 2 suites passed after 1.0 seconds."
    clean=$(for n in 1 2 3 4 5; do echo "✔ Test \"test $n\" passed after 0.1 seconds."; done
            echo "✔ Test run with 5 tests in 1 suite passed after 1.0 seconds.")
    self_test_case "recorded, 2 passed and 3 skipped of 'Test run with 5 tests', minimum 5:" fails \
        $'fewer than the 5 it counts\nsuite Whole suite skipped skipped whole \\(no index answered\\)\nskipped alone skipped \\(not today\\): not an expected skip\nskipped 3:' \
        "$recorded" 5 0 ""
    self_test_case "recorded, minimum 2, --narrow: its skips are still not expected:" fails \
        'Whole suite skipped.*not an expected skip' "$recorded" 2 1 ""
    self_test_case "the interop suite skipped whole:" fails \
        "suite Interoperability with an independent SQLCipher build .* skipped whole" "$interop_run" 5 0 ""
    self_test_case "the interop suite skipped, SQLCIPHERKIT_INTEROP_OFFLINE=1 without --narrow:" fails 'skipped whole' \
        "$interop_run" 5 0 1
    self_test_case "the interop suite skipped with --narrow and SQLCIPHERKIT_INTEROP_OFFLINE=1 (the expected skip):" \
        passes "skipped 10: .*expected: no package index.*narrowed: skipped: Interoperability" "$interop_run" 5 1 1
    self_test_case "control: 5 passed of 5, minimum 5:" passes '5 passed of 5 tests' "$clean" 5 0 ""
    self_test_case "5 passed of 5, minimum 6:" fails 'fewer than the 6' "$clean" 6 0 ""
    # The parts that count ok:/FAIL: lines (driver, apps: Tests/Support/checks.sh): a skipped test is a FAIL: line.
    printf '%s\n' "$recorded" >"$LOGS/checks.log"
    if (source Tests/Support/checks.sh && report_swift_testing "$LOGS/checks.log" "app: ") \
        | grep -c '^FAIL: app: .* skipped' | grep -x 3 >/dev/null; then
        echo "ok: checks.sh's report_swift_testing gives the recorded log's 3 skipped tests a FAIL: line each"
    else
        echo "FAIL: checks.sh's report_swift_testing does not fail the recorded log's 3 skipped tests"
    fi
    if (source Tests/Support/checks.sh && report_xctest Tests/Support/test-command/xctest-skip.log) \
        | tr '\n' ' ' | grep "^ok: XCDemo.testPasses FAIL: XCDemo.testSkips" >/dev/null; then
        echo "ok: checks.sh's report_xctest gives the recorded skipped XCTest case a FAIL: line"
    else
        echo "FAIL: checks.sh's report_xctest does not fail a skipped XCTest case"
    fi
}
if [ "$MODE" = self-test ]; then
    LOGS=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-run-all.XXXXXX") || exit 1
    trap 'rm -rf "$LOGS"' EXIT
    self_tests | tee "$LOGS/self-tests"
    ! grep -q '^FAIL: ' "$LOGS/self-tests"
    exit $?
fi

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
# anchor, <doc:> and symbol link in a synthetic article of a temporary copy must each fail; one line each); then the
# examples (check-examples.py: every dependency line on our packages names the built version; the Swift blocks of the
# README and the SQLCipherKit catalogue compiled against dist/; a misspelled method and a wrong version planted
# first must fail). Counted as the emulated part's checks are. (The FluentSQLCipherDriver catalogue's `docc convert` is in the driver part.)
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
ASYNC_SUITES='HangGuardTests|WriterSessionTests|DatabasePoolTests|GroupCommitTests|WorkerThreadTests|DatabaseQueueTests|ForeignKeyTests|SQLRoutesAsyncTests|DatabaseObserverAsyncTests'
if wanted swift; then
    # That split holds only while every async test is in a listed suite and no listed suite's test waits
    # synchronously on the cooperative pool (Tests/Support/check_blocking_waits.py, which first shows on planted
    # inputs, a waitUntilExit among them, that it catches each case).
    run_part "blocking waits" python3 Tests/Support/check_blocking_waits.py
    count_checks "blocking waits" "blocking waits" "checks" $?
    # The command's own rules (issue 45): what a part counts (skips are not passes; an unexpected skip fails), the
    # environment (every variable the sources read is refused, cleared or the system's own), and NARROWED
    # (Tests/Support/check_test_command.py, with its controls: planted reads the scan must find).
    run_part "test command" python3 Tests/Support/check_test_command.py
    count_checks "test command" "test command" "checks" $?
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
#   observability: Tests/Observability/run-observability-tests.sh: the SQLCipherKitObservability bridge's tests (logs,
#     metrics and traces of a known workload; nothing secret in them; bounded series).
#   apps: Tests/Examples/run-app-examples.sh: Examples/FluentDriverConsumer, VaporTodo and HummingbirdTodo built
#     outside the repository on the two generated packages as tagged git repositories; their tests, their
#     servers with the key from a file or a systemd credential, the files encrypted.
fluent_stage() {
    local part script start
    for part in driver observability apps; do
        wanted "$part" || continue
        case $part in
            driver) script=Tests/FluentDriver/run-driver-tests.sh ;;
            observability) script=Tests/Observability/run-observability-tests.sh ;;
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
! wanted observability || count_background_part observability "observability"
! wanted apps || count_background_part apps "app examples"
while IFS= read -r line; do TIMES+=("$line"); done < <(cat "$LOGS/background.times" 2>/dev/null)

summary
[ "$FAILED" = 0 ]
