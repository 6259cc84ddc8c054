#!/usr/bin/env bash
# Tests/Sanitized/run-sanitized.sh: the promises under AddressSanitizer and UndefinedBehaviorSanitizer (issue 43). A
# memory error that does not crash passes every other part: here the shipped engine (the generated amalgamation, the
# pin's flags and local changes, -O1 -g in place of -O2) is built with both sanitizers, and
#   1. controls, every run: issue 43's VACUUM INTO reproduction (vacuum_into.c) on upstream's amalgamation with the
#      same flags must draw an AddressSanitizer report at page sizes 1024 and 65536, and the Swift test binaries'
#      engine must report a read past a heap block (ReliabilityHelper sanitizer-control); a run where either stays
#      silent cannot vouch for the checks below;
#   2. the same reproduction on SQLCipherKit's engine runs clean, at 1024, 4096, 8192 and 65536;
#   3. the Swift suites of the promises under every cipher configuration (CipherConfigurationMatrixTests: every typed
#      operation and VACUUM INTO; SQLRoutesTests: every payload by every route; SQLPromisesTests; TornCheckpointTests:
#      the local change kdf-salt-from-wal, which reads the WAL from inside the codec; DatabaseObserverRedactionTests:
#      an observer's events under every configuration, VACUUM INTO among them, an observer's SQL refused inside the
#      library's operations, and a connection closed from a callback inside them; DatabaseObserverAsyncTests: the pool's figures, numbered under its locks and reported from
#      its threads, the writes waiting among them; DatabaseTransactionTests: the transaction and savepoint rules, held
#      at each step under every configuration; DatabaseObserverMisuseTests: an observer releasing, closing or using its
#      connection from inside the engine's calls) run linked against
#      that engine, in a build folder of their own (.build-sanitized, swift build --sanitize=address): any report
#      aborts the test binary, which fails the part;
#   4. then, in a run of their own, the pool's and group commit's suites (DatabasePoolTests, GroupCommitTests: a pool
#      closed, and its connections replaced, from inside its own work): run among the suites above, which keep both
#      cores busy for minutes under ASan, their async work waited past the hang guard's 180 s (seen: 18 of 26). (GuardSpellingTests, which judges how the guard reads SQL text,
#      runs in the swift part only: it exercises the same engine paths as SQLPromisesTests, thousands of times.)
# Prints one "ok: NAME" or "FAIL: NAME" line per check (Tests/Support/checks.sh), then "sanitized: N passed, N failed".
# Needs ./build-sqlcipher.sh first (the amalgamation in Vendor/build/amalgamation).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source Tests/Support/checks.sh
# shellcheck source=../../Vendor/sqlcipher.pin
source Vendor/sqlcipher.pin

AMALGAMATION=Vendor/build/amalgamation
OUT=Vendor/build/sanitized
SCRATCH=.build-sanitized
SUITES="CipherConfigurationMatrixTests|SQLRoutesTests|SQLRoutesAsyncTests|SQLPromisesTests|TornCheckpointTests|DatabaseObserverRedactionTests|SQLCipherErrorUnparsedKeyTests|DatabaseObserverAsyncTests|DatabaseTransactionTests|DatabaseObserverMisuseTests"
POOL_SUITES="DatabasePoolTests|GroupCommitTests"
# The least each Swift run must count (Swift Testing's tests), raised with the suites.
SWIFT_MINIMUM=65
POOL_MINIMUM=35
[ -f "$AMALGAMATION/sqlite3.c" ] && [ -f "$AMALGAMATION/sqlite3.upstream.c" ] || {
    echo "run-sanitized.sh: no generated amalgamation in $AMALGAMATION: run ./build-sqlcipher.sh first" >&2
    exit 2
}
# The Swift toolchain's clang: its sanitizer runtime is the one swiftc links into the test binaries.
CLANG=/opt/swift/usr/bin/clang
[ -x "$CLANG" ] || CLANG=$(dirname "$(readlink -f "$(command -v swiftc)")")/clang
mkdir -p "$OUT/obj" "$OUT/lib" "$OUT/bin"

# The pin's flags with -O1 -g and both sanitizers, as the fuzz build has them (without its coverage).
source Tests/Support/sanitizer-flags.sh
SANITIZE=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
sanitizer_engine_flags "${SANITIZE[@]}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

hash_of() { printf '%s\n' "$@" | sha256sum | cut -d' ' -f1; }

# Compiles $2 into the object $1 with the engine's flags unless its stamp (compiler, flags, source) is unchanged.
compile() {
    local object=$1 source=$2 stamp
    stamp=$(hash_of "$("$CLANG" --version | head -n1)" "${ENGINE_FLAGS[@]}" "$(sha256sum <"$source")")
    [ -f "$object" ] && [ "$(cat "$object.stamp" 2>/dev/null)" = "$stamp" ] && return 0
    rm -f "$object" "$object.stamp"
    "$CLANG" -c "$source" -o "$object" "${ENGINE_FLAGS[@]}" -I"$AMALGAMATION" && echo "$stamp" >"$object.stamp"
}

echo "==> sanitizer engines (SQLCipherKit's and upstream's amalgamation, ASan+UBSan, -O1; 1-3 min each when changed)"
started=$SECONDS
compile "$OUT/obj/sqlite3.o" "$AMALGAMATION/sqlite3.c" & engine=$!
compile "$OUT/obj/sqlite3-upstream.o" "$AMALGAMATION/sqlite3.upstream.c" & upstream=$!
wait "$engine"; engine_status=$?
wait "$upstream"; upstream_status=$?
compile "$OUT/obj/sqlcipherkit_crypto.o" BuildSupport/engine/sqlcipherkit_crypto.c; crypto_status=$?
if [ "$engine_status" != 0 ] || [ "$upstream_status" != 0 ] || [ "$crypto_status" != 0 ]; then
    fail "the sanitizer engines compile"
    finish_checks sanitized
fi
rm -f "$OUT/lib/libsqlcipher.a"
ar rcsD "$OUT/lib/libsqlcipher.a" "$OUT/obj/sqlite3.o" "$OUT/obj/sqlcipherkit_crypto.o"
# lld when the toolchain has it: gold warns about every ASan symbol it cannot export.
LINK_FLAGS=()
[ ! -x "$(dirname "$CLANG")/ld.lld" ] || LINK_FLAGS=(-fuse-ld=lld)
for engine in sqlite3 sqlite3-upstream; do
    "$CLANG" "${LINK_FLAGS[@]}" "${SANITIZE[@]}" -O1 -g -I"$AMALGAMATION" "${DEFINES[@]}" Tests/Sanitized/vacuum_into.c \
        "$OUT/obj/$engine.o" -o "$OUT/bin/vacuum_into-$engine" -lcrypto -lm -lpthread || fail "vacuum_into links ($engine)"
done
echo "    ($((SECONDS - started)) s)"

# Runs the reproduction on engine $1 at page size $2 in a fresh folder; its output in $OUT/vacuum_into-$1-$2.log.
reproduce() {
    local folder log=$OUT/vacuum_into-$1-$2.log
    folder=$(mktemp -d "${TMPDIR:-/tmp}/sanitized.XXXXXX")
    # In the background and waited for: the shell then reports no "Aborted" line of its own for the control.
    "$OUT/bin/vacuum_into-$1" "$folder" "$2" >"$log" 2>&1 &
    wait $!
    REPRODUCE_STATUS=$?
    rm -rf "$folder"
    REPRODUCE_LOG=$log
}

echo "==> controls: upstream's VACUUM INTO under AddressSanitizer"
for page in 1024 65536; do
    reproduce sqlite3-upstream "$page"
    if [ "$REPRODUCE_STATUS" != 0 ] && grep -q "ERROR: AddressSanitizer" "$REPRODUCE_LOG"; then
        ok "control: upstream's VACUUM INTO at page size $page draws an AddressSanitizer report ($(grep -m1 -o 'AddressSanitizer: [a-z-]*' "$REPRODUCE_LOG"))"
    else
        fail "control: upstream's VACUUM INTO at page size $page drew no AddressSanitizer report (exit $REPRODUCE_STATUS): the sanitizers do not see issue 43's bug ($REPRODUCE_LOG)"
    fi
done

echo "==> SQLCipherKit's engine: the same reproduction runs clean"
for page in 1024 4096 8192 65536; do
    reproduce sqlite3 "$page"
    if [ "$REPRODUCE_STATUS" = 0 ]; then
        ok "VACUUM INTO at page size $page: no report, the copy opens with its key and page size"
    else
        cat "$REPRODUCE_LOG"
        fail "VACUUM INTO at page size $page on SQLCipherKit's engine (exit $REPRODUCE_STATUS, $REPRODUCE_LOG)"
    fi
done

echo "==> the Swift suites on the sanitizer engine ($SCRATCH; a first build takes 3-5 min)"
export SQLCIPHERKIT_ENGINE_LIB_DIR=$PWD/$OUT/lib
if ! swift build --build-tests --scratch-path "$SCRATCH" --sanitize=address >"$OUT/swift-build.log" 2>&1; then
    tail -n 30 "$OUT/swift-build.log"
    fail "the Swift tests build with --sanitize=address against the sanitizer engine ($OUT/swift-build.log)"
    finish_checks sanitized
fi
ok "the Swift tests build with --sanitize=address against the sanitizer engine"
helper=$(swift build --scratch-path "$SCRATCH" --sanitize=address --show-bin-path)/ReliabilityHelper
"$helper" sanitizer-control >"$OUT/control.log" 2>&1
if grep -q "ERROR: AddressSanitizer: heap-buffer-overflow" "$OUT/control.log" && grep -q "sqlite3" "$OUT/control.log"; then
    ok "control: the engine linked into the Swift binaries reports a read past a heap block"
else
    fail "control: the engine linked into the Swift binaries reported nothing ($OUT/control.log): it is not the sanitizer engine"
fi
# Runs the suites matching $2 into the log $1: an ok: line named $4 when the run exits 0 with no sanitizer report, no
# skip and at least $3 tests passed.
run_swift_suites() {
    local log=$1 filter=$2 minimum=$3 what=$4 summary passed skipped reports
    # Nothing of an earlier run counts: run_test_binary sets both only when the binary ran.
    TEST_STATUS="never ran"
    rm -f "$log"
    run_test_binary "$log" '^$' swift test --skip-build --scratch-path "$SCRATCH" --sanitize=address --filter "$filter"
    summary=$(sed -nE 's/^[^ ]+ (Test run with ([0-9]+) tests? .*)/\1/p' "$log" | tail -n1)
    # What counts is the tests that passed ("Test run with N tests" counts skipped ones too); a skip fails (issue 45).
    passed=$(grep -E '^[^ ]+ Test .+ passed after [0-9.]+ seconds' "$log" | grep -cvE '^[^ ]+ Test run with ')
    skipped=$(grep -cE '^[^ ]+ (Test|Suite) .+ skipped' "$log")
    reports=$(grep -cE "ERROR: AddressSanitizer|runtime error:" "$log")
    if [ "$TEST_STATUS" = 0 ] && [ "$reports" = 0 ] && [ "$passed" -ge "$minimum" ] && [ "$skipped" = 0 ] \
        && [[ $summary == *passed* ]]; then
        ok "$what, ASan and UBSan: $passed passed; $summary"
    else
        grep -E "^[^ ]+ Test .* failed|^[^ ]+ (Test|Suite) .+ skipped|ERROR: AddressSanitizer|runtime error:" "$log" \
            | head -n 20
        fail "$what on the sanitizer engine: exit $TEST_STATUS, $reports sanitizer reports, $passed tests passed (at least $minimum), $skipped skipped (none may be): ${summary:-no summary line}"
    fi
}
run_swift_suites "$OUT/swift-test.log" "$SUITES" "$SWIFT_MINIMUM" "the promises under every cipher configuration"
run_swift_suites "$OUT/swift-test-pools.log" "$POOL_SUITES" "$POOL_MINIMUM" \
    "pools and group commits, closed and their connections replaced from inside their own work"
finish_checks sanitized
