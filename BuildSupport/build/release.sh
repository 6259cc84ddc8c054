# shellcheck shell=bash
# The release packages and the SBOM, written by BuildSupport/release_package.py and BuildSupport/sbom.py from
# the facts this build knows. Reads LICENSE_* and OPENSSL_VERSION (collect_licenses).

# One release package, dist/SQLCipherKit/swiftpm/FLAVOUR/: a complete SwiftPM package for a release
# repository, its engine bundle zipped and checksummed for the binaryTarget(url:checksum:) form in
# release-asset/. The folder's name is the package's identity for a path dependency (`package: "SQLCipherKit"`).
# write_release_package DIST TRIPLE FLAVOUR ENGINE.a ARM64_ENGINE.a system|folded COMPONENT... (TRIPLE: the
# host's; the arm64 archive is the aarch64 variant of the package's engine bundle)
write_release_package() {
    local dist=$1 triple=$2 flavour=$3 archive=$4 arm64_archive=$5 openssl=$6 out=$1/swiftpm/$3
    local notices=$BUILD_DIR/licenses/$3-NOTICES.txt checksum=$out/release-asset/CSQLCipher.artifactbundle.zip.sha256
    shift 6
    mkdir -p "$dist/swiftpm"
    notices_for "$notices" "the $flavour release package" "$openssl" "$@"
    local common=(--out "$out" --root "$ROOT" --engine "$triple=$archive" --engine "$ARM64_TRIPLE=$arm64_archive"
        --sqlite-header "$BUILD_DIR/include/sqlite3.h" --version "$PIN_VERSION"
        --sqlcipherkit-version "$PROJECT_VERSION" --package-url "$PACKAGE_URL" --openssl "$openssl" --notices "$notices")
    [ -z "$RELEASE_ASSET_URL" ] || common+=(--asset-url "$RELEASE_ASSET_URL")
    python3 "$ROOT/BuildSupport/release_package.py" "${common[@]}" \
        || die "could not write the release package $flavour"
    swift package --package-path "$out" compute-checksum "$out/release-asset/CSQLCipher.artifactbundle.zip" \
        >"$checksum" || die "swift package compute-checksum failed for $flavour"
    python3 "$ROOT/BuildSupport/release_package.py" "${common[@]}" --stage asset-manifest --checksum-file "$checksum" \
        || die "could not write the release-asset manifest for $flavour"
}

# swiftpm/SQLCipherKit/ (the system's libcrypto) and swiftpm/SQLCipherKit-openssl-inside/ (libcrypto folded in),
# each with both triples: the engine archives of dist/lib/ and the artifact bundle's folded ones.
write_release_packages() {
    local dist=$1 triple=$2 bundle=$3
    write_release_package "$dist" "$triple" SQLCipherKit "$dist/lib/libsqlcipher.a" \
        "$dist/lib/$ARM64_TRIPLE/libsqlcipher.a" system sqlcipherkit sqlcipher
    write_release_package "$dist" "$triple" SQLCipherKit-openssl-inside "$bundle/$(bundle_variant "$triple")" \
        "$bundle/$(bundle_variant "$ARM64_TRIPLE")" folded sqlcipherkit sqlcipher openssl
}

# dist/SQLCipherKit/swiftpm/FluentSQLCipherDriver/: the Fluent and SQLKit driver (Drivers/FluentSQLCipherDriver),
# depending on the release package by URL and version (BuildSupport/driver_package.py). The release package itself
# gains no dependency.
write_driver_package() {
    local dist=$1
    python3 "$ROOT/BuildSupport/driver_package.py" --out "$dist/swiftpm/FluentSQLCipherDriver" --root "$ROOT" \
        --sqlcipherkit-url "$PACKAGE_URL" --version "$PROJECT_VERSION" \
        || die "could not write the FluentSQLCipherDriver package"
}

# dist/SQLCipherKit/swiftpm/SQLCipherKitObservability/: the bridge to swift-log, swift-metrics and
# swift-distributed-tracing (Drivers/SQLCipherKitObservability), depending on the release package by URL and version
# (BuildSupport/observability_package.py), so that the release package keeps no dependency.
write_observability_package() {
    local dist=$1
    python3 "$ROOT/BuildSupport/observability_package.py" --out "$dist/swiftpm/SQLCipherKitObservability" \
        --root "$ROOT" --sqlcipherkit-url "$PACKAGE_URL" --version "$PROJECT_VERSION" \
        || die "could not write the SQLCipherKitObservability package"
}

# dist/SQLCipherKit/sbom.cdx.json (CycloneDX, BuildSupport/sbom.py) from the facts this build knows.
write_sbom() {
    local dist=$1 facts=$BUILD_DIR/sbom-facts.json url f
    local args=(sqlcipherVersion="$PIN_VERSION" sqliteVersion="$PIN_SQLITE_VERSION" sourceTarball="$PIN_TARBALL"
        sourceSHA256="$PIN_SHA256" "sourceURLs:=[]" "compileFlags:=[]" "localChanges:=$(local_changes_json)"
        opensslVersion="$OPENSSL_VERSION"
        "opensslPackageVersion=$(openssl_package_version "$(dpkg --print-architecture)")"
        "hostDebianArch=$(dpkg --print-architecture)" "hostTriple=$(target_triple)" arm64Triple="$ARM64_TRIPLE"
        opensslVersionArm64="$OPENSSL_VERSION_ARM64" "opensslPackageVersionArm64=$(openssl_package_version arm64)"
        "swiftVersion=$(swiftc --version 2>&1 | sed -n 's/.*Swift version \([0-9.]*\).*/\1/p' | head -n1)"
        "swiftVersionLine=$(swift_version_line)" "cCompiler=$(cc_version)"
        projectVersion="$PROJECT_VERSION" packageResolved="$ROOT/Package.resolved" root="$ROOT" dist="$dist"
        "opensslSystemNote=$(openssl_note system)" "opensslFoldedNote=$(openssl_note folded)"
        cryptoProvider="$CRYPTO_PROVIDER" "cryptoProviderDescription=$(provider_description)")
    while read -r url; do args+=("sourceURLs[]=$url"); done < <(source_urls)
    for f in "${ENGINE_CFLAGS[@]}"; do args+=("compileFlags[]=$f"); done
    json_object "$facts" "${args[@]}"
    python3 "$ROOT/BuildSupport/sbom.py" --out "$dist/sbom.cdx.json" --facts "$facts" || die "could not write the SBOM"
}
