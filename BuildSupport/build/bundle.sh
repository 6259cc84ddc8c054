# shellcheck shell=bash
# The SE-0482 artifact bundle (dist/SQLCipherKit/SQLCipherEngine.artifactbundle): the engine alone, as a
# static library that SwiftPM packages use through .binaryTarget(path:), with its header and module map
# (BuildSupport/files/SQLCipherEngine.*); one variant per target triple (x86_64 and aarch64 Linux: info.json's
# variants, each with its supportedTriples, as SE-0482 lays them out; SwiftPM links the variant whose triple is
# the one it builds for). libcrypto's objects (each architecture's own) are folded into each archive and every
# symbol but the SQLite API is made local: a consumer links no -lcrypto, an OpenSSL of its own cannot clash with
# ours, and `swift package experimental-audit-binary-artifact` finds nothing undefined beyond the C library.

# Writes $2: the engine archive $1 with libcrypto ($3, of the same architecture) folded in, every symbol local but
# the SQLite API and SQLCipherKit's crypto glue (sqlcipherkit_*, what the Swift layer needs). $4: the binutils'
# prefix for that architecture (empty: the host's; aarch64-linux-gnu- for the aarch64 engine).
fold_libcrypto() {
    local engine=$1 out=$2 libcrypto=$3 tools=${4:-} work leaked missing
    [ -f "$libcrypto" ] || die "libcrypto.a not found at $libcrypto (libssl-dev ships it): the artifact bundle folds it in"
    temp_dir work sqlcipherkit-bundle
    (cd "$work" && "${tools}ar" x "$engine") || die "cannot extract $engine"
    # -d allocates common symbols, so that they too can be made local.
    "${tools}ld" -r -d -o "$work/engine+crypto.o" "$work"/*.o "$libcrypto" || die "ld -r could not fold libcrypto in"
    "${tools}objcopy" --wildcard --keep-global-symbol='sqlite3_*' --keep-global-symbol='sqlcipherkit_*' \
        "$work/engine+crypto.o" "$work/SQLCipherEngine.o" || die "objcopy could not localize libcrypto's symbols"
    leaked=$("${tools}nm" -g --defined-only "$work/SQLCipherEngine.o" | awk '$3 !~ /^(sqlite3|sqlcipherkit)_/ { print $3 }' | head -n5)
    [ -z "$leaked" ] || die "the bundle's archive exports more than the SQLite API and SQLCipherKit's glue: $leaked"
    missing=$("${tools}nm" -u "$work/SQLCipherEngine.o" \
        | awk '$2 ~ /^(EVP_|OPENSSL_|PKCS5_|ERR_|RAND_|OBJ_|CRYPTO_)/ { print $2 }' | head -n5)
    [ -z "$missing" ] || die "libcrypto was not wholly folded into the bundle: $missing"
    mkdir -p "$(dirname "$out")"
    rm -f "$out"
    (cd "$work" && "${tools}ar" rcsD "$out" SQLCipherEngine.o)
}

# The folded engine archive of a bundle for a triple: its path inside the bundle.
bundle_variant() { echo "SQLCipherEngine/$1/libsqlcipher.a"; }

# write_artifact_bundle ENGINE.a ARM64_ENGINE.a BUNDLE TRIPLE (absolute paths; TRIPLE: the host's).
write_artifact_bundle() {
    local engine=$1 arm64_engine=$2 bundle=$3 triple=$4 include=$3/SQLCipherEngine/include
    fold_libcrypto "$engine" "$bundle/$(bundle_variant "$triple")" "$("$CC" -print-file-name=libcrypto.a)"
    fold_libcrypto "$arm64_engine" "$bundle/$(bundle_variant "$ARM64_TRIPLE")" "$ARM64_LIBCRYPTO" "$ARM64_TOOLS"
    mkdir -p "$include"
    cp "$BUILD_DIR/include/sqlite3.h" "$include/sqlite3.h"
    cp "$ROOT/BuildSupport/files/SQLCipherEngine.h" "$include/SQLCipherEngine.h"
    cp "$ROOT/BuildSupport/files/SQLCipherEngine.modulemap" "$include/module.modulemap"
    python3 "$ROOT/BuildSupport/bundle_info.py" "$bundle/info.json" --name SQLCipherEngine --version "$PIN_VERSION" \
        --variant "$triple=$(bundle_variant "$triple")" --variant "$ARM64_TRIPLE=$(bundle_variant "$ARM64_TRIPLE")" || die "could not write $bundle/info.json"
}
