# shellcheck shell=bash
# Phase "engine for aarch64-unknown-linux-gnu (cross)": the same amalgamation (pin, local changes, crypto provider),
# compiled with the same flags by Debian's cross compiler (gcc-aarch64-linux-gnu) against Debian's arm64 OpenSSL
# (libssl-dev:arm64, multiarch), into $BUILD_DIR/aarch64-unknown-linux-gnu/lib/libsqlcipher.a; verified like the
# native engine, with the cross binutils (verify-symbols.sh picks them from the archive's ELF machine). Skipped
# when its stamp is unchanged. Only the engine is cross-built: the Swift layer ships as source (the release
# packages) and compiles on the consumer's machine; no aarch64 Swift SDK is needed or used here.
#
# dist/ then carries both triples wherever a binary ships (bundle.sh, release.sh, dist.sh); the proof that the
# aarch64 engine runs is Tests/Emulation/run-aarch64.sh, under qemu-user-static, in the test command.

ARM64_TRIPLE=aarch64-unknown-linux-gnu
# Debian's multiarch name for arm64: the cross tools' prefix and the folder of libssl-dev:arm64's files.
ARM64_MULTIARCH=aarch64-linux-gnu
ARM64_TOOLS=$ARM64_MULTIARCH-
ARM64_CC=${ARM64_CC:-${ARM64_TOOLS}gcc}
# libssl-dev:arm64's architecture-dependent headers (the others are shared with the native package, same version).
ARM64_OPENSSL_INCLUDE=/usr/include/$ARM64_MULTIARCH/openssl
ARM64_LIBCRYPTO=/usr/lib/$ARM64_MULTIARCH/libcrypto.a
ARM64_TCL_CONFIG=/usr/lib/$ARM64_MULTIARCH/tcl8.6/tclConfig.sh

# The Debian packages missing for the aarch64 engine (and, with "yes", for its tests under emulation), one a line.
# libssl-dev comes with libssl-dev:arm64: multiarch packages of one source must have the same version, so the
# native one is upgraded with it when the archive has a newer one.
missing_arm64_packages() {
    local want_test_tools=$1
    command -v "${ARM64_TOOLS}gcc" >/dev/null || echo gcc-aarch64-linux-gnu
    # The cross C library (a recommendation of the cross compiler, which the build installs without).
    [ -e "/usr/$ARM64_MULTIARCH/include/stdio.h" ] || echo libc6-dev-arm64-cross
    if [ ! -e "$ARM64_OPENSSL_INCLUDE/opensslconf.h" ] || [ ! -e "$ARM64_LIBCRYPTO" ]; then
        echo libssl-dev:arm64
        echo libssl-dev
    fi
    [ "$want_test_tools" = yes ] || return 0
    # Tests/Emulation: runs aarch64 programs (the C consumer, SQLCipher's testfixture) on this machine.
    command -v qemu-aarch64-static >/dev/null || echo qemu-user-static
    # The aarch64 testfixture links the arm64 Tcl library.
    [ -e "$ARM64_TCL_CONFIG" ] || echo tcl-dev:arm64
}

arm64_cc_version() { "$ARM64_CC" --version | head -n1; }

# OpenSSL's version as the arm64 headers say it (the libcrypto folded into the aarch64 bundle variant).
arm64_openssl_version() {
    printf '#include <openssl/opensslv.h>\nOPENSSL_VERSION_STR\n' | "$ARM64_CC" -E -P -x c - 2>/dev/null \
        | tail -n1 | tr -d '" '
}

# The arm64 engine archive (after build_arm64_engine).
arm64_engine() { echo "$BUILD_DIR/$ARM64_TRIPLE/lib/libsqlcipher.a"; }

# Compiles the amalgamation and SQLCipherKit's crypto glue with the cross compiler, as compile_engine_archive
# does natively (same flags, same prefix maps, deterministic archive).
compile_arm64_engine_archive() {
    local dir=$1 lib=$1/lib/libsqlcipher.a
    mkdir -p "$dir/obj" "$dir/lib"
    note "$ARM64_CC -c ${ENGINE_CFLAGS[*]} sqlite3.c (crypto provider: $CRYPTO_PROVIDER)"
    (cd "$BUILD_DIR/amalgamation" && "$ARM64_CC" -c "${ENGINE_CFLAGS[@]}" \
        -ffile-prefix-map="$BUILD_DIR"=. -ffile-prefix-map="$ROOT"=. \
        -o "$dir/obj/sqlite3.o" sqlite3.c) || die "cross-compiling the engine for $ARM64_TRIPLE failed"
    (cd "$ROOT/BuildSupport/engine" && "$ARM64_CC" -c "${ENGINE_CFLAGS[@]}" -ffile-prefix-map="$ROOT"=. \
        -o "$dir/obj/sqlcipherkit_crypto.o" sqlcipherkit_crypto.c) \
        || die "cross-compiling the crypto glue for $ARM64_TRIPLE failed"
    rm -f "$lib"
    "${ARM64_TOOLS}ar" rcsD "$lib" "$dir/obj/sqlite3.o" "$dir/obj/sqlcipherkit_crypto.o" \
        || die "${ARM64_TOOLS}ar could not write $lib"
}

build_arm64_engine() {
    local dir=$BUILD_DIR/$ARM64_TRIPLE lib stamp stamp_file=$BUILD_DIR/$ARM64_TRIPLE/engine.stamp
    lib=$(arm64_engine)
    command -v "$ARM64_CC" >/dev/null || die "the cross compiler $ARM64_CC is missing (apt-get install gcc-aarch64-linux-gnu)"
    [ -e "$ARM64_OPENSSL_INCLUDE/opensslconf.h" ] || die "arm64 OpenSSL headers missing (apt-get install libssl-dev:arm64)"
    stamp=$(stamp_of "$(cat "$BUILD_DIR/amalgamation.stamp")" "${ENGINE_CFLAGS[@]}" "$(arm64_cc_version)" \
        "$(sha256_of "$ROOT/BuildSupport/engine/sqlcipherkit_crypto.c")" "$(arm64_openssl_version)" "$(sha256_of "$ARM64_OPENSSL_INCLUDE/configuration.h")" \
        arm64-engine-v1)
    if [ -s "$lib" ] && stamp_matches "$stamp_file" "$stamp"; then
        note "up to date (pin, flags and cross compiler unchanged): $lib"
    else
        rm -f "$stamp_file"
        compile_arm64_engine_archive "$dir"
        echo "$stamp" >"$stamp_file"
    fi
    # Verified even when up to date, as the native one: codec present, no plain engine, the provider selected.
    "$ROOT/verify-symbols.sh" "$lib" >"$dir/engine-verify.log" 2>&1 || {
        cat "$dir/engine-verify.log" >&2
        die "the $ARM64_TRIPLE engine archive lacks SQLCipher's codec: refusing to build an artifact that would write plaintext"
    }
    NM=${ARM64_TOOLS}nm check_engine_provider "$lib"
    check_archive_machine "$lib" AArch64
    note "$ARM64_TRIPLE libsqlcipher.a: codec symbols present, crypto provider $CRYPTO_PROVIDER, SHA-256 $(sha256_of "$lib")"
}

# Stops unless every member of archive $1 is an ELF object for machine $2 (readelf reads any ELF machine).
check_archive_machine() {
    local archive=$1 machine=$2 found
    found=$(readelf -h "$archive" 2>/dev/null | sed -n 's/^ *Machine: *//p' | sort -u)
    [ "$found" = "$machine" ] || die "$archive holds objects for '${found:-nothing}', not only '$machine'"
}
