# Sourced by the test command's script parts that report one line per test and check
# (Tests/FluentDriver/run-driver-tests.sh, Tests/Examples/run-app-examples.sh): "ok: NAME" or "FAIL: NAME", then
# "LABEL: N passed, N failed" (Tests/run-all.sh counts the ok: and FAIL: lines).
PASSED=0 FAILED=0
ok() { echo "ok: $1"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL: $1"; FAILED=$((FAILED + 1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else fail "$name"; fi; }

# Prints "$1: N passed, N failed" and exits 1 when anything failed.
finish_checks() {
    echo "$1: $PASSED passed, $FAILED failed"
    [ "$FAILED" = 0 ]
    exit $?
}

# One ok:/FAIL: line per Swift Testing test in the log $1 (colours removed), named "$2NAME":
#   ✔ Test NAME passed after S seconds.   /   ✘ Test NAME failed after S seconds …
# and a FAIL: line when the log has no "Test run with N tests" line (the run did not start, or crashed).
report_swift_testing() {
    local log=$1 prefix=${2:-} name
    while IFS= read -r name; do [ -n "$name" ] && ok "$prefix$name"; done \
        < <(sed -nE 's/^[^ ]+ Test (.+) passed after [0-9.]+ seconds.*/\1/p' "$log" | grep -v '^run with ')
    while IFS= read -r name; do [ -n "$name" ] && fail "$prefix$name"; done \
        < <(sed -nE 's/^[^ ]+ Test (.+) failed after [0-9.]+ seconds.*/\1/p' "$log" | grep -v '^run with ')
    grep -qE '^[^ ]+ Test run with [0-9]+ tests' "$log" \
        || fail "${prefix}Swift Testing ran (no 'Test run with N tests' line)"
}
