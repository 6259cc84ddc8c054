#!/usr/bin/env bash
# Tests/CryptoProvider/run-faults.sh [SEED]: fault injection into SQLCipherKit's crypto provider (faults.c beside
# this file). Compiles faults.c with the reference engine's amalgamation (from the pinned tarball, built by
# engine.sh) and the checkout's provider with -DSQLCIPHERKIT_PROVIDER_FAULTS, then runs, each in a fresh folder
# and process:
#   - fetch: AES cannot be fetched: sqlite3_initialize, :memory: and plaintext files work, an encrypted open fails
#     and writes nothing; random-init: no random bytes at sqlite3_initialize: it fails cleanly (no crash);
#   - update, final, rekey, hmac (writes and reads) and random (writes) failing at the 1st, 2nd, 5th and a random
#     (SEED) call, in rollback-journal and WAL mode: the statement fails, the connection stays unusable, no
#     plaintext on disk, a new connection finds the state before the transaction, intact;
#   - the control: the same run with no fault must fail its checks (the test can fail), and exactly as a run with
#     nothing armed does: the write goes through (rc 0), the connection records no failure, the program prints
#     "RESULT FAIL: the fault was never reached" and exits 1. A control that fails for another reason (the set-up,
#     the write itself) proves nothing about the checks, so it fails the test.
# Prints one line per run and a count; everything under Vendor/build/crypto-provider/faults/ (gitignored).
# Exit status: 0 when every fault run passes (RESULT ok, exit 0) and the control fails as above; 1 otherwise.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/Tests/CryptoProvider
OUT=$ROOT/Vendor/build/crypto-provider/faults
CC=${CC:-cc}
SEED=${1:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
rm -rf "$OUT"
mkdir -p "$OUT"

AMALGAMATION=$("$HERE/engine.sh" reference)/amalgamation
FLAGS=(-O0 -DNDEBUG -DSQLITE_HAS_CODEC -DSQLCIPHER_CRYPTO_CUSTOM=sqlcipherkit_openssl_setup
    -DSQLCIPHERKIT_PROVIDER_FAULTS -DSQLITE_EXTRA_INIT=sqlcipher_extra_init
    -DSQLITE_EXTRA_SHUTDOWN=sqlcipher_extra_shutdown -DSQLITE_THREADSAFE=1 -DSQLITE_TEMP_STORE=3
    -DSQLCIPHER_OMIT_DEFAULT_LOGGING -Wno-deprecated-declarations)
echo "compiling faults.c with the reference amalgamation and SQLCipherKit's provider (-O0: 20 seconds)"
"$CC" "${FLAGS[@]}" -I "$AMALGAMATION" -I "$ROOT/BuildSupport/engine" -o "$OUT/faults" "$HERE/faults.c" \
    -lcrypto -lm -lpthread 2>"$OUT/compile.log" || { cat "$OUT/compile.log" >&2; exit 1; }

status=0 runs=0 passed=0 run_id=0
# What the control (nothing armed) prints when the write went through and only the fault check failed: anything
# else means it failed for another reason.
CONTROL_RESULT="RESULT FAIL: the fault was never reached"
CONTROL_STATEMENT='^fault none #[0-9]+ during a write \([a-z]+\): hit 0; the statement returned rc 0 \(not an error\)'
CONTROL_RECORDED='^sqlcipherkit_provider_failed\(connection\) = 0$'
# run EXPECT ARGS...: runs faults ARGS in a new folder; EXPECT ok (must print RESULT ok and exit 0) or control
# (must print the control's lines above and exit 1).
run() {
    local expect=$1 dir result rc=0
    shift
    run_id=$((run_id + 1))
    dir=$OUT/run-$run_id
    mkdir -p "$dir"
    "$OUT/faults" "$@" >"$dir.log" 2>&1 || rc=$?
    result=$(grep '^RESULT' "$dir.log" | tail -n1)
    runs=$((runs + 1))
    if { [ "$expect" = ok ] && [ "$result" = "RESULT ok" ] && [ "$rc" = 0 ]; } \
        || { [ "$expect" = control ] && [ "$result" = "$CONTROL_RESULT" ] && [ "$rc" = 1 ] \
            && grep -qE "$CONTROL_STATEMENT" "$dir.log" && grep -qE "$CONTROL_RECORDED" "$dir.log"; }; then
        passed=$((passed + 1))
    else
        status=1
        if [ "$expect" = ok ]; then
            echo "FAILED: faults $* (expected RESULT ok, exit 0): ${result:-no result}, exit $rc" >&2
        else
            echo "FAILED: faults $* (the control: expected the write to succeed with rc 0, provider_failed 0," \
                "'$CONTROL_RESULT' and exit 1): ${result:-no result}, exit $rc" >&2
        fi
        sed 's/^/    /' "$dir.log" >&2
    fi
    # One line per run: what the statement returned is the message a user sees.
    printf '%-36s %s\n' "${*//$OUT\//}" "$(grep -m1 -E '^(fault|fetch|random)' "$dir.log" | sed -E 's/.*returned //' | cut -c1-90)"
}
# Each run's folder is its last argument but one; faults takes DIR after the mode.
fault() { local kind=$1 n=$2 mode=$3 journal=$4; run ok "$kind" "$n" "$mode" "$OUT/run-$((run_id + 1))" "$journal"; }

run ok fetch "$OUT/run-1"
run ok random-init "$OUT/run-2"
random_n=$((SEED % 12 + 1))
echo "fault positions: 1, 2, 5 and $random_n (seed $SEED)"
for journal in delete wal; do
    for n in 1 2 5 "$random_n"; do
        for kind in update final rekey hmac random; do
            fault "$kind" "$n" write "$journal"
            [ "$kind" = random ] || fault "$kind" "$n" read "$journal"
        done
    done
done
# The control: no fault armed; the same checks must fail, and only because the fault was never reached.
run control none 1 write "$OUT/run-$((run_id + 1))" delete
echo "FAULTS: $passed of $runs runs as expected (fetch; random at initialisation; update, final, rekey, hmac, random at 4 positions in 2 journal modes; the no-fault control failing its checks)"
exit $status
