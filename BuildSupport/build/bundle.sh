# shellcheck shell=bash
# The SE-0482 artifact bundle (dist/SQLCipherKit/SQLCipherEngine.artifactbundle): the engine alone, as a
# static library that SwiftPM packages use through .binaryTarget(path:), with its header and module map
# (BuildSupport/files/SQLCipherEngine.*); one variant, for the target triple. libcrypto's objects are folded
# into the archive and every symbol but the SQLite API is made local: a consumer links no -lcrypto, an OpenSSL
# of its own cannot clash with ours, and `swift package experimental-audit-binary-artifact` finds nothing
# undefined beyond the C library.

# Writes $2: the engine archive $1 with libcrypto folded in, every symbol local but the SQLite API and
# SQLCipherKit's crypto glue (sqlcipherkit_*, what the Swift layer needs).
fold_libcrypto() {
    local engine=$1 out=$2 libcrypto work leaked missing
    libcrypto=$("$CC" -print-file-name=libcrypto.a)
    [ -f "$libcrypto" ] || die "libcrypto.a not found (libssl-dev ships it): the artifact bundle folds it in"
    temp_dir work sqlcipherkit-bundle
    (cd "$work" && ar x "$engine") || die "cannot extract $engine"
    # -d allocates common symbols, so that they too can be made local.
    ld -r -d -o "$work/engine+crypto.o" "$work"/*.o "$libcrypto" || die "ld -r could not fold libcrypto in"
    objcopy --wildcard --keep-global-symbol='sqlite3_*' --keep-global-symbol='sqlcipherkit_*' \
        "$work/engine+crypto.o" "$work/SQLCipherEngine.o" || die "objcopy could not localize libcrypto's symbols"
    leaked=$(nm -g --defined-only "$work/SQLCipherEngine.o" | awk '$3 !~ /^(sqlite3|sqlcipherkit)_/ { print $3 }' | head -n5)
    [ -z "$leaked" ] || die "the bundle's archive exports more than the SQLite API and SQLCipherKit's glue: $leaked"
    missing=$(nm -u "$work/SQLCipherEngine.o" \
        | awk '$2 ~ /^(EVP_|OPENSSL_|PKCS5_|ERR_|RAND_|OBJ_|CRYPTO_)/ { print $2 }' | head -n5)
    [ -z "$missing" ] || die "libcrypto was not wholly folded into the bundle: $missing"
    mkdir -p "$(dirname "$out")"
    (cd "$work" && ar rcsD "$out" SQLCipherEngine.o)
}

# write_artifact_bundle ENGINE.a BUNDLE TRIPLE (absolute paths).
write_artifact_bundle() {
    local engine=$1 bundle=$2 triple=$3 variant include=$2/SQLCipherEngine/include
    variant=SQLCipherEngine/$triple/libsqlcipher.a
    fold_libcrypto "$engine" "$bundle/$variant"
    mkdir -p "$include"
    cp "$BUILD_DIR/include/sqlite3.h" "$include/sqlite3.h"
    cp "$ROOT/BuildSupport/files/SQLCipherEngine.h" "$include/SQLCipherEngine.h"
    cp "$ROOT/BuildSupport/files/SQLCipherEngine.modulemap" "$include/module.modulemap"
    python3 "$ROOT/BuildSupport/bundle_info.py" "$bundle/info.json" --name SQLCipherEngine --version "$PIN_VERSION" \
        --triple "$triple" --library "$variant" || die "could not write $bundle/info.json"
}
