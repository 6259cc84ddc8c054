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
# Vendor/build/crypto-provider/ (gitignored). Exit status: 0 no difference on any libcrypto; 1 otherwise.
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
stamp=$(cat "$AMALGAMATION/sqlite3.c" "$ROOT/BuildSupport/engine/sqlcipherkit_provider.c" "$HERE/differential.c" \
    "$HERE/known_answers.h" <(printf '%s\n' "${FLAGS[@]}" "$("$CC" --version | head -n1)") | sha256sum | cut -d' ' -f1)
if [ ! -f "$OUT/differential.o" ] || [ "$(cat "$OUT/differential.stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "    compiling differential.c with the reference amalgamation and SQLCipherKit's provider (about a minute)"
    rm -f "$OUT/differential.o" "$OUT/differential.stamp"
    "$CC" -c "${FLAGS[@]}" -I "$AMALGAMATION" -I "$ROOT/BuildSupport/engine" -I "$HERE" \
        -o "$OUT/differential.o" "$HERE/differential.c" 2>"$OUT/compile.log" \
        || { cat "$OUT/compile.log" >&2; echo "run-differential.sh: compiling failed" >&2; exit 1; }
    echo "$stamp" >"$OUT/differential.stamp"
fi

status=0
# 1. The system's libcrypto.
"$CC" -o "$OUT/differential-system" "$OUT/differential.o" -lcrypto -lm -lpthread
echo "==> libcrypto: the system's ($(ldd "$OUT/differential-system" | awk '/libcrypto/ {print $3}'))"
"$OUT/differential-system" "$SEED" "$SCALE" || status=1

# 2. The sqlcipher3 wheel's: OpenSSL linked statically into its Python extension module, which exports libcrypto's
# functions; the program links that module (and libpython, which the module needs) with an rpath, no system libcrypto.
wheel_module=$(ls "$ROOT"/Vendor/build/python-venv/lib/python3*/site-packages/sqlcipher3/_sqlite3*.so 2>/dev/null | head -n1 || true)
if [ -n "$wheel_module" ] && nm -D --defined-only "$wheel_module" | grep -c ' T EVP_MAC_fetch$' >/dev/null; then
    python_lib=$("$ROOT/Vendor/build/python-venv/bin/python" -c \
        'import sysconfig; print(sysconfig.get_config_var("LDLIBRARY") or "")' | sed -E 's/^lib//; s/\.(so|a).*$//')
    "$CC" -o "$OUT/differential-wheel" "$OUT/differential.o" "$wheel_module" -l"$python_lib" -lm -lpthread \
        -Wl,-rpath,"$(dirname "$wheel_module")"
    if ldd "$OUT/differential-wheel" | grep -q 'libcrypto'; then
        echo "run-differential.sh: the wheel build links a system libcrypto too" >&2
        exit 1
    fi
    echo "==> libcrypto: the sqlcipher3 wheel's ($wheel_module)"
    "$OUT/differential-wheel" "$SEED" "$SCALE" || status=1
elif [ "${DIFFERENTIAL_REQUIRE_WHEEL:-0}" = 1 ]; then
    echo "run-differential.sh: no sqlcipher3 wheel in Vendor/build/python-venv (the interop tests install it)" >&2
    exit 1
else
    echo "==> libcrypto: the sqlcipher3 wheel's: NOT RUN (Vendor/build/python-venv has no sqlcipher3; the interop tests install it)"
fi
exit $status
