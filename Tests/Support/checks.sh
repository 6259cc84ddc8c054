# Sourced by the test command's script parts that report one line per test and check
# (Tests/FluentDriver/run-driver-tests.sh, Tests/Examples/run-app-examples.sh): "ok: NAME" or "FAIL: NAME", then
# "LABEL: N passed, N failed" (Tests/run-all.sh counts the ok: and FAIL: lines).
PASSED=0 FAILED=0 OK_NAMES=()
ok() { echo "ok: $1"; PASSED=$((PASSED + 1)); OK_NAMES+=("$1"); }
fail() { echo "FAIL: $1"; FAILED=$((FAILED + 1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else fail "$name"; fi; }
# Relays the ok: and FAIL: lines of a checker's log $2 as this part's own, each name after the prefix $1; echoes
# every other line.
relay_checks() {
    local prefix=$1 line
    while IFS= read -r line; do
        case $line in
            "ok: "*) ok "$prefix${line#ok: }" ;;
            "FAIL: "*) fail "$prefix${line#FAIL: }" ;;
            *) echo "$line" ;;
        esac
    done <"$2"
}

# Prints "$1: N passed, N failed" and exits 1 when anything failed.
finish_checks() {
    echo "$1: $PASSED passed, $FAILED failed"
    [ "$FAILED" = 0 ]
    exit $?
}

# A part that silently shrinks must fail: a FAIL: line unless at least $2 ok: lines so far start with $1 ("" for
# all of them); $3 names what they count.
require_at_least() {
    local prefix=$1 minimum=$2 noun=$3 name count=0
    for name in ${OK_NAMES[@]+"${OK_NAMES[@]}"}; do [[ "$name" != "$prefix"* ]] || count=$((count + 1)); done
    if [ "$count" -ge "$minimum" ]; then
        echo "count: ${prefix}$count $noun passed (at least $minimum expected)"
    else
        fail "${prefix}at least $minimum $noun passed, only $count did (the part shrank, or a part of it did not run)"
    fi
}

# Runs a test binary through "$@" (swift test …): its output, without colours, kept in the log $1 and shown without
# the lines matching the extended regex $2 (a server's log noise); TEST_STATUS is the command's own exit status.
# (Read from a file: a pipeline's status is gone after `|| true`, and grep -v fails on a log it hides whole.)
run_test_binary() {
    local log=$1 hide=$2 status_file
    shift 2
    status_file=$(mktemp "${TMPDIR:-/tmp}/test-status.XXXXXX") || return 1
    echo "never ended" >"$status_file"
    { "$@" 2>&1; echo $? >"$status_file"; } | sed -E 's/\x1b\[[0-9;]*m//g' | tee "$log" | grep -vE "$hide"
    TEST_STATUS=$(cat "$status_file")
    rm -f "$status_file"
}

# A FAIL: line named $1 when the test binary's exit status $2 is not 0, saying what the log $3 says happened: a
# crash (a signal, a fatal error, an abort at exit), even after every test had printed its result.
require_clean_exit() {
    local label=$1 status=$2 log=$3 parts=() what
    [ "$status" = 0 ] && return 0
    parts+=("$(grep -m1 -oE 'exited with unexpected signal code [0-9]+' "$log")")
    parts+=("$(grep -m1 -oE '\*\*\* Program crashed: [^*]*' "$log" | sed -E 's/^\*\*\* //; s/ at 0x[0-9a-f]+ *$//')")
    parts+=("$(grep -m1 -oE '(Fatal error|fatal error|Precondition failed|Assertion failed): .{0,160}' "$log")")
    what=$(printf '%s; ' "${parts[@]}" | sed -E 's/(; )+/; /g; s/^; //; s/; $//')
    fail "$label exited $status${what:+ ($what)}"
}

# One ok:/FAIL: line per Swift Testing test in the log $1 (colours removed), named "$2NAME":
#   ✔ Test NAME passed after S seconds.   /   ✘ Test NAME failed after S seconds …
#   ➜ Test NAME skipped: "REASON"         (a FAIL: line: no skip is expected in these parts, issue 45)
# and a FAIL: line when the log has no "Test run with N tests" line (the run did not start, or crashed).
report_swift_testing() {
    local log=$1 prefix=${2:-} name
    while IFS= read -r name; do [ -n "$name" ] && ok "$prefix$name"; done \
        < <(sed -nE 's/^[^ ]+ Test (.+) passed after [0-9.]+ seconds.*/\1/p' "$log" | grep -v '^run with ')
    while IFS= read -r name; do [ -n "$name" ] && fail "$prefix$name"; done \
        < <(sed -nE 's/^[^ ]+ Test (.+) failed after [0-9.]+ seconds.*/\1/p' "$log" | grep -v '^run with ')
    while IFS= read -r name; do [ -n "$name" ] && fail "$prefix$name (not run: a skip is not a pass)"; done \
        < <(sed -nE 's/^[^ ]+ Test (.+ skipped.*)/\1/p' "$log")
    grep -qE '^[^ ]+ Test run with [0-9]+ tests? ' "$log" \
        || fail "${prefix}Swift Testing ran (no 'Test run with N tests' line)"
}

# One ok:/FAIL: line per XCTest case in the log $1:
#   Test Case 'Suite.test' passed (S seconds)   /   … failed (S seconds)   /   … skipped (S seconds) (a FAIL: line)
report_xctest() {
    local log=$1 name
    while IFS= read -r name; do [ -n "$name" ] && ok "$name"; done \
        < <(sed -nE "s/^Test Case '([^']+)' passed .*/\\1/p" "$log")
    while IFS= read -r name; do [ -n "$name" ] && fail "$name"; done \
        < <(sed -nE "s/^Test Case '([^']+)' failed .*/\\1/p" "$log")
    while IFS= read -r name; do [ -n "$name" ] && fail "$name (skipped: a skip is not a pass)"; done \
        < <(sed -nE "s/^Test Case '([^']+)' skipped .*/\\1/p" "$log")
}
