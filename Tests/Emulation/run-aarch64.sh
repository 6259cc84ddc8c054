#!/usr/bin/env bash
# Tests/Emulation/run-aarch64.sh: proof that dist/'s aarch64 engine works, on this x86_64 machine, under Debian's
# qemu-user-static (Tests/run-all.sh runs it; ./build-sqlcipher.sh --test-tools installs what it needs).
#
#   1. Tests/Emulation/consumer.c is built for aarch64 with the cross compiler against the variant that
#      SQLCipherEngine.artifactbundle/info.json names for aarch64-unknown-linux-gnu (the path SwiftPM takes
#      for that triple), and natively against the x86_64 variant; each executable must be of its machine and
#      need no libcrypto (folded into the variants) and no libsqlite3.
#   2. Under qemu: the self-check (the emulated machine says aarch64; cipher_version is the pin's; cipher_status
#      1), an encrypted database written and read back, a wrong key refused; the file is not plaintext.
#   3. Cross-architecture files: written on aarch64, read on x86_64, and the other way round; wrong keys refused
#      on both sides.
#   4. The aarch64 engine-only archive through its pkg-config file (lib/aarch64-unknown-linux-gnu/pkgconfig),
#      linked against the system's arm64 libcrypto, writes and reads under qemu.
# SQLCipher's own test files on an aarch64 testfixture are a part of their own in Tests/run-all.sh
# (Tests/Upstream/run-upstream.sh with UPSTREAM_TARGET=aarch64).
#
# Prints one "ok:" or "FAIL:" line per check and "EMULATION: N passed, N failed"; exit 1 when any failed.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIST=${SQLCIPHERKIT_DIST:-$ROOT/dist/SQLCipherKit}
BUNDLE=$DIST/SQLCipherEngine.artifactbundle
ARM64_TRIPLE=aarch64-unknown-linux-gnu
ARM64_CC=${ARM64_CC:-aarch64-linux-gnu-gcc}
CC=${CC:-cc}
# The emulated CPU: Neoverse N1, the core of AWS Graviton2 and Ampere Altra (ARMv8.2, no SHA-512 or SVE
# extensions). QEMU's default "max" CPU also runs everything, at half the speed for SQLCipher's PBKDF2-HMAC-SHA512
# (OpenSSL then takes the SHA-512 instructions QEMU emulates slowly): 3.2 s of CPU against 1.45 s for one key
# derivation, measured here. QEMU_AARCH64_CPU chooses another (qemu-aarch64-static -cpu help lists them).
QEMU=(qemu-aarch64-static -cpu "${QEMU_AARCH64_CPU:-neoverse-n1}")
ROWS=500
PASSED=0 FAILED=0

ok() { PASSED=$((PASSED + 1)); printf 'ok: %s\n' "$*"; }
bad() { FAILED=$((FAILED + 1)); printf 'FAIL: %s\n' "$*"; }
check() { # check DESCRIPTION COMMAND...: runs COMMAND, its output indented; ok when it exits 0
    local what=$1 output status
    shift
    output=$("$@" 2>&1)
    status=$?
    [ -z "$output" ] || sed 's/^/    /' <<<"$output"
    if [ "$status" = 0 ]; then ok "$what"; else bad "$what (exit $status)"; fi
    LAST_OUTPUT=$output
    return "$status"
}
finish() {
    printf 'EMULATION: %s passed, %s failed\n' "$PASSED" "$FAILED"
    [ "$FAILED" = 0 ]
    exit
}
stop() { bad "$*"; finish; }

for tool in qemu-aarch64-static "$ARM64_CC" "$CC" readelf python3 pkg-config; do
    command -v "$tool" >/dev/null || stop "$tool is missing (./build-sqlcipher.sh --test-tools installs it)"
done
[ -f "$BUNDLE/info.json" ] || stop "no $BUNDLE/info.json: run ./build-sqlcipher.sh first"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-emulation.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
PIN_VERSION=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sqlcipherVersion"])' \
    "$ROOT/Vendor/build/pin.json") || stop "no Vendor/build/pin.json: run ./build-sqlcipher.sh first"

# The archive info.json names for a triple (empty when none), as SwiftPM reads it: the variant whose
# supportedTriples holds the triple.
variant_for() {
    python3 - "$BUNDLE/info.json" "$1" <<'EOF'
import json, sys
info = json.load(open(sys.argv[1]))
for artifact in info["artifacts"].values():
    for variant in artifact["variants"]:
        if sys.argv[2] in variant.get("supportedTriples", []):
            print(variant["path"])
EOF
}

# The ELF machine of a file, as readelf names it.
machine_of() { readelf -h "$1" 2>/dev/null | sed -n 's/^ *Machine: *//p' | sort -u; }

# build NAME COMPILER ARCHIVE EXPECTED_MACHINE: the consumer against a variant of the bundle.
build_consumer() {
    local name=$1 compiler=$2 archive=$3 machine=$4 needed
    check "$name: consumer.c builds against $(basename "$(dirname "$archive")")/libsqlcipher.a of the bundle" \
        "$compiler" -O1 -Werror=implicit-function-declaration -I "$BUNDLE/SQLCipherEngine/include" \
        -o "$WORK/$name" "$ROOT/Tests/Emulation/consumer.c" "$archive" -lm -lpthread || return 1
    [ "$(machine_of "$WORK/$name")" = "$machine" ] && ok "$name: the executable is $machine" \
        || bad "$name: the executable is '$(machine_of "$WORK/$name")', not $machine"
    needed=$(readelf -d "$WORK/$name" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    if grep -qE 'libcrypto|libsqlite3' <<<"$needed"; then
        bad "$name: needs $needed (libcrypto is folded into the variant; no system SQLite)"
    else
        ok "$name: needs only $needed"
    fi
}

arm64() { "${QEMU[@]}" "$WORK/consumer-aarch64" "$@"; }
native() { "$WORK/consumer-x86_64" "$@"; }

# Not plaintext: no SQLite header, no marker.
at_rest() {
    local file=$1 marker=$2
    if cmp -s -n 16 "$file" <(printf 'SQLite format 3\0'); then bad "$file begins with 'SQLite format 3'"; return; fi
    if grep -qaF "$marker" "$file"; then bad "the marker is readable in $(basename "$file")"; return; fi
    ok "$(basename "$file") is encrypted at rest ($(wc -c <"$file") bytes, no header, no marker)"
}

echo "==> the bundle's variants (info.json) and their machines"
ARM64_VARIANT=$(variant_for "$ARM64_TRIPLE")
HOST_VARIANT=$(variant_for x86_64-unknown-linux-gnu)
[ -n "$ARM64_VARIANT" ] && [ -f "$BUNDLE/$ARM64_VARIANT" ] || stop "info.json names no existing variant for $ARM64_TRIPLE"
[ -n "$HOST_VARIANT" ] && [ -f "$BUNDLE/$HOST_VARIANT" ] || stop "info.json names no existing variant for x86_64"
ok "info.json: $ARM64_TRIPLE -> $ARM64_VARIANT; x86_64-unknown-linux-gnu -> $HOST_VARIANT"

echo "==> build the consumer for both machines"
build_consumer consumer-aarch64 "$ARM64_CC" "$BUNDLE/$ARM64_VARIANT" AArch64 || finish
build_consumer consumer-x86_64 "$CC" "$BUNDLE/$HOST_VARIANT" "Advanced Micro Devices X86-64" || finish

echo "==> under qemu-aarch64-static: self-check, write, read, wrong key"
started=$SECONDS
if check "aarch64: self-check" arm64 selfcheck; then
    grep -qx 'machine: aarch64' <<<"$LAST_OUTPUT" && ok "aarch64: the program ran on an emulated aarch64" \
        || bad "aarch64: the program did not run as aarch64"
    grep -qx "cipher_version: $PIN_VERSION community" <<<"$LAST_OUTPUT" && ok "aarch64: cipher_version is the pin's $PIN_VERSION" \
        || bad "aarch64: cipher_version is not the pin's $PIN_VERSION"
fi
KEY_A="aarch64-key-$RANDOM$RANDOM" KEY_X="x86_64-key-$RANDOM$RANDOM" MARKER="emulation-marker-$RANDOM$RANDOM"
check "aarch64: writes an encrypted database" arm64 write "$WORK/from-aarch64.db" "$KEY_A" "$MARKER" "$ROWS"
at_rest "$WORK/from-aarch64.db" "$MARKER"
check "aarch64: reads it back ($ROWS rows)" arm64 read "$WORK/from-aarch64.db" "$KEY_A" "$MARKER" "$ROWS"
check "aarch64: refuses a wrong key" arm64 wrongkey "$WORK/from-aarch64.db" "$KEY_X"

echo "==> cross-architecture files"
check "x86_64: self-check" native selfcheck
check "x86_64 reads the file aarch64 wrote" native read "$WORK/from-aarch64.db" "$KEY_A" "$MARKER" "$ROWS"
check "x86_64 refuses it with a wrong key" native wrongkey "$WORK/from-aarch64.db" "$KEY_X"
check "x86_64: writes an encrypted database" native write "$WORK/from-x86_64.db" "$KEY_X" "$MARKER" "$ROWS"
at_rest "$WORK/from-x86_64.db" "$MARKER"
check "aarch64 reads the file x86_64 wrote" arm64 read "$WORK/from-x86_64.db" "$KEY_X" "$MARKER" "$ROWS"
check "aarch64 refuses it with a wrong key" arm64 wrongkey "$WORK/from-x86_64.db" "$KEY_A"

echo "==> the aarch64 engine-only archive through pkg-config (system arm64 libcrypto)"
PC_DIR=$DIST/lib/$ARM64_TRIPLE/pkgconfig
if flags=$(PKG_CONFIG_PATH=$PC_DIR PKG_CONFIG_LIBDIR=$PC_DIR pkg-config --cflags --libs sqlcipherkit); then
    echo "    pkg-config --cflags --libs sqlcipherkit: $flags"
    eval "pc_flags=($flags)"
    if check "aarch64: consumer.c builds with the arm64 pkg-config flags" "$ARM64_CC" -O1 \
        -Werror=implicit-function-declaration -I "$BUNDLE/SQLCipherEngine/include" -o "$WORK/consumer-pc" \
        "$ROOT/Tests/Emulation/consumer.c" "${pc_flags[@]}"; then
        grep -q 'libcrypto' <<<"$(readelf -d "$WORK/consumer-pc")" && ok "aarch64 (pkg-config): links the system's arm64 libcrypto" \
            || bad "aarch64 (pkg-config): does not link libcrypto"
        check "aarch64 (pkg-config): self-check" "${QEMU[@]}" "$WORK/consumer-pc" selfcheck
        check "aarch64 (pkg-config): reads the file x86_64 wrote" "${QEMU[@]}" "$WORK/consumer-pc" read \
            "$WORK/from-x86_64.db" "$KEY_X" "$MARKER" "$ROWS"
    fi
else
    bad "pkg-config does not know sqlcipherkit in $PC_DIR"
fi
echo "    (emulated part: $((SECONDS - started)) s)"
finish
