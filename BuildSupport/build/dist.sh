# shellcheck shell=bash
# dist/SQLCipherKit/: staged in dist/.SQLCipherKit.partial (removed if the build stops), filled, verified, and
# only then moved into place. Reads SWIFT_BIN, SWIFT_ARCHIVE and CLI_EXECUTABLE (build_swift); sets STAGING.

# The pin as data, for everything that must not repeat it (the tests, the docs' figures): Vendor/build/pin.json.
write_pin_json() {
    local args=(sqlcipherKitVersion="$PROJECT_VERSION" sqlcipherVersion="$PIN_VERSION" sqliteVersion="$PIN_SQLITE_VERSION" tarball="$PIN_TARBALL"
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

# BuildSupport/files/sqlcipherkit.pc.in with the pin's versions filled in: write_pkg_config OUT LIBDIR TRIPLE, for
# the archive in dist's LIBDIR (lib, or lib/TRIPLE for a cross-built one), the .pc file in LIBDIR/pkgconfig; the
# headers are the one include/ folder (sqlite3.h is the same for every architecture).
write_pkg_config() {
    local out=$1 libdir=$2 triple=$3 up
    # From LIBDIR/pkgconfig back up to dist's root: one ".." per folder.
    up=$(sed -e 's|[^/][^/]*|..|g' <<<"$libdir/pkgconfig")
    sed -e "s/@PIN_VERSION@/$PIN_VERSION/g" -e "s/@PIN_SQLITE_VERSION@/$PIN_SQLITE_VERSION/g" \
        -e "s|@PREFIX_FROM_PCFILEDIR@|$up|g" -e "s|@LIBDIR@|$libdir|g" -e "s|@TRIPLE@|$triple|g" \
        "$ROOT/BuildSupport/files/sqlcipherkit.pc.in" >"$out"
    ! grep -q '@[A-Z_]*@' "$out" || die "$out still holds a placeholder: teach write_pkg_config about it"
}

# MANIFEST.json: the engine's facts, and per target triple (architectures>TRIPLE) its compiler, OpenSSL and the
# SHA-256 of each archive built for it; "archives" lists every archive of dist/ (both triples).
write_manifest() {
    local dir=$1 triple=$2 args=() f arm64_lib=lib/$ARM64_TRIPLE/libsqlcipher.a
    args=(sqlcipherKitVersion="$PROJECT_VERSION" sqlcipherVersion="$PIN_VERSION" sqliteVersion="$PIN_SQLITE_VERSION"
        sourceTarball="$PIN_TARBALL"
        sourceSHA256="$PIN_SHA256" "compileFlags:=[]" "localChanges:=$(local_changes_json)"
        "cryptoProvider>name=$CRYPTO_PROVIDER" "cryptoProvider>source=$(provider_description)")
    for f in "${ENGINE_CFLAGS[@]}"; do args+=("compileFlags[]=$f"); done
    args+=(cCompiler="$(cc_version)" swiftVersion="$(swift_version_line)" targetTriple="$triple"
        "archives>lib/libSQLCipherKit.a=$(sha256_of "$dir/lib/libSQLCipherKit.a")"
        "archives>lib/libsqlcipher.a=$(sha256_of "$dir/lib/libsqlcipher.a")"
        "archives>$arm64_lib=$(sha256_of "$dir/$arm64_lib")")
    local bundle_host bundle_arm64
    bundle_host=SQLCipherEngine.artifactbundle/$(bundle_variant "$triple")
    bundle_arm64=SQLCipherEngine.artifactbundle/$(bundle_variant "$ARM64_TRIPLE")
    args+=("architectures>$triple>cCompiler=$(cc_version)" "architectures>$triple>opensslVersion=$OPENSSL_VERSION"
        "architectures>$triple>opensslPackage=libssl-dev $(openssl_package_version "$(dpkg --print-architecture)")"
        "architectures>$triple>archives>lib/libSQLCipherKit.a=$(sha256_of "$dir/lib/libSQLCipherKit.a")"
        "architectures>$triple>archives>lib/libsqlcipher.a=$(sha256_of "$dir/lib/libsqlcipher.a")"
        "architectures>$triple>archives>$bundle_host=$(sha256_of "$dir/$bundle_host")"
        "architectures>$ARM64_TRIPLE>cCompiler=$(arm64_cc_version)"
        "architectures>$ARM64_TRIPLE>opensslVersion=$OPENSSL_VERSION_ARM64"
        "architectures>$ARM64_TRIPLE>opensslPackage=libssl-dev $(openssl_package_version arm64)"
        "architectures>$ARM64_TRIPLE>archives>$arm64_lib=$(sha256_of "$dir/$arm64_lib")"
        "architectures>$ARM64_TRIPLE>archives>$bundle_arm64=$(sha256_of "$dir/$bundle_arm64")")
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
    mkdir -p "$STAGING/lib/pkgconfig" "$STAGING/lib/$ARM64_TRIPLE/pkgconfig" "$STAGING/include" "$STAGING/Modules" \
        "$STAGING/bin"
    STAGING=$(realpath "$STAGING")
    strip -o "$STAGING/bin/sqlcipherkit" "$CLI_EXECUTABLE"
    merge_archives "$engine" "$swift_lib" "$STAGING/lib/libSQLCipherKit.a"
    cp "$engine" "$STAGING/lib/libsqlcipher.a"
    write_pkg_config "$STAGING/lib/pkgconfig/sqlcipherkit.pc" lib "$(target_triple)"
    # The aarch64 engine alone (C and C++ on arm64 Linux; cross-compile with pkg-config's path set to its folder).
    cp "$(arm64_engine)" "$STAGING/lib/$ARM64_TRIPLE/libsqlcipher.a"
    write_pkg_config "$STAGING/lib/$ARM64_TRIPLE/pkgconfig/sqlcipherkit.pc" "lib/$ARM64_TRIPLE" "$ARM64_TRIPLE"
    stage_headers "$STAGING"
    stage_modules "$STAGING"
}

# The staged artifact's bundle, notices, release packages (and the Fluent driver's and the observability bridge's
# beside them), manifest and SBOM.
package_dist() {
    local staging=$1 engine triple bundle=$1/SQLCipherEngine.artifactbundle
    engine=$(realpath "$2")
    triple=$(target_triple)
    write_artifact_bundle "$engine" "$(arm64_engine)" "$bundle" "$triple"
    collect_licenses
    write_notices "$staging"
    write_release_packages "$staging" "$triple" "$bundle"
    write_driver_package "$staging"
    write_observability_package "$staging"
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
    # The aarch64 engine: symbols with the cross binutils (it runs under emulation in Tests/Emulation).
    "$ROOT/verify-symbols.sh" "$dist/lib/$ARM64_TRIPLE/libsqlcipher.a" \
        || die "the $ARM64_TRIPLE engine archive failed verification; dist/ was left as it was"
    check_archive_machine "$dist/lib/$ARM64_TRIPLE/libsqlcipher.a" AArch64
    "$dist/bin/sqlcipherkit" selfcheck | sed 's/^/  /' \
        || die "sqlcipherkit selfcheck failed: the engine does not encrypt; dist/ was left as it was"
    # The artifact bundle: the engine checks on each variant, each of its triple's machine, and SwiftPM's own audit
    # (nothing undefined beyond the C library).
    local variant
    for variant in "$dist"/SQLCipherEngine.artifactbundle/SQLCipherEngine/*/libsqlcipher.a; do
        "$ROOT/verify-symbols.sh" "$variant" \
            || die "the artifact bundle's archive $variant failed verification; dist/ was left as it was"
    done
    check_archive_machine "$dist/SQLCipherEngine.artifactbundle/$(bundle_variant "$ARM64_TRIPLE")" AArch64
    check_archive_machine "$dist/SQLCipherEngine.artifactbundle/$(bundle_variant "$(target_triple)")" \
        "$(elf_machine_for_arch "$(target_triple | cut -d- -f1)")"
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
