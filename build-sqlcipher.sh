#!/usr/bin/env bash
# build-sqlcipher.sh: builds dist/SQLCipherKit/, one static library holding the SQLCipherKit Swift API and the
# pinned SQLCipher engine, verifies it and runs its self-check.
#
# Phases (build_all below lists them; each lives in BuildSupport/build/*.sh): prerequisites → source (local
# file, cache, or the machine's apt mirror; SHA-256 checked) → amalgamation (tclsh) → libsqlcipher.a (codec
# on, verified) → the same engine cross-compiled for aarch64 (verified) → Swift static library → merge (ar x → ld -r → ar) into a staged dist/ with the artifact
# bundle, notices, release packages, manifest and SBOM → verify-symbols.sh + run-time self-check → dist/.
# Every failure stops the build with a message: the build never produces an artifact whose engine might write
# plaintext.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROGRAM=build-sqlcipher.sh
# shellcheck source=Vendor/sqlcipher.pin
source "$ROOT/Vendor/sqlcipher.pin"
# shellcheck source=BuildSupport/common.sh
source "$ROOT/BuildSupport/common.sh"
# The phases, in the order build_all runs them (and their helpers).
# shellcheck source=BuildSupport/build/output.sh
source "$ROOT/BuildSupport/build/output.sh"
# shellcheck source=BuildSupport/build/prerequisites.sh
source "$ROOT/BuildSupport/build/prerequisites.sh"
# shellcheck source=BuildSupport/build/source.sh
source "$ROOT/BuildSupport/build/source.sh"
# shellcheck source=BuildSupport/build/local-changes.sh
source "$ROOT/BuildSupport/build/local-changes.sh"
# shellcheck source=BuildSupport/build/engine.sh
source "$ROOT/BuildSupport/build/engine.sh"
# shellcheck source=BuildSupport/build/arm64.sh
source "$ROOT/BuildSupport/build/arm64.sh"
# shellcheck source=BuildSupport/build/swift.sh
source "$ROOT/BuildSupport/build/swift.sh"
# shellcheck source=BuildSupport/build/merge.sh
source "$ROOT/BuildSupport/build/merge.sh"
# shellcheck source=BuildSupport/build/dist.sh
source "$ROOT/BuildSupport/build/dist.sh"
# shellcheck source=BuildSupport/build/bundle.sh
source "$ROOT/BuildSupport/build/bundle.sh"
# shellcheck source=BuildSupport/build/notices.sh
source "$ROOT/BuildSupport/build/notices.sh"
# shellcheck source=BuildSupport/build/release.sh
source "$ROOT/BuildSupport/build/release.sh"

# Overridable locations (the tests point them at temporary folders).
CACHE_DIR=${SQLCIPHERKIT_CACHE_DIR:-$ROOT/Vendor/cache}
BUILD_DIR=${SQLCIPHERKIT_BUILD_DIR:-$ROOT/Vendor/build}
DIST_DIR=${SQLCIPHERKIT_DIST_DIR:-$ROOT/dist}
# The pin's list of sources, replaced (space-separated, same forms) for tests of the fallback order.
[ -z "${SQLCIPHERKIT_SOURCES:-}" ] || read -r -a PIN_SOURCES <<<"$SQLCIPHERKIT_SOURCES"
# SQLCipherKit's own version (the packages', MANIFEST's, the SBOM's, pin.json's): read after the prerequisites
# (read_project_version) from the one line that defines it, Engine.sqlcipherKitVersion, which the CLI prints.
PROJECT_VERSION=
# Where the release package's zipped engine bundle will be published (binaryTarget(url:checksum:) form); empty:
# a placeholder the release package's README explains.
RELEASE_ASSET_URL=${SQLCIPHERKIT_RELEASE_ASSET_URL:-}
# Where the SQLCipherKit release package will be published: the Fluent driver package beside it depends on it by
# this URL and PROJECT_VERSION (a placeholder by default, which its README asks to replace).
PACKAGE_URL=${SQLCIPHERKIT_PACKAGE_URL:-https://example.invalid/REPLACE-WITH-THE-RELEASE-REPOSITORY/SQLCipherKit}
CC=${CC:-cc}

usage() {
    cat <<EOF
Usage:
  build-sqlcipher.sh [--source FILE] [--test-tools] [--crypto-provider sqlcipherkit|reference]
      The whole build: dist/SQLCipherKit/ (merged libSQLCipherKit.a, the engine libsqlcipher.a, headers, Swift
      module, pkg-config file, the sqlcipherkit CLI, MANIFEST.json; the engine also cross-compiled for
      aarch64-unknown-linux-gnu, in lib/aarch64-unknown-linux-gnu/, the artifact bundle and the release
      packages), then verify-symbols.sh and the run-time self-check.
  build-sqlcipher.sh fetch [--source FILE]
      Only obtain the pinned tarball and check its SHA-256; prints its cached path.
  build-sqlcipher.sh engine [--source FILE]
      Up to the verified engine archive (Vendor/build/lib/libsqlcipher.a) and its sqlite3.h.
  build-sqlcipher.sh merge --engine ENGINE.a --swift SWIFT.a --out OUT.a
      Only the merge: ar x both → ld -r → one deterministic archive. Refuses missing or empty archives,
      members of another architecture and an engine without the codec.
  build-sqlcipher.sh mirrors
      Prints the addresses the source phase would try, in order: the pin's PIN_SOURCES, with "apt:" entries
      expanded under each mirror of the machine's apt configuration.

Options:
  --source FILE   use this local tarball instead of the cache or the mirror (also: SQLCIPHER_TARBALL=FILE)
  --crypto-provider NAME
                  the engine's crypto provider: sqlcipherkit (the default: SQLCipherKit's own OpenSSL provider,
                  BuildSupport/engine/sqlcipherkit_provider.c) or reference (SQLCipher's own src/crypto_openssl.c);
                  also SQLCIPHERKIT_CRYPTO_PROVIDER. A change rebuilds the engine; MANIFEST.json, the SBOM and
                  the self-check name the one compiled in (also for 'engine')
  --test-tools    also install what the tests use (pkg-config, libsqlite3-dev; tcl-dev for SQLCipher's own suite; valgrind for the callgrind gate)
Environment: CC (C compiler, default cc), SQLCIPHERKIT_CACHE_DIR, SQLCIPHERKIT_BUILD_DIR, SQLCIPHERKIT_DIST_DIR,
  SQLCIPHERKIT_SOURCES (replaces the pin's PIN_SOURCES list, space-separated),
  SQLCIPHERKIT_RELEASE_ASSET_URL (the address the release package's release-asset/Package.swift names),
  SQLCIPHERKIT_PACKAGE_URL (the release package's repository, which the FluentSQLCipherDriver package names),
  SQLCIPHERKIT_NO_INSTALL=1 (never run apt-get, even as root: stop and name the missing packages).
Pin: Vendor/sqlcipher.pin (SQLCipher $PIN_VERSION, $PIN_TARBALL).
EOF
}

# --------------------------------------------------------------------------------------- command line ---

# Sets COMMAND (all, fetch, engine, merge, mirrors), SOURCE_FILE, TEST_TOOLS and MERGE_ENGINE/SWIFT/OUT.
parse_arguments() {
    COMMAND=all SOURCE_FILE=${SQLCIPHER_TARBALL:-} TEST_TOOLS=no MERGE_ENGINE="" MERGE_SWIFT="" MERGE_OUT=""
    local provider=${SQLCIPHERKIT_CRYPTO_PROVIDER:-sqlcipherkit}
    case "${1:-}" in
        fetch | engine | merge | mirrors) COMMAND=$1; shift ;;
    esac
    while [ $# -gt 0 ]; do
        case "$1" in
            --source) [ $# -ge 2 ] || die "--source needs a FILE"; SOURCE_FILE=$2; shift 2 ;;
            --source=*) SOURCE_FILE=${1#--source=}; shift ;;
            --test-tools) TEST_TOOLS=yes; shift ;;
            --crypto-provider) [ $# -ge 2 ] || die "--crypto-provider needs a NAME"; provider=$2; shift 2 ;;
            --crypto-provider=*) provider=${1#--crypto-provider=}; shift ;;
            --engine) MERGE_ENGINE=${2:-}; shift 2 || die "--engine needs a FILE" ;;
            --swift) MERGE_SWIFT=${2:-}; shift 2 || die "--swift needs a FILE" ;;
            --out) MERGE_OUT=${2:-}; shift 2 || die "--out needs a FILE" ;;
            -h | --help) usage; exit 0 ;;
            *) usage >&2; die "unknown argument: $1" ;;
        esac
    done
    [ -z "$SOURCE_FILE" ] || SOURCE_FILE=$(realpath "$SOURCE_FILE")
    select_crypto_provider "$provider"
    if [ "$COMMAND" = all ] && [ "$BUILD_DIR" != "$ROOT/Vendor/build" ]; then
        # The Swift side (shim.h, Package.swift) reads the engine from Vendor/build: another folder would
        # build the API against a different engine than the one shipped.
        die "SQLCIPHERKIT_BUILD_DIR applies to 'fetch' and 'engine' only; the full build uses Vendor/build"
    fi
}

# -------------------------------------------------------------------------------------------------- main ---

# `build-sqlcipher.sh merge`: the merge alone, on the archives named.
merge_only() {
    if [ -z "$MERGE_ENGINE" ] || [ -z "$MERGE_SWIFT" ] || [ -z "$MERGE_OUT" ]; then
        die "merge needs --engine ENGINE.a --swift SWIFT.a --out OUT.a"
    fi
    phase "merge"
    merge_archives "$MERGE_ENGINE" "$MERGE_SWIFT" "$MERGE_OUT"
    phase_end
}

# Prerequisites, then the checked source (sets TARBALL).
prepare_source() {
    phase "prerequisites"
    check_prerequisites "$TEST_TOOLS"
    read_project_version
    phase "source: SQLCipher $PIN_VERSION ($PIN_TARBALL)"
    obtain_source "$SOURCE_FILE"
}

# PROJECT_VERSION, from Sources/SQLCipherKit/Engine/Engine+Release.swift (BuildSupport/project_version.py).
read_project_version() {
    PROJECT_VERSION=$(python3 "$ROOT/BuildSupport/project_version.py" "$ROOT") \
        || die "SQLCipherKit's version could not be read (see above)"
}

# The verified engine archive, $BUILD_DIR/lib/libsqlcipher.a, and Vendor/build/pin.json (not written by 'fetch'
# alone: that may fetch into another cache, as the tests do, and pin.json names the build's).
build_engine() {
    write_pin_json
    phase "amalgamation (tclsh)"
    generate_amalgamation
    phase "engine: libsqlcipher.a"
    compile_engine
    verify_engine
}

build_all() {
    local started=$SECONDS engine=$BUILD_DIR/lib/libsqlcipher.a
    prepare_source
    build_engine
    phase "engine for $ARM64_TRIPLE (cross-compiled, $ARM64_CC)"
    build_arm64_engine
    phase "Swift static library (swift build -c release --product SQLCipherKit)"
    build_swift
    phase "merge into a staged dist/"
    stage_dist "$engine" "$SWIFT_ARCHIVE"
    package_dist "$STAGING" "$engine"
    phase "verify the staged artifact: symbols, downstream links, run-time self-check"
    verify_dist "$STAGING"
    publish_dist
    phase_end
    print_summary "$((SECONDS - started))" "$DIST_DIR/SQLCipherKit"
}

print_summary() {
    local seconds=$1 dist=$2
    cat <<EOF

SQLCipherKit $PROJECT_VERSION built in ${seconds}s
  artifact:  $dist/lib/libSQLCipherKit.a (Swift API + SQLCipher $PIN_VERSION, one archive)
  engine:    $dist/lib/libsqlcipher.a (C/C++ via pkg-config: $dist/lib/pkgconfig/sqlcipherkit.pc)
  CLI:       $dist/bin/sqlcipherkit (selfcheck, check, encrypt, decrypt, rekey, migrate, info, query)
  bundle:    $dist/SQLCipherEngine.artifactbundle (SE-0482 static library, libcrypto inside, for SwiftPM)
  manifest:  $dist/MANIFEST.json
  verified:  codec symbols, downstream link, encrypted file, cipher_version self-check
  packages:  $dist/swiftpm/ (SQLCipherKit, FluentSQLCipherDriver, SQLCipherKitObservability: tag their
             repositories $PROJECT_VERSION)
EOF
    [ -n "${SQLCIPHERKIT_PACKAGE_URL:-}" ] || cat <<EOF
  note:      the driver and bridge packages name SQLCipherKit at a placeholder URL; to publish them, build with
             SQLCIPHERKIT_PACKAGE_URL=<the release package's repository URL>, the URL apps will use
EOF
}

main() {
    parse_arguments "$@"
    case $COMMAND in
        mirrors) source_urls ;;
        merge) merge_only ;;
        fetch) prepare_source; phase_end; echo "$TARBALL" ;;
        engine) prepare_source; build_engine; phase_end ;;
        all) build_all ;;
    esac
}

main "$@"
