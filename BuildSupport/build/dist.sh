# shellcheck shell=bash
# dist/SQLCipherKit/: staged in dist/.SQLCipherKit.partial (removed if the build stops), filled, verified, and
# only then moved into place. Reads SWIFT_BIN, SWIFT_ARCHIVE and CLI_EXECUTABLE (build_swift); sets STAGING.

# The pin as data, for everything that must not repeat it (the tests, the docs' figures): Vendor/build/pin.json.
write_pin_json() {
    local args=(sqlcipherVersion="$PIN_VERSION" sqliteVersion="$PIN_SQLITE_VERSION" tarball="$PIN_TARBALL"
        sha256="$PIN_SHA256" cachedTarball="$CACHE_DIR/$PIN_TARBALL" "sources:=[]" "configureFlags:=[]"
        "compileFlags:=[]" "upstreamTests:={}" "localChanges:=$(local_changes_json)" cryptoProvider="$CRYPTO_PROVIDER") f entry
    for f in "${PIN_SOURCES[@]}"; do args+=("sources[]=$f"); done
    for f in "${PIN_CONFIGURE_FLAGS[@]}"; do args+=("configureFlags[]=$f"); done
    # The flags the engine is compiled with: the pin's, with the crypto provider's selected (provider.sh).
    for f in "${ENGINE_CFLAGS[@]}"; do args+=("compileFlags[]=$f"); done
    for entry in "${PIN_UPSTREAM_TESTS[@]}"; do args+=("upstreamTests>${entry%%=*}:=${entry#*=}"); done
    mkdir -p "$BUILD_DIR"
    json_object "$BUILD_DIR/pin.json" "${args[@]}"
}

# BuildSupport/files/sqlcipherkit.pc.in with the pin's versions filled in.
write_pkg_config() {
    sed -e "s/@PIN_VERSION@/$PIN_VERSION/g" -e "s/@PIN_SQLITE_VERSION@/$PIN_SQLITE_VERSION/g" \
        "$ROOT/BuildSupport/files/sqlcipherkit.pc.in" >"$1"
    ! grep -q '@[A-Z_]*@' "$1" || die "$1 still holds a placeholder: teach write_pkg_config about it"
}

write_manifest() {
    local dir=$1 triple=$2 args=() f
    args=(sqlcipherVersion="$PIN_VERSION" sqliteVersion="$PIN_SQLITE_VERSION" sourceTarball="$PIN_TARBALL"
        sourceSHA256="$PIN_SHA256" "compileFlags:=[]" "localChanges:=$(local_changes_json)"
        "cryptoProvider>name=$CRYPTO_PROVIDER" "cryptoProvider>source=$(provider_description)")
    for f in "${ENGINE_CFLAGS[@]}"; do args+=("compileFlags[]=$f"); done
    args+=(cCompiler="$(cc_version)" swiftVersion="$(swift_version_line)" targetTriple="$triple"
        "archives>lib/libSQLCipherKit.a=$(sha256_of "$dir/lib/libSQLCipherKit.a")"
        "archives>lib/libsqlcipher.a=$(sha256_of "$dir/lib/libsqlcipher.a")")
    json_object "$dir/MANIFEST.json" "${args[@]}"
}

# The CSQLCipher clang module's files, with the shim's include line (it points into Vendor/ in the source
# tree) pointed at the sqlite3.h beside it.
stage_headers() {
    local include=$1/include
    cp "$BUILD_DIR/include/sqlite3.h" "$include/sqlite3.h"
    cp "$ROOT/Sources/CSQLCipher/module.modulemap" "$include/module.modulemap"
    sed 's|^#include ".*" // SQLCIPHERKIT_ENGINE_HEADER$|#include "sqlite3.h"|' \
        "$ROOT/Sources/CSQLCipher/shim.h" >"$include/shim.h"
    grep -q '^#include "sqlite3.h"$' "$include/shim.h" \
        || die "could not point shim.h at the shipped sqlite3.h (the marked include line is gone)"
}

# The SQLCipherKit Swift module's files, for swiftc consumers.
stage_modules() {
    local modules=$1/Modules module_file
    for module_file in "$SWIFT_BIN"/Modules/SQLCipherKit.swift{module,doc,sourceinfo} \
        "$SWIFT_BIN"/Modules/SQLCipherKit.abi.json; do
        [ -f "$module_file" ] && cp "$module_file" "$modules/"
    done
    [ -f "$modules/SQLCipherKit.swiftmodule" ] \
        || die "no SQLCipherKit.swiftmodule under $SWIFT_BIN/Modules: swiftc consumers could not import it"
}

# A fresh staging folder with the CLI, the merged archive, the engine, pkg-config file, headers and modules;
# sets STAGING (an absolute path).
stage_dist() {
    local engine=$1 swift_lib=$2
    STAGING=$DIST_DIR/.SQLCipherKit.partial
    rm -rf "$STAGING"
    remove_on_exit "$STAGING"
    mkdir -p "$STAGING/lib/pkgconfig" "$STAGING/include" "$STAGING/Modules" "$STAGING/bin"
    STAGING=$(realpath "$STAGING")
    strip -o "$STAGING/bin/sqlcipherkit" "$CLI_EXECUTABLE"
    merge_archives "$engine" "$swift_lib" "$STAGING/lib/libSQLCipherKit.a"
    cp "$engine" "$STAGING/lib/libsqlcipher.a"
    write_pkg_config "$STAGING/lib/pkgconfig/sqlcipherkit.pc"
    stage_headers "$STAGING"
    stage_modules "$STAGING"
}

# The staged artifact's bundle, notices, release packages, manifest and SBOM.
package_dist() {
    local staging=$1 engine triple bundle=$1/SQLCipherEngine.artifactbundle
    engine=$(realpath "$2")
    triple=$(target_triple)
    write_artifact_bundle "$engine" "$bundle" "$triple"
    collect_licenses
    write_notices "$staging"
    write_release_packages "$staging" "$triple" "$bundle/SQLCipherEngine/$triple/libsqlcipher.a"
    write_manifest "$staging" "$triple"
    write_sbom "$staging"
}

# Symbols, downstream links and the run-time self-check, all on the staged artifact.
verify_dist() {
    local dist=$1
    "$ROOT/verify-symbols.sh" "$dist/lib/libSQLCipherKit.a" --link-test \
        --expect-from "$dist/lib/libsqlcipher.a" --expect-from "$SWIFT_ARCHIVE" \
        || die "the merged artifact failed verification; dist/ was left as it was"
    "$ROOT/verify-symbols.sh" "$dist/lib/libsqlcipher.a" --link-test --pkg-config \
        || die "the engine archive failed verification; dist/ was left as it was"
    "$dist/bin/sqlcipherkit" selfcheck | sed 's/^/  /' \
        || die "sqlcipherkit selfcheck failed: the engine does not encrypt; dist/ was left as it was"
    # The artifact bundle: the engine checks, and SwiftPM's own audit (nothing undefined beyond the C library).
    "$ROOT/verify-symbols.sh" "$dist"/SQLCipherEngine.artifactbundle/SQLCipherEngine/*/libsqlcipher.a \
        || die "the artifact bundle's archive failed verification; dist/ was left as it was"
    swift package --package-path "$ROOT" experimental-audit-binary-artifact "$dist/SQLCipherEngine.artifactbundle" \
        | sed 's/^/  /' || die "the artifact bundle failed SwiftPM's audit; dist/ was left as it was"
}

# Replaces the previous artifact with the staged one, only once the staged one has passed verification.
publish_dist() {
    local final=$DIST_DIR/SQLCipherKit
    rm -rf "$final"
    mv "$STAGING" "$final"
    note "dist: $final"
}
