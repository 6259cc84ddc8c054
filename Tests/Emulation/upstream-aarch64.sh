# shellcheck shell=bash
# Sourced by Tests/Upstream/harness.sh (for run-upstream.sh) when UPSTREAM_TARGET=aarch64: the testfixture of the
# native run (the shipped amalgamation, the engine's flags and crypto provider, the test sources of the pinned
# tarball) cross-built for aarch64-unknown-linux-gnu (Debian's gcc-aarch64-linux-gnu, arm64 Tcl and OpenSSL from
# multiarch: tcl-dev:arm64, libssl-dev:arm64; ./build-sqlcipher.sh --test-tools installs them), and run under
# qemu-user-static. Its check compares it with the cross-built engine build-sqlcipher.sh ships for aarch64. Only the
# files UPSTREAM_FILES names run (Tests/run-all.sh names sqlcipher-core, -compatibility and -rekey): emulation is
# 10-20 times slower.
# Its harness lives in Vendor/build/upstream-aarch64/.

UPSTREAM_DIR=$ROOT/Vendor/build/upstream-aarch64
LOG=$UPSTREAM_DIR/sqlcipher-test.log
CC=${UPSTREAM_AARCH64_CC:-aarch64-linux-gnu-gcc}
# The shipped aarch64 engine (Vendor/build/TARGET/lib/libsqlcipher.a), and the nm that reads aarch64 objects.
ENGINE_ARCHIVE_TARGET=aarch64-unknown-linux-gnu
HARNESS_NM=${UPSTREAM_AARCH64_NM:-aarch64-linux-gnu-nm}
# configure cross-compiles; its build-time tools (lemon, mkkeywordhash...) are built with the native compiler.
CONFIGURE_HOST=(--host=aarch64-linux-gnu)
# The arm64 Tcl's tclConfig.sh (tcl_config_dir looks here first).
TCL_CONFIG_CANDIDATES=(/usr/lib/aarch64-linux-gnu/tcl8.6)
# Every aarch64 program runs through the emulator (this machine has no binfmt_misc registration to rely on), as
# the CPU of Graviton2 and Ampere Altra servers (QEMU_AARCH64_CPU, run-aarch64.sh says why).
RUN_PREFIX=(qemu-aarch64-static -cpu "${QEMU_AARCH64_CPU:-neoverse-n1}")
command -v qemu-aarch64-static >/dev/null \
    || die "qemu-aarch64-static is missing: ./build-sqlcipher.sh --test-tools installs qemu-user-static"
command -v "$CC" >/dev/null || die "$CC is missing: ./build-sqlcipher.sh installs gcc-aarch64-linux-gnu"
[ "${UPSTREAM_CRYPTO_PROVIDER:-sqlcipherkit}" = sqlcipherkit ] \
    || die "UPSTREAM_TARGET=aarch64 runs on SQLCipherKit's crypto provider (the engine's) only"
[ -n "${UPSTREAM_FILES:-}" ] || die "UPSTREAM_TARGET=aarch64 runs only the files UPSTREAM_FILES names (emulation is slow)"
