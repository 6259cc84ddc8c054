#!/usr/bin/env bash
# The observability bridge (Drivers/SQLCipherKitObservability, a package of its own: SQLCipherKit depends on no
# logging, metrics or tracing package): its Swift Testing tests, with swift-log's InMemoryLogHandler, swift-metrics'
# TestMetrics and swift-distributed-tracing's InMemoryTracer. A known workload's logs, metrics and spans; nothing
# secret in any of them with query text on (the planted literal found, as the scan's control); bounded series for
# 10,000 distinct statements.
#
# Needs the engine (./build-sqlcipher.sh writes Vendor/build/lib). Prints one "ok: NAME" or "FAIL: NAME" line per
# test, then "OBSERVABILITY: N passed, N failed"; exits 1 when anything failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../Drivers/SQLCipherKitObservability" || exit 1

# shellcheck source=../Support/checks.sh
source ../../Tests/Support/checks.sh
finish() { finish_checks OBSERVABILITY; }

LOG=$(mktemp "${TMPDIR:-/tmp}/observability.XXXXXX") || exit 1
trap 'rm -f "$LOG"' EXIT
TEST_STATUS="never ran"
# FLUENT_SCRATCH: the build folder the driver and the apps share (the test command sets it): swift-log, swift-metrics
# and swift-distributed-tracing are among what they build too. By default the package's own .build.
SCRATCH=()
[ -z "${FLUENT_SCRATCH:-}" ] || SCRATCH=(--scratch-path "$FLUENT_SCRATCH")

swift build --build-tests ${SCRATCH[@]+"${SCRATCH[@]}"} 2>&1 | tail -n 20
[ "${PIPESTATUS[0]}" = 0 ] || { fail "the observability package builds (swift build --build-tests)"; finish; }

run_test_binary "$LOG" '^$' swift test --skip-build ${SCRATCH[@]+"${SCRATCH[@]}"}
report_swift_testing "$LOG"
require_clean_exit "swift test (the observability package's test binary)" "$TEST_STATUS" "$LOG"
# The part's size: 4 tests when this was written; 5 with the log-context test (issue 47, stop 58).
require_at_least "" 5 "tests"
finish
