#!/usr/bin/env bash
# Tests/CryptoProvider/run-matrix.sh: the file matrix between the two crypto providers. Links matrix.c once per
# engine (SQLCipherKit's provider and SQLCipher's reference one, both built by engine.sh through
# build-sqlcipher.sh --crypto-provider), lets each write every case (and a copy with one byte of page 2 flipped),
# and each read what both wrote. Passes when every program reports the provider it was linked with, every file
# reads back exact on both engines, both engines report the same thing, line for line, on every tampered copy,
# and every count reaches what the full matrix gives (below: a matrix that lost cases agrees just as well).
# Prints the counts, then a COUNTS line with each count and its minimum; everything goes to
# Vendor/build/crypto-provider/matrix/ (gitignored, fresh each run).
# Exit status: 0 no difference and no count short; 1 otherwise.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/Tests/CryptoProvider
OUT=$ROOT/Vendor/build/crypto-provider/matrix
CC=${CC:-cc}
PROVIDERS=(sqlcipherkit reference)
rm -rf "$OUT"
mkdir -p "$OUT"
fail() { echo "run-matrix.sh: $*" >&2; exit 1; }

# What the full matrix counts (matrix.c: the product 7 page sizes x 3 HMACs x 3 KDFs x 4 compatibilities, with the
# pairs of the two-valued dimensions covered inside it), each case written by 2 engines and read by 2 (files, and
# tampered copies: 4 per case), compatibility 1 (a quarter of the cases) without an HMAC and so not refused, and
# what aesproxy wrote read by 2 engines. Minimums: more cases pass (raise these with them), fewer fail.
EXPECT_CASES=252
EXPECT_FILES=$((EXPECT_CASES * 4))
EXPECT_TAMPERED=$((EXPECT_CASES * 4))
EXPECT_REFUSED=$((EXPECT_CASES * 3))
EXPECT_NO_HMAC=$EXPECT_CASES
EXPECT_PROXY_FILES=$((EXPECT_CASES * 2))

for name in "${PROVIDERS[@]}"; do
    dir=$("$HERE/engine.sh" "$name")
    # MATRIX_SQLCIPHERKIT_ENGINE=DIR: another build folder for SQLCipherKit's side (an engine with a planted bug,
    # to see this test fail).
    [ "$name" != sqlcipherkit ] || dir=${MATRIX_SQLCIPHERKIT_ENGINE:-$dir}
    "$CC" -O1 -DSQLITE_HAS_CODEC -I "$dir/include" -o "$OUT/matrix-$name" "$HERE/matrix.c" "$dir/lib/libsqlcipher.a" \
        -lcrypto -lm -lpthread || fail "linking matrix.c against $dir/lib/libsqlcipher.a failed"
    # The run-time fact: the engine's crypto glue names the provider compiled in.
    "$OUT/matrix-$name" cases >"$OUT/cases-$name.txt"
    [ "$(head -n1 "$OUT/cases-$name.txt")" = "crypto provider: $name" ] \
        || fail "the engine in $dir says '$(head -n1 "$OUT/cases-$name.txt")', not $name"
done
cmp -s <(tail -n +2 "$OUT/cases-sqlcipherkit.txt") <(tail -n +2 "$OUT/cases-reference.txt") || fail "the case lists differ"
tail -n1 "$OUT/cases-sqlcipherkit.txt"
# The cases listed, one a line ("N: page ..."), not the number the program says it has.
cases=$(grep -cE '^[0-9]+: page ' "$OUT/cases-sqlcipherkit.txt" || true)

status=0 files=0 tampered=0 refused=0 no_hmac=0
for writer in "${PROVIDERS[@]}"; do
    mkdir -p "$OUT/written-by-$writer"
    "$OUT/matrix-$writer" write "$OUT/written-by-$writer" >"$OUT/write-$writer.log" \
        || { cat "$OUT/write-$writer.log" >&2; fail "the $writer engine could not write every case"; }
    for reader in "${PROVIDERS[@]}"; do
        "$OUT/matrix-$reader" read "$OUT/written-by-$writer" | tail -n +2 >"$OUT/read-$writer-by-$reader.txt"
        bad=$(grep ' file' "$OUT/read-$writer-by-$reader.txt" | grep -vc ' file ok$' || true)
        files=$((files + $(grep -c ' file' "$OUT/read-$writer-by-$reader.txt")))
        tampered=$((tampered + $(grep -c ' tampered' "$OUT/read-$writer-by-$reader.txt")))
        no_hmac=$((no_hmac + $(grep -c ' tampered (no HMAC)' "$OUT/read-$writer-by-$reader.txt" || true)))
        refused=$((refused + $(grep -c ' tampered: read .*rc 11 .*HMAC verification failed for page 2' \
            "$OUT/read-$writer-by-$reader.txt" || true)))
        if [ "$bad" != 0 ]; then
            { grep ' file' "$OUT/read-$writer-by-$reader.txt" | grep -v ' file ok$' | head -n 5 | cut -c1-200 >&2; } || true
            echo "DIFFERENCE: $bad files written by $writer do not read back exact on $reader" >&2
            status=1
        fi
    done
    if ! diff "$OUT/read-$writer-by-sqlcipherkit.txt" "$OUT/read-$writer-by-reference.txt" >"$OUT/diff-$writer.txt"; then
        { head -n 10 "$OUT/diff-$writer.txt" | cut -c1-200 >&2; } || true
        echo "DIFFERENCE: the two engines read the files $writer wrote differently ($OUT/diff-$writer.txt)" >&2
        status=1
    fi
done
# With an HMAC (compatibility 2-4) a flipped byte must be refused: SQLITE_CORRUPT and page 2 named.
unrefused=$(cat "$OUT"/read-*.txt | awk '/ tampered/ && !/no HMAC/ && !/HMAC verification failed for page 2/' | wc -l)
[ "$unrefused" = 0 ] || { echo "DIFFERENCE: $unrefused tampered copies with an HMAC were not refused" >&2; status=1; }
echo "MATRIX: 2 writers x 2 readers: $files files read back (0 expected to fail: $(cat "$OUT"/read-*.txt | grep ' file' | grep -vc ' file ok$' || true) did), $tampered tampered copies read, $refused refused with SQLITE_CORRUPT and page 2 named ($no_hmac without HMAC: compatibility 1, read the same by both); both readers agree line for line: $([ $status = 0 ] && echo yes || echo NO)"

# The EVP path for real: SQLCipherKit's engine under an openssl.cnf in which another provider (aesproxy, a test
# module: aes-proxy.sh) serves AES-256-CBC, so the provider must leave its direct path (it is taken only with
# OpenSSL's own `default` provider). It writes every case, which both engines (default configuration) read back
# exact, and reads what the reference wrote, line for line as the reference does; the module's own count shows it
# did the AES work.
conf=$("$HERE/aes-proxy.sh")
proxy() { OPENSSL_CONF=$conf AESPROXY_REPORT=1 "$OUT/matrix-sqlcipherkit" "$@"; }
mkdir -p "$OUT/written-by-aesproxy"
proxy write "$OUT/written-by-aesproxy" >"$OUT/write-aesproxy.log" 2>"$OUT/write-aesproxy.err" \
    || { cat "$OUT/write-aesproxy.log" "$OUT/write-aesproxy.err" >&2; fail "under aesproxy the engine could not write every case"; }
served=$(sed -nE 's/^aesproxy: ([0-9]+) cipher contexts, ([0-9]+) updates$/\2/p' "$OUT/write-aesproxy.err")
[ "${served:-0}" -gt 0 ] || { cat "$OUT/write-aesproxy.err" >&2; fail "aesproxy did not serve the AES work (${served:-no report})"; }
proxy_files=0
for reader in "${PROVIDERS[@]}"; do
    "$OUT/matrix-$reader" read "$OUT/written-by-aesproxy" | tail -n +2 >"$OUT/proxy-read-by-$reader.txt"
    proxy_files=$((proxy_files + $(grep -c ' file ok$' "$OUT/proxy-read-by-$reader.txt" || true)))
    if grep ' file' "$OUT/proxy-read-by-$reader.txt" | grep -v ' file ok$' >/dev/null; then
        echo "DIFFERENCE: files written under aesproxy (the EVP path) do not read back exact on $reader" >&2
        status=1
    fi
done
proxy read "$OUT/written-by-reference" 2>"$OUT/read-aesproxy.err" | tail -n +2 >"$OUT/proxy-read-reference.txt"
if ! diff -q "$OUT/proxy-read-reference.txt" "$OUT/read-reference-by-reference.txt" >/dev/null; then
    echo "DIFFERENCE: under aesproxy the engine reads the reference's files differently" >&2
    status=1
fi
echo "AESPROXY: under an openssl.cnf where aesproxy serves AES-256-CBC ($served AES updates by it): $proxy_files files it wrote read back on both engines, the reference's files read line for line as the reference reads them: $([ $status = 0 ] && echo yes || echo NO)"

# Every count against the full matrix's: agreement over fewer cases is a smaller proof, so it fails.
counts=() short=0
at_least() {
    counts+=("$1 $2 (at least $3)")
    if [ "$2" -lt "$3" ]; then
        echo "SHORT: $1: $2, at least $3 expected (see EXPECT_* in run-matrix.sh)" >&2
        short=1
    fi
}
at_least cases "$cases" "$EXPECT_CASES"
at_least files "$files" "$EXPECT_FILES"
at_least tampered "$tampered" "$EXPECT_TAMPERED"
at_least refused "$refused" "$EXPECT_REFUSED"
at_least no_hmac "$no_hmac" "$EXPECT_NO_HMAC"
at_least proxy_files "$proxy_files" "$EXPECT_PROXY_FILES"
[ $short = 0 ] || status=1
joined=$(printf '%s, ' "${counts[@]}")
echo "COUNTS: ${joined%, }: $([ $short = 0 ] && echo yes || echo NO)"
exit $status
