#!/usr/bin/env bash
# Tests/CryptoProvider/run-differential.sh: builds and runs differential.c (SQLCipherKit's crypto provider against
# SQLCipher's reference provider, both compiled into one program, plus known-answer vectors) on every OpenSSL
# libcrypto this machine has: the system's, and the one the interop tests' sqlcipher3 wheel carries (OpenSSL 3.6
# linked into its extension module, symbols exported), when Vendor/build/python-venv holds it.
#
#   run-differential.sh [SEED [SCALE]]      SEED: the random cases' seed (default: random, printed); SCALE
#                                          multiplies the number of random cases (default 1)
#   DIFFERENTIAL_REQUIRE_WHEEL=1            fail, rather than say so, when the wheel's libcrypto is not there
#
# The reference provider comes from the pinned tarball (the reference engine's amalgamation, built by
# engine.sh through build-sqlcipher.sh --crypto-provider reference); SQLCipherKit's from the checkout's
# BuildSupport/engine/sqlcipherkit_provider.c as it is now (a planted bug shows at once). The object is rebuilt
# when either, this folder's files, the flags or the compiler change (a stamp). Everything goes to
# Vendor/build/crypto-provider/ (gitignored). Every program's TOTAL line must count at least 81 known-answer
# checks plus 5,300 random ones per SCALE (5,381 at scale 1): "0 differences" over fewer checks proves less, and
# the run fails with the count and the minimum. Exit status: 0 no difference on any libcrypto and no count short;
# 1 otherwise.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/Tests/CryptoProvider
OUT=$ROOT/Vendor/build/crypto-provider
CC=${CC:-cc}
SEED=${1:-$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')}
SCALE=${2:-1}
mkdir -p "$OUT"

REFERENCE=$("$HERE/engine.sh" reference)
AMALGAMATION=$REFERENCE/amalgamation
grep -q '^int sqlcipher_openssl_setup' "$AMALGAMATION/sqlite3.c" \
    || { echo "run-differential.sh: $AMALGAMATION/sqlite3.c lacks SQLCipher's reference provider" >&2; exit 1; }
! grep -q '^int sqlcipherkit_openssl_setup' "$AMALGAMATION/sqlite3.c" \
    || { echo "run-differential.sh: $AMALGAMATION/sqlite3.c already holds SQLCipherKit's provider" >&2; exit 1; }

# Both providers compiled: the reference by SQLCIPHER_CRYPTO_OPENSSL, ours by its SQLCIPHER_CRYPTO_CUSTOM guard.
FLAGS=(-O2 -DNDEBUG -DSQLITE_HAS_CODEC -DSQLCIPHER_CRYPTO_OPENSSL -DSQLCIPHER_CRYPTO_CUSTOM=sqlcipherkit_openssl_setup
    -DSQLITE_EXTRA_INIT=sqlcipher_extra_init -DSQLITE_EXTRA_SHUTDOWN=sqlcipher_extra_shutdown -DSQLITE_THREADSAFE=1
    -DSQLITE_TEMP_STORE=3 -DSQLCIPHER_OMIT_DEFAULT_LOGGING -Wno-deprecated-declarations)

# compile VARIANT [FLAG...]: the object for our provider compiled as is (default), with OPENSSL_NO_DEPRECATED_3_0
# (headers without the low-level SHA API: the HMAC must go through EVP_MAC), or with SQLCIPHERKIT_PROVIDER_EVP
# (the EVP paths the provider falls back to when the direct one is not safe).
compile() {
    local variant=$1 stamp object=$OUT/differential-$1.o
    shift
    local extra=("$@")
    stamp=$(cat "$AMALGAMATION/sqlite3.c" "$ROOT/BuildSupport/engine/sqlcipherkit_provider.c" "$HERE/differential.c" \
        "$HERE/known_answers.h" <(printf '%s\n' "${FLAGS[@]}" ${extra[@]+"${extra[@]}"} "$("$CC" --version | head -n1)") \
        | sha256sum | cut -d' ' -f1)
    if [ ! -f "$object" ] || [ "$(cat "$object.stamp" 2>/dev/null)" != "$stamp" ]; then
        echo "    compiling differential.c ($variant) with the reference amalgamation and SQLCipherKit's provider (a minute)"
        rm -f "$object" "$object.stamp"
        "$CC" -c "${FLAGS[@]}" ${extra[@]+"${extra[@]}"} -I "$AMALGAMATION" -I "$ROOT/BuildSupport/engine" -I "$HERE" \
            -o "$object" "$HERE/differential.c" 2>"$OUT/compile-$variant.log" \
            || { cat "$OUT/compile-$variant.log" >&2; echo "run-differential.sh: compiling ($variant) failed" >&2; exit 1; }
        echo "$stamp" >"$object.stamp"
    fi
}
compile default
# OPENSSL_NO_DEPRECATED_3_0 itself is set by <openssl/macros.h> from these two (a -D of it is undone there).
compile no-deprecated -DOPENSSL_API_COMPAT=30000 -DOPENSSL_NO_DEPRECATED
compile evp -DSQLCIPHERKIT_PROVIDER_EVP

status=0
# The checks one program must count (differential.c): 81 known-answer checks (63 HMAC, 14 PBKDF2, 4 AES) and, per
# SCALE, 3,000 HMACs, 300 PBKDF2 and 1,000 AES cases of 2 checks each. Fewer means cases were lost.
MIN_CHECKS=$((81 + 5300 * SCALE))

# differential PROGRAM [ARG...]: runs one differential program (its output, standard error included, shown when it
# ends), sets status=1 when it fails, and also when its TOTAL line counts fewer than MIN_CHECKS checks (or is absent).
differential() {
    local log=$OUT/differential-run.log rc=0 checks
    "$@" >"$log" 2>&1 || rc=$?
    cat "$log"
    [ "$rc" = 0 ] || status=1
    checks=$(sed -nE 's/^TOTAL: ([0-9]+) checks, .*/\1/p' "$log" | tail -n1)
    if [ "${checks:-0}" -lt "$MIN_CHECKS" ]; then
        echo "run-differential.sh: SHORT: ${checks:-no TOTAL line, no} checks, at least $MIN_CHECKS expected (81 known answers + 5,300 random cases x SCALE $SCALE)" >&2
        status=1
    fi
}

# 1. The system's libcrypto.
"$CC" -o "$OUT/differential-system" "$OUT/differential-default.o" -lcrypto -lm -lpthread
echo "==> libcrypto: the system's ($(ldd "$OUT/differential-system" | awk '/libcrypto/ {print $3}'))"
differential "$OUT/differential-system" "$SEED" "$SCALE"

# 2. The sqlcipher3 wheel's: OpenSSL linked statically into its Python extension module, which exports libcrypto's
# functions; the program links that module (and libpython, which the module needs) with an rpath, no system libcrypto.
wheel_module=$(ls "$ROOT"/Vendor/build/python-venv/lib/python3*/site-packages/sqlcipher3/_sqlite3*.so 2>/dev/null | head -n1 || true)
if [ -n "$wheel_module" ] && nm -D --defined-only "$wheel_module" | grep -c ' T EVP_MAC_fetch$' >/dev/null; then
    python_lib=$("$ROOT/Vendor/build/python-venv/bin/python" -c \
        'import sysconfig; print(sysconfig.get_config_var("LDLIBRARY") or "")' | sed -E 's/^lib//; s/\.(so|a).*$//')
    "$CC" -o "$OUT/differential-wheel" "$OUT/differential-default.o" "$wheel_module" -l"$python_lib" -lm -lpthread \
        -Wl,-rpath,"$(dirname "$wheel_module")"
    if ldd "$OUT/differential-wheel" | grep 'libcrypto' >/dev/null; then
        echo "run-differential.sh: the wheel build links a system libcrypto too" >&2
        exit 1
    fi
    echo "==> libcrypto: the sqlcipher3 wheel's ($wheel_module)"
    differential "$OUT/differential-wheel" "$SEED" "$SCALE"
elif [ "${DIFFERENTIAL_REQUIRE_WHEEL:-0}" = 1 ]; then
    echo "run-differential.sh: no sqlcipher3 wheel in Vendor/build/python-venv (the interop tests install it)" >&2
    exit 1
else
    echo "==> libcrypto: the sqlcipher3 wheel's: NOT RUN (Vendor/build/python-venv has no sqlcipher3; the interop tests install it)"
fi

# 3. The fallbacks, on the system's libcrypto: the provider compiled without the low-level SHA API, and with its
# EVP paths forced (what it takes when AES is not served by OpenSSL's default provider, or under FIPS properties).
for variant in no-deprecated evp; do
    "$CC" -o "$OUT/differential-$variant" "$OUT/differential-$variant.o" -lcrypto -lm -lpthread
    echo "==> libcrypto: the system's, SQLCipherKit's provider compiled $variant"
    differential "$OUT/differential-$variant" "$SEED" "$SCALE"
done

# 4. openssl.cnf setting FIPS default properties (OPENSSL_CONF). This machine has no FIPS module, so AES-256-CBC
# cannot be fetched at all: SQLCipherKit's provider fails in ctx_init rather than take a non-FIPS path.
cat >"$OUT/openssl-fips-properties.cnf" <<'CONF'
openssl_conf = openssl_init
[openssl_init]
alg_section = algorithm_sect
[algorithm_sect]
default_properties = fips=yes
CONF
echo "==> OPENSSL_CONF with default_properties = fips=yes (no FIPS module installed)"
set +e
OPENSSL_CONF=$OUT/openssl-fips-properties.cnf "$OUT/differential-system" "$SEED" "$SCALE" 2>&1
fips_status=$?
set -e
echo "exit status under FIPS properties: $fips_status (2: SQLCipher could not set a provider up: sqlite3_initialize or ctx_init failed)"
[ "$fips_status" = 2 ] || status=1

# 5. openssl.cnf having another provider serve AES-256-CBC (aesproxy, a test module: aes-proxy.sh): SQLCipherKit's
# provider must take the EVP path (its direct path is for OpenSSL's own `default` provider only), and agree.
conf=$("$HERE/aes-proxy.sh")
echo "==> OPENSSL_CONF loading aesproxy, which serves AES-256-CBC (default_properties = ?provider=aesproxy)"
differential env OPENSSL_CONF="$conf" AESPROXY_REPORT=1 "$OUT/differential-system" "$SEED" "$SCALE"
exit $status
