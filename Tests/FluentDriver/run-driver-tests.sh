#!/usr/bin/env bash
# The Fluent and SQLKit driver (Drivers/FluentSQLCipherDriver, a package of its own) under the ecosystem's own
# suites: sql-kit's SQLBenchmarker and every group of fluent-kit's FluentBenchmarker on encrypted databases (XCTest,
# as the suites report with XCTAssert), then the driver's own Swift Testing tests. Then what the binary and the
# dependency graph hold: one SQLite, SQLCipher's (sqlite3_key_v2 defined; no sqlite_nio_* symbol; neither sqlite-nio
# nor sqlite-kit resolved). Last, its DocC catalogue and SQLCipherSQLKit's doc comments converted with no warning
# (Tests/Docs/check-docc.sh --driver, on this build's symbol graphs).
#
# Needs the engine (./build-sqlcipher.sh writes Vendor/build/lib). Prints one "ok: NAME" or "FAIL: NAME" line per
# test and check, then "DRIVER: N passed, N failed"; exits 1 when anything failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../Drivers/FluentSQLCipherDriver" || exit 1

# shellcheck source=../Support/checks.sh
source ../../Tests/Support/checks.sh
finish() { finish_checks DRIVER; }

LOG=$(mktemp "${TMPDIR:-/tmp}/fluent-driver.XXXXXX") || exit 1
trap 'rm -f "$LOG"' EXIT
TEST_STATUS="never ran"
# FLUENT_SCRATCH: a build folder shared with Tests/Examples/run-app-examples.sh (the test command sets it), so that
# swift-nio, fluent-kit and sql-kit compile once for both; by default the package's own .build.
SCRATCH=()
[ -z "${FLUENT_SCRATCH:-}" ] || SCRATCH=(--scratch-path "$FLUENT_SCRATCH")

if ! swift build --build-tests ${SCRATCH[@]+"${SCRATCH[@]}"} 2>&1 | tail -n 20; then
    fail "the driver package builds (swift build --build-tests in Drivers/FluentSQLCipherDriver)"
    finish
fi
[ "${PIPESTATUS[0]}" = 0 ] || { fail "the driver package builds"; finish; }

run_test_binary "$LOG" ' notice | info ' swift test --skip-build ${SCRATCH[@]+"${SCRATCH[@]}"}

# XCTest:  Test Case 'Suite.test' passed|failed|skipped (S seconds)
# Swift Testing:  ✔ Test NAME passed after S seconds.  /  ✘ Test NAME failed after S seconds …  /  ➜ … skipped
# (a skip of either is a FAIL: line: Tests/Support/checks.sh)
report_xctest "$LOG"
report_swift_testing "$LOG"
# XCTest's last words: "Test Suite 'All tests' passed|failed at …", then the total ("Executed N test(s), with …";
# a nested suite prints the same line, so only the one after 'All tests' counts).
executed=$(awk "/^Test Suite 'All tests' (passed|failed) /{all=1; next} all && /Executed [0-9]+ tests?, with/{print; exit}" \
    "$LOG" | sed -E 's/.*Executed ([0-9]+) tests?, with.*/\1/')
[ -n "$executed" ] \
    || fail "XCTest ran to its end (no 'All tests' total: the test binary crashed or did not start)"
require_clean_exit "swift test (the driver's test binary)" "$TEST_STATUS" "$LOG"
# The part's size: sql-kit's SQLBenchmarker, the 32 groups and the driver's own tests (43 when this was written).
require_at_least "" 43 "tests"

# Every group of the resolved fluent-kit's FluentBenchmarker.testAll() ran here as a test of its own and passed (the
# list in FluentBenchmarkerTests.swift is written by hand; fluent-kit is resolved "from:" a version, and a new group
# would otherwise go untested).
benchmarker="${FLUENT_SCRATCH:-.build}/checkouts/fluent-kit/Sources/FluentBenchmark/FluentBenchmarker.swift"
groups=$(awk '/func testAll\(\)/{inside=1; next} inside && /^    }/{exit} inside' "$benchmarker" 2>/dev/null \
    | sed -nE 's/^ *try self\.(test[A-Za-z0-9]+)\(\).*/\1/p')
if [ "$(wc -w <<<"$groups")" -lt 30 ]; then
    fail "FluentBenchmarker.testAll() read from $benchmarker (found $(wc -w <<<"$groups") groups, expected 30 or more)"
else
    # Looked up in an array, not with `printf … | grep -q`: grep -q ends at its first match, printf then dies of
    # SIGPIPE, and under pipefail a group that passed was reported missing (CI, stop 52: testMiddleware).
    declare -A passed=()
    for name in ${OK_NAMES[@]+"${OK_NAMES[@]}"}; do passed[$name]=1; done
    missing=()
    for group in $groups; do
        [ -n "${passed[FluentBenchmarkerTests.$group]:-}" ] || missing+=("$group")
    done
    if [ ${#missing[@]} = 0 ]; then
        ok "every group of the resolved FluentBenchmarker.testAll() ran and passed ($(wc -w <<<"$groups") groups)"
    else
        fail "groups of FluentBenchmarker.testAll() that did not run or pass here: ${missing[*]}"
    fi
fi
# One SQLite in the test binary: SQLCipher's.
binary="$(swift build ${SCRATCH[@]+"${SCRATCH[@]}"} --show-bin-path)/FluentSQLCipherDriverPackageTests.xctest"
symbols=$(nm "$binary" 2>/dev/null)
# (The engine's symbols are hidden in the static library, so nm lists them as local: t.)
if grep -qE ' [tT] sqlite3_key_v2$' <<<"$symbols" && [ "$(grep -cE ' [tT] sqlite3_open_v2$' <<<"$symbols")" = 1 ]; then
    ok "the test binary holds one SQLite, SQLCipher's (sqlite3_key_v2; one sqlite3_open_v2)"
else
    fail "the test binary holds one SQLite, SQLCipher's (sqlite3_key_v2; one sqlite3_open_v2)"
fi
if grep -qiE 'sqlite_nio|sqlitenio' <<<"$symbols"; then
    fail "the test binary holds no sqlite-nio symbol"
else
    ok "the test binary holds no sqlite-nio symbol"
fi

# Nor in the resolved graph.
if swift package ${SCRATCH[@]+"${SCRATCH[@]}"} show-dependencies --format json 2>/dev/null | python3 -c '
import json, sys
def names(node):
    yield node.get("identity", "")
    for child in node.get("dependencies", []):
        yield from names(child)
found = sorted({n for n in names(json.load(sys.stdin)) if n in ("sqlite-nio", "sqlite-kit", "fluent-sqlite-driver")})
sys.exit(1 if found else 0)'; then
    ok "the resolved graph holds neither sqlite-nio nor sqlite-kit"
else
    fail "the resolved graph holds neither sqlite-nio nor sqlite-kit"
fi

# The driver's DocC catalogue (FluentSQLCipherDriver.docc, ServingUnderLoad included) and SQLCipherSQLKit's doc
# comments convert with no warning (Tests/Docs/check-docc.sh --driver: the symbol graphs come from this build folder,
# a few seconds; its planted control first). Here rather than in the docs part, which would have to build swift-nio,
# fluent-kit and sql-kit a second time (3 minutes from nothing on 2 cores); the docs part checks these articles'
# links, <doc:> references and symbol names.
DOCC_LOG=$(mktemp "${TMPDIR:-/tmp}/fluent-driver-docc.XXXXXX") || finish
../../Tests/Docs/check-docc.sh --driver "${FLUENT_SCRATCH:-.build}" >"$DOCC_LOG" 2>&1
docc_status=$?
relay_checks "" "$DOCC_LOG"
grep -q '^FAIL: ' "$DOCC_LOG" || [ "$docc_status" = 0 ] || fail "docc: check-docc.sh --driver exited $docc_status"
grep -q '^ok: docc: Drivers/' "$DOCC_LOG" || grep -q '^FAIL: ' "$DOCC_LOG" \
    || fail "docc: check-docc.sh --driver printed no line for the driver's catalogue"
rm -f "$DOCC_LOG"

finish
