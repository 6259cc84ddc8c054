#!/usr/bin/env bash
# build-sqlcipher.sh: builds dist/SQLCipherKit/, one static library holding the SQLCipherKit Swift API and the
# pinned SQLCipher engine, verifies it and runs its self-check.
#
# Phases: prerequisites → source (local file, cache, or the machine's apt mirror; SHA-256 checked) →
# amalgamation (tclsh) → libsqlcipher.a (codec on, verified) → Swift static library → merge (ar x → ld -r →
# ar) → dist/ → verify-symbols.sh + run-time self-check. Every failure stops the build with a message: the
# build never produces an artifact whose engine might write plaintext.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=Vendor/sqlcipher.pin
source "$ROOT/Vendor/sqlcipher.pin"

# Overridable locations (the tests point them at temporary folders).
CACHE_DIR=${SQLCIPHERKIT_CACHE_DIR:-$ROOT/Vendor/cache}
BUILD_DIR=${SQLCIPHERKIT_BUILD_DIR:-$ROOT/Vendor/build}
DIST_DIR=${SQLCIPHERKIT_DIST_DIR:-$ROOT/dist}
# The pin's list of sources, replaced (space-separated, same forms) for tests of the fallback order.
[ -z "${SQLCIPHERKIT_SOURCES:-}" ] || read -r -a PIN_SOURCES <<<"$SQLCIPHERKIT_SOURCES"
# SQLCipherKit's own version (the release package's, the SBOM's); the CLI's --version says the same.
PROJECT_VERSION=0.1.0
# Where the release package's zipped engine bundle will be published (binaryTarget(url:checksum:) form); empty:
# a placeholder the release package's README explains.
RELEASE_ASSET_URL=${SQLCIPHERKIT_RELEASE_ASSET_URL:-}
CC=${CC:-cc}

usage() {
    cat <<EOF
Usage:
  build-sqlcipher.sh [--source FILE] [--test-tools]
      The whole build: dist/SQLCipherKit/ (merged libSQLCipherKit.a, the engine libsqlcipher.a, headers, Swift
      module, pkg-config file, the sqlcipherkit CLI, MANIFEST.json), then verify-symbols.sh and the run-time
      self-check.
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
  --test-tools    also install what the tests use (pkg-config, libsqlite3-dev; tcl-dev for SQLCipher's own suite; valgrind for the callgrind gate)
Environment: CC (C compiler, default cc), SQLCIPHERKIT_CACHE_DIR, SQLCIPHERKIT_BUILD_DIR, SQLCIPHERKIT_DIST_DIR,
  SQLCIPHERKIT_SOURCES (replaces the pin's PIN_SOURCES list, space-separated),
  SQLCIPHERKIT_RELEASE_ASSET_URL (the address the release package's release-asset/Package.swift names),
  SQLCIPHERKIT_NO_INSTALL=1 (never run apt-get, even as root: stop and name the missing packages).
Pin: Vendor/sqlcipher.pin (SQLCipher $PIN_VERSION, $PIN_TARBALL).
EOF
}

# ---------------------------------------------------------------------------------------------- output ---

die() {
    printf '\nbuild-sqlcipher.sh: error: %s\n' "$*" >&2
    exit 1
}

# Temporary folders to remove however the script ends (a die inside a function included).
CLEANUP=()
cleanup() {
    local path
    for path in ${CLEANUP[@]+"${CLEANUP[@]}"}; do rm -rf "$path"; done
}
trap cleanup EXIT

# Each phase prints its name when it starts and its duration when the next one starts.
PHASE_NAME=
PHASE_START=0
phase() {
    phase_end
    PHASE_START=$SECONDS
    PHASE_NAME=$1
    printf '==> %s\n' "$1"
}
phase_end() {
    [ -z "$PHASE_NAME" ] || printf '    (%ss)\n' "$((SECONDS - PHASE_START))"
    PHASE_NAME=
}
note() { printf '    %s\n' "$*"; }

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# A hash of everything that decides an output, so unchanged inputs skip the work.
stamp_of() { printf '%s\n' "$@" | sha256sum | cut -d' ' -f1; }

# ------------------------------------------------------------------------------------- prerequisites ---

have_openssl_headers() {
    printf '#include <openssl/evp.h>\n' | "$CC" -E -x c - >/dev/null 2>&1
}

# Installs Debian packages when root, else stops naming them.
install_packages() {
    [ $# -gt 0 ] || return 0
    if [ "$(id -u)" = 0 ] && [ -z "${SQLCIPHERKIT_NO_INSTALL:-}" ] && command -v apt-get >/dev/null; then
        note "installing missing packages: $*"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null || die "apt-get update failed; install these packages by hand: $*"
        apt-get install -y -qq --no-install-recommends "$@" >/dev/null \
            || die "apt-get install failed; install these packages by hand: $*"
    else
        die "missing system packages: $* (install them: sudo apt-get install $*)"
    fi
}

check_prerequisites() {
    local want_test_tools=$1 missing=()
    have_openssl_headers || missing+=(libssl-dev)
    command -v tclsh >/dev/null || missing+=(tcl)
    if [ "$want_test_tools" = yes ]; then
        command -v pkg-config >/dev/null || missing+=(pkg-config)
        [ -e /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
        # The callgrind gate (Tests/PerformanceGateTests) counts instructions under valgrind.
        command -v valgrind >/dev/null || missing+=(valgrind)
        # tclConfig.sh: Tests/Upstream/run-upstream.sh builds SQLCipher's testfixture against Tcl.
        compgen -G '/usr/lib/tcl8*/tclConfig.sh' >/dev/null || compgen -G '/usr/lib/*/tcl8*/tclConfig.sh' >/dev/null \
            || missing+=(tcl-dev)
    fi
    install_packages "${missing[@]}"
    have_openssl_headers || die "OpenSSL headers are still missing after installing libssl-dev"
    command -v tclsh >/dev/null || die "tclsh is still missing after installing tcl"
    local tool
    for tool in "$CC" ar ld nm readelf strip objcopy make tar sha256sum python3 swift swiftc; do
        command -v "$tool" >/dev/null || die "required tool '$tool' is not on PATH"
    done
    note "C compiler: $("$CC" --version | head -n1)"
    note "Swift: $(swift --version 2>/dev/null | head -n1)"
}

# ------------------------------------------------------------------------------------------------ source ---

# The base URIs of the machine's Debian mirrors, from apt's own configuration: deb822 *.sources files and
# one-line sources.list files. No host name is written in this repository.
apt_mirror_uris() {
    local list=/etc/apt/sources.list parts=/etc/apt/sources.list.d
    if command -v apt-config >/dev/null; then
        eval "$(apt-config shell list Dir::Etc::sourcelist/f parts Dir::Etc::sourceparts/d)"
    fi
    {
        local f
        for f in "$parts"/*.sources; do
            [ -f "$f" ] || continue
            # One stanza per blank-line-separated block; skip stanzas with "Enabled: no".
            awk 'BEGIN { RS = ""; FS = "\n" }
                 {
                     enabled = 1; uris = ""
                     for (i = 1; i <= NF; i++) {
                         if ($i ~ /^[Ee]nabled:[ \t]*no/) enabled = 0
                         if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", $i); uris = uris " " $i }
                     }
                     if (enabled) { n = split(uris, u, /[ \t]+/); for (j = 1; j <= n; j++) if (u[j] != "") print u[j] }
                 }' "$f"
        done
        for f in "$list" "$parts"/*.list; do
            [ -f "$f" ] || continue
            # deb [options] URI suite components...
            sed -E -n 's/^[[:space:]]*deb(-src)?[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+).*/\3/p' "$f"
        done
    } | awk '!seen[$0]++'
}

download() {
    local url=$1 out=$2
    case "$url" in
        file:*) cp "${url#file:}" "$out" 2>/dev/null ;;
        http://* | https://*)
            if command -v curl >/dev/null; then
                curl -fsSL --retry 2 --connect-timeout 20 -o "$out" "$url"
            elif command -v wget >/dev/null; then
                wget -q -O "$out" "$url"
            else
                die "neither curl nor wget is installed to download $PIN_TARBALL"
            fi
            ;;
        *) return 1 ;;
    esac
}

# Fails (deleting the file) unless $1 has the pinned SHA-256.
verify_tarball() {
    local file=$1 origin=$2 delete=$3 actual
    actual=$(sha256_of "$file")
    if [ "$actual" != "$PIN_SHA256" ]; then
        [ "$delete" = yes ] && rm -f "$file"
        printf '\nbuild-sqlcipher.sh: error: SHA-256 mismatch for %s (%s)\n' "$PIN_TARBALL" "$origin" >&2
        printf '  expected: %s\n  actual:   %s\n' "$PIN_SHA256" "$actual" >&2
        if [ "$delete" = yes ]; then
            printf '  the file was deleted; run the build again to fetch a fresh copy\n' >&2
        else
            printf '  the file was left in place (it is yours); point --source at a genuine copy\n' >&2
        fi
        exit 1
    fi
}

# The addresses PIN_SOURCES names, in order: "apt:PATH" becomes PATH under each mirror of the apt
# configuration; anything else is used as it is.
source_urls() {
    local entry uri
    for entry in "${PIN_SOURCES[@]}"; do
        case "$entry" in
            apt:*) while read -r uri; do
                       [ -n "$uri" ] && echo "${uri%/}/${entry#apt:}"
                   done < <(apt_mirror_uris) ;;
            *) echo "$entry" ;;
        esac
    done
}

# What to do when no source answered: said once, in full, because this is where a bump or an old pin fails.
no_source_help() {
    cat >&2 <<EOF

build-sqlcipher.sh: error: could not obtain $PIN_TARBALL (SQLCipher $PIN_VERSION, SHA-256 $PIN_SHA256).
  Tried, in the order Vendor/sqlcipher.pin gives (PIN_SOURCES):
$(printf '    %s\n' "$@")
  What to do, any one of:
    - get the file from anywhere you trust (a colleague's Vendor/cache/, another mirror, upstream's release
      page) and run: ./build-sqlcipher.sh --source /path/to/$PIN_TARBALL   (the SHA-256 above is checked);
    - if the Debian pool no longer serves this release, bump the pin: see Vendor/README.md;
    - check the apt configuration (./build-sqlcipher.sh mirrors lists what it reads) and the network.
EOF
    exit 1
}

# Sets TARBALL to a verified copy of the pinned source in the cache.
obtain_source() {
    local source_file=$1
    TARBALL=$CACHE_DIR/$PIN_TARBALL
    mkdir -p "$CACHE_DIR"
    if [ -n "$source_file" ]; then
        [ -f "$source_file" ] || die "--source: no such file: $source_file"
        verify_tarball "$source_file" "local file $source_file" no
        note "source: $source_file (SHA-256 ok)"
        if ! [ "$source_file" -ef "$TARBALL" ]; then
            cp "$source_file" "$TARBALL.part" || die "cannot copy $source_file into the cache $CACHE_DIR"
            verify_tarball "$TARBALL.part" "copy of $source_file" yes
            mv "$TARBALL.part" "$TARBALL" || die "cannot move the tarball into the cache $CACHE_DIR"
        fi
        return
    fi
    if [ -f "$TARBALL" ]; then
        verify_tarball "$TARBALL" "cached copy $TARBALL" yes
        note "source: cached $TARBALL (SHA-256 ok)"
        return
    fi
    local url tried=()
    while read -r url; do
        [ -n "$url" ] || continue
        tried+=("$url")
        if download "$url" "$TARBALL.part"; then
            # A copy that answers but differs is refused loudly (deleted), never tried past.
            verify_tarball "$TARBALL.part" "downloaded from $url" yes
            mv "$TARBALL.part" "$TARBALL"
            note "source: downloaded from $url (SHA-256 ok)"
            return
        fi
        rm -f "$TARBALL.part"
    done < <(source_urls)
    [ ${#tried[@]} -gt 0 ] || tried=("(nothing: no Debian mirror in the apt configuration and no plain address in PIN_SOURCES)")
    no_source_help "${tried[@]}"
}

# ------------------------------------------------------------------------------------------------ engine ---

generate_amalgamation() {
    local stamp_file=$BUILD_DIR/amalgamation.stamp stamp
    stamp=$(stamp_of "$PIN_SHA256" "$PIN_TARBALL" "${PIN_CONFIGURE_FLAGS[@]}" "${PIN_CFLAGS[@]}" amalgamation-v2)
    if [ -f "$BUILD_DIR/amalgamation/sqlite3.c" ] && [ -f "$BUILD_DIR/include/sqlite3.h" ] \
        && [ "$(cat "$stamp_file" 2>/dev/null)" = "$stamp" ]; then
        note "up to date (pin unchanged): $BUILD_DIR/amalgamation/sqlite3.c"
        return
    fi
    rm -rf "$BUILD_DIR/amalgamation" "$BUILD_DIR/include" "$stamp_file"
    mkdir -p "$BUILD_DIR/amalgamation" "$BUILD_DIR/include"
    # SQLCipher's configure and Makefile break on paths with spaces: work in a fresh temporary folder.
    local work
    work=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-amalgamation.XXXXXX")
    CLEANUP+=("$work")
    mkdir -p "$work/src" "$work/build"
    tar -xzf "$TARBALL" -C "$work/src"
    local top
    top=$(find "$work/src" -mindepth 1 -maxdepth 1 -type d | head -n1)
    [ -x "$top/configure" ] || die "the tarball holds no configure script (in $top)"
    local log=$BUILD_DIR/amalgamation/build.log
    # configure only prepares the tclsh generator; the flags that matter are applied when compiling.
    if ! (cd "$work/build" \
        && "$top/configure" "${PIN_CONFIGURE_FLAGS[@]}" CFLAGS="${PIN_CFLAGS[*]}" LDFLAGS="-lcrypto" \
        && make sqlite3.c) >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        die "generating the amalgamation failed (full log: $log)"
    fi
    [ -s "$work/build/sqlite3.c" ] || die "make sqlite3.c produced no sqlite3.c"
    cp "$work/build/sqlite3.c" "$work/build/sqlite3.h" "$BUILD_DIR/amalgamation/"
    grep -q "sqlcipher" "$BUILD_DIR/amalgamation/sqlite3.c" \
        || die "the generated sqlite3.c holds no SQLCipher code: wrong source tree?"
    local version
    version=$(sed -n 's/^#define SQLITE_VERSION[[:space:]]*"\(.*\)"/\1/p' "$BUILD_DIR/amalgamation/sqlite3.h")
    [ "$version" = "$PIN_SQLITE_VERSION" ] \
        || die "the source is SQLite $version, the pin says $PIN_SQLITE_VERSION"
    cp "$BUILD_DIR/amalgamation/sqlite3.h" "$BUILD_DIR/include/sqlite3.h"
    # A fixed timestamp: clang's module hash reads the header's mtime, and the merged archive records that
    # hash, so a regenerated but identical header must look the same.
    touch -d "2000-01-01 00:00:00 UTC" "$BUILD_DIR/include/sqlite3.h" "$BUILD_DIR/amalgamation/sqlite3.c" \
        "$BUILD_DIR/amalgamation/sqlite3.h"
    echo "$stamp" >"$stamp_file"
    note "generated sqlite3.c ($(wc -c <"$BUILD_DIR/amalgamation/sqlite3.c") bytes, SQLite $version)"
}

compile_engine() {
    local lib=$BUILD_DIR/lib/libsqlcipher.a stamp_file=$BUILD_DIR/engine.stamp stamp
    stamp=$(stamp_of "$(cat "$BUILD_DIR/amalgamation.stamp")" "${PIN_CFLAGS[@]}" "$("$CC" --version | head -n1)" \
        "$(sha256_of "$ROOT/BuildSupport/engine/sqlcipherkit_crypto.c")" engine-v2)
    if [ -s "$lib" ] && [ "$(cat "$stamp_file" 2>/dev/null)" = "$stamp" ]; then
        note "up to date (pin, flags and compiler unchanged): $lib"
    else
        rm -f "$stamp_file" "$lib"
        mkdir -p "$BUILD_DIR/obj" "$BUILD_DIR/lib"
        note "$CC -c ${PIN_CFLAGS[*]} sqlite3.c"
        # Relative input and prefix maps keep build paths out of the object, so any checkout builds the same.
        (cd "$BUILD_DIR/amalgamation" && "$CC" -c "${PIN_CFLAGS[@]}" \
            -ffile-prefix-map="$BUILD_DIR"=. -ffile-prefix-map="$ROOT"=. \
            -o "$BUILD_DIR/obj/sqlite3.o" sqlite3.c) || die "compiling the engine failed"
        # SQLCipherKit's crypto glue (the pool's one-time PBKDF2), with the engine's flags.
        (cd "$ROOT/BuildSupport/engine" && "$CC" -c "${PIN_CFLAGS[@]}" -ffile-prefix-map="$ROOT"=. \
            -o "$BUILD_DIR/obj/sqlcipherkit_crypto.o" sqlcipherkit_crypto.c) || die "compiling the crypto glue failed"
        # D: zero timestamps, uids and modes, so two builds give the same bytes.
        ar rcsD "$lib" "$BUILD_DIR/obj/sqlite3.o" "$BUILD_DIR/obj/sqlcipherkit_crypto.o"
        echo "$stamp" >"$stamp_file"
        forget_linked_products
    fi
    # Even an up-to-date engine is checked: nothing ships without the codec.
    "$ROOT/verify-symbols.sh" "$lib" >"$BUILD_DIR/engine-verify.log" 2>&1 || {
        cat "$BUILD_DIR/engine-verify.log" >&2
        die "the engine archive lacks SQLCipher's codec: refusing to build an artifact that would write plaintext"
    }
    note "libsqlcipher.a: codec symbols present, SHA-256 $(sha256_of "$lib")"
}

# SwiftPM does not track libraries given with -l, so test bundles and executables it linked against an older
# libsqlcipher.a would keep that engine. Removing them makes the next swift build/test link them afresh.
forget_linked_products() {
    [ "$BUILD_DIR" = "$ROOT/Vendor/build" ] && [ -d "$ROOT/.build" ] || return 0
    local product
    while IFS= read -r product; do
        note "engine changed: removing $product so SwiftPM relinks it"
        rm -f "$product"
    done < <(find "$ROOT/.build" -mindepth 3 -maxdepth 3 -type f -perm -u+x \
        \( -path '*/debug/*' -o -path '*/release/*' \) ! -name '*.so' ! -name '*.a' ! -name '*.o')
}

# ------------------------------------------------------------------------------------------------- swift ---

build_swift() {
    # The prefix maps keep this checkout's path out of the objects (debug info, #file strings).
    (cd "$ROOT" && swift build -c release --product SQLCipherKit \
        -Xswiftc -file-prefix-map -Xswiftc "$ROOT=.") || die "swift build of the SQLCipherKit product failed"
    SWIFT_BIN=$(cd "$ROOT" && swift build -c release --show-bin-path)
    SWIFT_ARCHIVE=$SWIFT_BIN/libSQLCipherKit.a
    note "Swift static library: $SWIFT_ARCHIVE"
    # The CLI, with the Swift runtime linked in, so dist/bin/sqlcipherkit runs without a Swift toolchain.
    (cd "$ROOT" && swift build -c release --product sqlcipherkit --static-swift-stdlib \
        -Xswiftc -file-prefix-map -Xswiftc "$ROOT=.") || die "swift build of the sqlcipherkit CLI failed"
    CLI_EXECUTABLE=$SWIFT_BIN/sqlcipherkit
    [ -x "$CLI_EXECUTABLE" ] || die "the sqlcipherkit executable was not built"
    note "CLI: $CLI_EXECUTABLE"
}

# ------------------------------------------------------------------------------------------------- merge ---

# The ELF machine name readelf prints for the toolchain's target architecture.
elf_machine_for_arch() {
    case "$1" in
        x86_64) echo "Advanced Micro Devices X86-64" ;;
        aarch64 | arm64) echo "AArch64" ;;
        armv7*) echo "ARM" ;;
        i686 | i386) echo "Intel 80386" ;;
        riscv64) echo "RISC-V" ;;
        powerpc64le | ppc64le) echo "PowerPC64" ;;
        s390x) echo "IBM S/390" ;;
        *) die "unknown target architecture '$1': teach elf_machine_for_arch about it" ;;
    esac
}

target_triple() {
    swiftc -print-target-info | sed -n 's/^ *"triple": "\(.*\)",$/\1/p' | head -n1
}

# Extracts archive $1 into folder $2, refusing duplicate member names (ar x would silently keep one) and
# members built for another architecture.
extract_members() {
    local archive=$1 into=$2 machine=$3 dupes member
    dupes=$(ar t "$archive" | sort | uniq -d)
    [ -z "$dupes" ] || die "$archive has several members named: $dupes (ar x would lose all but one)"
    mkdir -p "$into"
    (cd "$into" && ar x "$archive")
    for member in "$into"/*; do
        [ -f "$member" ] || continue
        local found
        found=$(readelf -h "$member" 2>/dev/null | sed -n 's/^ *Machine: *//p' || true)
        [ "$found" = "$machine" ] \
            || die "$(basename "$archive")($(basename "$member")) is built for '${found:-not ELF}', the target is '$machine'"
    done
}

# What ties the Swift objects to the folder they were built in, dropped from the copies merged into the
# artifact so that two checkouts in different folders give the same bytes (everything else is already
# path-independent: -file-prefix-map, relative module-cache paths):
# - `.swift_modhash`: 16 bytes per object, an MD5 of the LLVM module and the compiler options, absolute paths
#   included, which the compiler reads back only to skip regenerating an unchanged object. Nothing links or
#   runs it.
# - the DWARF debug info: for each clang module it imports (CSQLCipher, SwiftShims, ...), the Swift compiler
#   records the precompiled module's signature (8 bytes, DW_AT_GNU_dwo_id), a hash of the .pcm, whose content
#   holds the checkout's absolute paths (module map, headers); neither -file-prefix-map nor a relative module
#   cache reaches it. The artifact ships without DWARF, as the engine (compiled without -g) always did;
#   symbols stay, so crash reports still name SQLCipherKit's functions.
make_path_independent() {
    local member
    for member in "$1"/*; do
        objcopy --remove-section=.swift_modhash --strip-debug "$member" \
            || die "objcopy could not make $member path-independent"
    done
}

merge_archives() {
    local engine=$1 swift_lib=$2 out=$3
    local refuse="refusing to produce an artifact without the SQLCipher engine or the Swift API (it could write plaintext)"
    [ -f "$engine" ] || die "engine archive missing: $engine; $refuse"
    [ -f "$swift_lib" ] || die "Swift archive missing: $swift_lib; $refuse"
    [ -n "$(ar t "$engine" 2>/dev/null)" ] || die "engine archive is empty or not an archive: $engine; $refuse"
    [ -n "$(ar t "$swift_lib" 2>/dev/null)" ] || die "Swift archive is empty or not an archive: $swift_lib; $refuse"
    # Absolute paths: the members are extracted and archived from inside a temporary folder.
    engine=$(realpath "$engine")
    swift_lib=$(realpath "$swift_lib")
    mkdir -p "$(dirname "$out")"
    out=$(realpath "$out")
    local triple arch machine
    triple=$(target_triple)
    [ -n "$triple" ] || die "could not read the target triple from swiftc -print-target-info"
    arch=${triple%%-*}
    machine=$(elf_machine_for_arch "$arch")
    local work
    work=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-merge.XXXXXX")
    CLEANUP+=("$work")
    extract_members "$engine" "$work/engine" "$machine"
    extract_members "$swift_lib" "$work/swift" "$machine"
    make_path_independent "$work/swift"
    # The merge checks the engine itself, so no caller can merge a plain-SQLite engine by mistake.
    "$ROOT/verify-symbols.sh" "$engine" >"$work/verify.log" 2>&1 || {
        cat "$work/verify.log" >&2
        die "the engine archive $engine lacks SQLCipher's codec; $refuse"
    }
    # One relocatable object: linking any symbol of it links all of it, so the engine's sqlite3_* always come
    # with the Swift API and win over a system SQLite.
    local objects=()
    mapfile -t objects < <(find "$work/engine" "$work/swift" -type f | LC_ALL=C sort)
    ld -r -o "$work/SQLCipherKit.o" "${objects[@]}" || die "ld -r failed to merge the archives"
    rm -f "$out.part"
    (cd "$work" && ar rcsD "$out.part" SQLCipherKit.o)
    mv "$out.part" "$out"
    note "merged ${#objects[@]} objects for $triple into $out"
}

# -------------------------------------------------------------------------------------------------- dist ---

# Structured files (JSON) are written by a tool made for them: BuildSupport/json_object.py KEY=VALUE ...
json_object() { python3 "$ROOT/BuildSupport/json_object.py" "$@" || die "could not write $1"; }

# The pin as data, for everything that must not repeat it (the tests, the docs' figures): Vendor/build/pin.json.
write_pin_json() {
    local args=(sqlcipherVersion="$PIN_VERSION" sqliteVersion="$PIN_SQLITE_VERSION" tarball="$PIN_TARBALL"
        sha256="$PIN_SHA256" cachedTarball="$CACHE_DIR/$PIN_TARBALL" "sources:=[]" "configureFlags:=[]"
        "compileFlags:=[]" "upstreamTests:={}") f entry
    for f in "${PIN_SOURCES[@]}"; do args+=("sources[]=$f"); done
    for f in "${PIN_CONFIGURE_FLAGS[@]}"; do args+=("configureFlags[]=$f"); done
    for f in "${PIN_CFLAGS[@]}"; do args+=("compileFlags[]=$f"); done
    for entry in "${PIN_UPSTREAM_TESTS[@]}"; do args+=("upstreamTests>${entry%%=*}:=${entry#*=}"); done
    mkdir -p "$BUILD_DIR"
    json_object "$BUILD_DIR/pin.json" "${args[@]}"
}

write_pkg_config() {
    cat >"$1" <<EOF
# pkg-config description of the SQLCipher engine shipped by SQLCipherKit (C and C++ consumers; no Swift).
prefix=\${pcfiledir}/../..
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: sqlcipherkit
Description: SQLCipher $PIN_VERSION (SQLite $PIN_SQLITE_VERSION) encrypted SQLite engine, static, from SQLCipherKit
Version: $PIN_VERSION
Cflags: -I\${includedir} -DSQLITE_HAS_CODEC
Libs: -L\${libdir} -lsqlcipher -lcrypto -lm
EOF
}

write_manifest() {
    local dir=$1 triple=$2 args=() f
    args=(sqlcipherVersion="$PIN_VERSION" sqliteVersion="$PIN_SQLITE_VERSION" sourceTarball="$PIN_TARBALL"
        sourceSHA256="$PIN_SHA256" "compileFlags:=[]")
    for f in "${PIN_CFLAGS[@]}"; do args+=("compileFlags[]=$f"); done
    args+=(cCompiler="$("$CC" --version | head -n1)" swiftVersion="$(swift --version 2>/dev/null | head -n1)"
        targetTriple="$triple"
        "archives>lib/libSQLCipherKit.a=$(sha256_of "$dir/lib/libSQLCipherKit.a")"
        "archives>lib/libsqlcipher.a=$(sha256_of "$dir/lib/libsqlcipher.a")")
    json_object "$dir/MANIFEST.json" "${args[@]}"
}

# The SE-0482 artifact bundle (dist/SQLCipherKit/SQLCipherEngine.artifactbundle): the engine alone, as a
# static library that SwiftPM packages use through .binaryTarget(path:), with its header and module map; one
# variant, for the target triple. libcrypto's objects are folded into the archive and every symbol but the
# SQLite API is made local: a consumer links no -lcrypto, an OpenSSL of its own cannot clash with ours, and
# `swift package experimental-audit-binary-artifact` finds nothing undefined beyond the C library.
write_artifact_bundle() {
    local engine=$1 bundle=$2 triple=$3 libcrypto work variant leaked missing
    variant=SQLCipherEngine/$triple
    libcrypto=$("$CC" -print-file-name=libcrypto.a)
    [ -f "$libcrypto" ] || die "libcrypto.a not found (libssl-dev ships it): the artifact bundle folds it in"
    work=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-bundle.XXXXXX")
    CLEANUP+=("$work")
    (cd "$work" && ar x "$engine") || die "cannot extract $engine"
    # -d allocates common symbols, so that they too can be made local.
    ld -r -d -o "$work/engine+crypto.o" "$work"/*.o "$libcrypto" || die "ld -r could not fold libcrypto in"
    # Global: the SQLite API and SQLCipherKit's crypto glue (sqlcipherkit_*, what the Swift layer needs).
    objcopy --wildcard --keep-global-symbol='sqlite3_*' --keep-global-symbol='sqlcipherkit_*' \
        "$work/engine+crypto.o" "$work/SQLCipherEngine.o" || die "objcopy could not localize libcrypto's symbols"
    leaked=$(nm -g --defined-only "$work/SQLCipherEngine.o" | awk '$3 !~ /^(sqlite3|sqlcipherkit)_/ { print $3 }' | head -n5)
    [ -z "$leaked" ] || die "the bundle's archive exports more than the SQLite API and SQLCipherKit's glue: $leaked"
    missing=$(nm -u "$work/SQLCipherEngine.o" \
        | awk '$2 ~ /^(EVP_|OPENSSL_|PKCS5_|ERR_|RAND_|OBJ_|CRYPTO_)/ { print $2 }' | head -n5)
    [ -z "$missing" ] || die "libcrypto was not wholly folded into the bundle: $missing"
    mkdir -p "$bundle/$variant" "$bundle/SQLCipherEngine/include"
    (cd "$work" && ar rcsD "$bundle/$variant/libsqlcipher.a" SQLCipherEngine.o)
    rm -rf "$work"
    cp "$BUILD_DIR/include/sqlite3.h" "$bundle/SQLCipherEngine/include/sqlite3.h"
    cat >"$bundle/SQLCipherEngine/include/SQLCipherEngine.h" <<'HEADER'
// The SQLCipher engine's C API, as shipped in SQLCipherKit's artifact bundle.
#ifndef SQLCIPHERENGINE_H
#define SQLCIPHERENGINE_H
// sqlite3.h declares sqlite3_key, sqlite3_key_v2, sqlite3_rekey and sqlite3_rekey_v2 only with this macro.
#ifndef SQLITE_HAS_CODEC
#define SQLITE_HAS_CODEC 1
#endif
#include "sqlite3.h"
#endif
HEADER
    cat >"$bundle/SQLCipherEngine/include/module.modulemap" <<'MODULEMAP'
// SQLCipher with OpenSSL's libcrypto inside (its symbols local): only libm is left to link.
module SQLCipherEngine {
    header "SQLCipherEngine.h"
    link "m"
    export *
}
MODULEMAP
    local variant_json
    variant_json=$(python3 -c 'import json, sys; print(json.dumps([{"path": sys.argv[1],
        "supportedTriples": [sys.argv[2]], "staticLibraryMetadata": {"headerPaths": ["SQLCipherEngine/include"],
        "moduleMapPath": "SQLCipherEngine/include/module.modulemap"}}]))' "$variant/libsqlcipher.a" "$triple")
    json_object "$bundle/info.json" schemaVersion=1.0 "artifacts>SQLCipherEngine>type=staticLibrary" \
        "artifacts>SQLCipherEngine>version=$PIN_VERSION" "artifacts>SQLCipherEngine>variants:=$variant_json"
}

# ------------------------------------------------------------------------------- licences and notices ---

# The licence texts of what the artifacts contain, gathered at build time from the pinned tarball and the
# system (none is committed): sets LICENSE_* to files (comma-separated) under $BUILD_DIR/licenses/.
collect_licenses() {
    local dir=$BUILD_DIR/licenses member
    rm -rf "$dir"
    mkdir -p "$dir"
    for member in LICENSE.md SQLITE_LICENSE.md; do
        tar -xzOf "$TARBALL" --wildcards "*/$member" >"$dir/$member" 2>/dev/null || rm -f "$dir/$member"
    done
    [ -s "$dir/LICENSE.md" ] || die "the pinned tarball holds no LICENSE.md: SQLCipher's licence cannot be shipped"
    # SQLite's own words, from the generated header's first comment (its blessing, in every release).
    sed -n '1,/\*\//p' "$BUILD_DIR/include/sqlite3.h" >"$dir/sqlite3.h-blessing.txt"
    LICENSE_SQLCIPHER=$dir/LICENSE.md
    LICENSE_SQLITE="$dir/SQLITE_LICENSE.md,$dir/sqlite3.h-blessing.txt"
    LICENSE_OPENSSL=$(find /usr/share/doc -maxdepth 2 -path '*/libssl*/copyright' 2>/dev/null | sort | tr '\n' ',')
    LICENSE_OPENSSL+=/usr/share/common-licenses/Apache-2.0
    LICENSE_SWIFT=$(dirname "$(dirname "$(realpath "$(command -v swiftc)")")")/share/swift/LICENSE.txt
    # The CLI's Foundation carries ICU's code and data: the system's copy of ICU's licence (the same terms).
    LICENSE_ICU=$(find /usr/share/doc -maxdepth 2 -path '*/libicu[0-9]*/copyright' 2>/dev/null | sort | head -n1)
    LICENSE_ARGUMENT_PARSER=$ROOT/.build/checkouts/swift-argument-parser/LICENSE.txt
    OPENSSL_VERSION=$(printf '#include <openssl/opensslv.h>\nOPENSSL_VERSION_STR\n' | "$CC" -E -P -x c - 2>/dev/null \
        | tail -n1 | tr -d '" ')
    [ -n "$OPENSSL_VERSION" ] || die "could not read OpenSSL's version from <openssl/opensslv.h>"
}

# What an artifact needs of OpenSSL, in one sentence (the notices and the SBOM say the same).
openssl_note() {
    case $1 in
        folded) echo "OpenSSL's libcrypto $OPENSSL_VERSION is folded into this artifact (its symbols local): it needs no OpenSSL at run time, and does not get the system's OpenSSL security updates; rebuild to update it." ;;
        *) echo "This artifact does not contain OpenSSL: it links the system's libcrypto (built against $OPENSSL_VERSION; libssl-dev to build, libssl3 at run time), so OpenSSL security updates come with the system." ;;
    esac
}

# notices_for OUT ARTIFACT system|folded COMPONENT..., with components among: sqlcipherkit sqlcipher openssl
# swift parser.
notices_for() {
    local out=$1 artifact=$2 openssl=$3 args=() c
    shift 3
    for c in "$@"; do
        case $c in
            sqlcipherkit) args+=(--component "SQLCipherKit (The SQLCipherKit authors)|MIT|$ROOT/LICENSE") ;;
            sqlcipher) args+=(--component "SQLCipher $PIN_VERSION (Zetetic LLC)|BSD-3-Clause|$LICENSE_SQLCIPHER"
                              --component "SQLite $PIN_SQLITE_VERSION, inside SQLCipher|public domain (blessing)|$LICENSE_SQLITE") ;;
            openssl) args+=(--component "OpenSSL libcrypto $OPENSSL_VERSION, folded in|Apache-2.0|$LICENSE_OPENSSL") ;;
            swift) args+=(--component "Swift runtime, standard library and Foundation (swift.org)|Apache-2.0 with Runtime Library Exception|$LICENSE_SWIFT"
                          --component "ICU code and data inside Foundation (Unicode, Inc.)|Unicode / ICU licence|${LICENSE_ICU:-}") ;;
            parser) args+=(--component "swift-argument-parser (Apple Inc.)|Apache-2.0|$LICENSE_ARGUMENT_PARSER") ;;
            *) die "notices_for: unknown component $c" ;;
        esac
    done
    python3 "$ROOT/BuildSupport/notices.py" --out "$out" --artifact "$artifact" --intro "$(openssl_note "$openssl")" \
        "${args[@]}" || die "could not write the notices for $artifact"
}

# Each artifact carries the notices of what is inside it: a NOTICES file beside each archive and executable,
# inside each bundle and release package; the project's own licence at the top.
write_notices() {
    local dist=$1
    cp "$ROOT/LICENSE" "$dist/LICENSE"
    notices_for "$dist/lib/libSQLCipherKit.a.NOTICES.txt" lib/libSQLCipherKit.a system sqlcipherkit sqlcipher
    notices_for "$dist/lib/libsqlcipher.a.NOTICES.txt" lib/libsqlcipher.a system sqlcipherkit sqlcipher
    notices_for "$dist/bin/sqlcipherkit.NOTICES.txt" bin/sqlcipherkit system sqlcipherkit sqlcipher swift parser
    notices_for "$dist/SQLCipherEngine.artifactbundle/THIRD_PARTY_NOTICES.txt" SQLCipherEngine.artifactbundle \
        folded sqlcipherkit sqlcipher openssl
}

# ------------------------------------------------------------------------------------ release package ---

# dist/SQLCipherKit/swiftpm/SQLCipherKit/ (the system's libcrypto) and swiftpm/SQLCipherKit-openssl-inside/
# (libcrypto folded in): complete SwiftPM packages for a release repository (BuildSupport/release_package.py),
# each with its engine bundle zipped and checksummed for the binaryTarget(url:checksum:) form in release-asset/.
# The folder's name is the package's identity for a path dependency (`package: "SQLCipherKit"`).
write_release_packages() {
    local dist=$1 triple=$2 folded_archive=$3 flavour out archive openssl components
    for flavour in SQLCipherKit SQLCipherKit-openssl-inside; do
        out=$dist/swiftpm/$flavour
        mkdir -p "$dist/swiftpm"
        components=(sqlcipherkit sqlcipher)
        if [ "$flavour" = SQLCipherKit ]; then
            archive=$dist/lib/libsqlcipher.a openssl=system
        else
            archive=$folded_archive openssl=folded
            components+=(openssl)
        fi
        notices_for "$BUILD_DIR/licenses/$flavour-NOTICES.txt" "the $flavour release package" "$openssl" \
            "${components[@]}"
        local common=(--out "$out" --root "$ROOT" --engine "$archive" --sqlite-header "$BUILD_DIR/include/sqlite3.h"
            --triple "$triple" --version "$PIN_VERSION" --openssl "$openssl"
            --notices "$BUILD_DIR/licenses/$flavour-NOTICES.txt")
        [ -z "$RELEASE_ASSET_URL" ] || common+=(--asset-url "$RELEASE_ASSET_URL")
        python3 "$ROOT/BuildSupport/release_package.py" "${common[@]}" \
            || die "could not write the release package $flavour"
        swift package --package-path "$out" compute-checksum "$out/release-asset/CSQLCipher.artifactbundle.zip" \
            >"$out/release-asset/CSQLCipher.artifactbundle.zip.sha256" \
            || die "swift package compute-checksum failed for $flavour"
        python3 "$ROOT/BuildSupport/release_package.py" "${common[@]}" --stage asset-manifest \
            --checksum-file "$out/release-asset/CSQLCipher.artifactbundle.zip.sha256" \
            || die "could not write the release-asset manifest for $flavour"
    done
}

# ------------------------------------------------------------------------------------------------ SBOM ---

# dist/SQLCipherKit/sbom.cdx.json (CycloneDX, BuildSupport/sbom.py) from the facts this build knows.
write_sbom() {
    local dist=$1 facts=$BUILD_DIR/sbom-facts.json url f
    local args=(sqlcipherVersion="$PIN_VERSION" sqliteVersion="$PIN_SQLITE_VERSION" sourceTarball="$PIN_TARBALL"
        sourceSHA256="$PIN_SHA256" "sourceURLs:=[]" "compileFlags:=[]" opensslVersion="$OPENSSL_VERSION"
        "opensslPackageVersion=$(dpkg-query -W -f='${Version}' libssl3 2>/dev/null || echo unknown)"
        "swiftVersion=$(swiftc --version 2>&1 | sed -n 's/.*Swift version \([0-9.]*\).*/\1/p' | head -n1)"
        "swiftVersionLine=$(swift --version 2>/dev/null | head -n1)" "cCompiler=$("$CC" --version | head -n1)"
        projectVersion="$PROJECT_VERSION" packageResolved="$ROOT/Package.resolved" dist="$dist"
        "opensslSystemNote=$(openssl_note system)" "opensslFoldedNote=$(openssl_note folded)")
    while read -r url; do args+=("sourceURLs[]=$url"); done < <(source_urls)
    for f in "${PIN_CFLAGS[@]}"; do args+=("compileFlags[]=$f"); done
    json_object "$facts" "${args[@]}"
    python3 "$ROOT/BuildSupport/sbom.py" --out "$dist/sbom.cdx.json" --facts "$facts" || die "could not write the SBOM"
}

assemble_dist() {
    local engine=$1 swift_lib=$2 final=$DIST_DIR/SQLCipherKit
    local staging=$DIST_DIR/.SQLCipherKit.partial
    rm -rf "$staging"
    mkdir -p "$staging/lib/pkgconfig" "$staging/include" "$staging/Modules" "$staging/bin"
    strip -o "$staging/bin/sqlcipherkit" "$CLI_EXECUTABLE"
    merge_archives "$engine" "$swift_lib" "$staging/lib/libSQLCipherKit.a"
    cp "$engine" "$staging/lib/libsqlcipher.a"
    write_pkg_config "$staging/lib/pkgconfig/sqlcipherkit.pc"
    cp "$BUILD_DIR/include/sqlite3.h" "$staging/include/sqlite3.h"
    cp "$ROOT/Sources/CSQLCipher/module.modulemap" "$staging/include/module.modulemap"
    # The shim's include line points into Vendor/ in the source tree; in dist/ sqlite3.h sits beside it.
    sed 's|^#include ".*" // SQLCIPHERKIT_ENGINE_HEADER$|#include "sqlite3.h"|' \
        "$ROOT/Sources/CSQLCipher/shim.h" >"$staging/include/shim.h"
    grep -q '^#include "sqlite3.h"$' "$staging/include/shim.h" \
        || die "could not point shim.h at the shipped sqlite3.h (the marked include line is gone)"
    local module_file
    for module_file in "$SWIFT_BIN"/Modules/SQLCipherKit.swift{module,doc,sourceinfo} \
        "$SWIFT_BIN"/Modules/SQLCipherKit.abi.json; do
        [ -f "$module_file" ] && cp "$module_file" "$staging/Modules/"
    done
    [ -f "$staging/Modules/SQLCipherKit.swiftmodule" ] \
        || die "no SQLCipherKit.swiftmodule under $SWIFT_BIN/Modules: swiftc consumers could not import it"
    local triple
    triple=$(target_triple)
    write_artifact_bundle "$(realpath "$engine")" "$(realpath "$staging")/SQLCipherEngine.artifactbundle" "$triple"
    collect_licenses
    write_notices "$staging"
    write_release_packages "$(realpath "$staging")" "$triple" \
        "$(realpath "$staging")/SQLCipherEngine.artifactbundle/SQLCipherEngine/$triple/libsqlcipher.a"
    write_manifest "$staging" "$triple"
    write_sbom "$(realpath "$staging")"
    STAGING=$staging
}

# Replaces the previous artifact with the staged one, only once the staged one has passed verification.
publish_dist() {
    local final=$DIST_DIR/SQLCipherKit
    rm -rf "$final"
    mv "$STAGING" "$final"
    note "dist: $final"
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

# -------------------------------------------------------------------------------------------------- main ---

main() {
    local command=all source_file=${SQLCIPHER_TARBALL:-} test_tools=no
    local engine_arg="" swift_arg="" out_arg=""
    case "${1:-}" in
        fetch | engine | merge | mirrors) command=$1; shift ;;
    esac
    while [ $# -gt 0 ]; do
        case "$1" in
            --source) [ $# -ge 2 ] || die "--source needs a FILE"; source_file=$2; shift 2 ;;
            --source=*) source_file=${1#--source=}; shift ;;
            --test-tools) test_tools=yes; shift ;;
            --engine) engine_arg=${2:-}; shift 2 || die "--engine needs a FILE" ;;
            --swift) swift_arg=${2:-}; shift 2 || die "--swift needs a FILE" ;;
            --out) out_arg=${2:-}; shift 2 || die "--out needs a FILE" ;;
            -h | --help) usage; exit 0 ;;
            *) usage >&2; die "unknown argument: $1" ;;
        esac
    done
    [ -z "$source_file" ] || source_file=$(realpath "$source_file")
    if [ "$command" = all ] && [ "$BUILD_DIR" != "$ROOT/Vendor/build" ]; then
        # The Swift side (shim.h, Package.swift) reads the engine from Vendor/build: another folder would
        # build the API against a different engine than the one shipped.
        die "SQLCIPHERKIT_BUILD_DIR applies to 'fetch' and 'engine' only; the full build uses Vendor/build"
    fi

    if [ "$command" = mirrors ]; then
        source_urls
        return
    fi
    if [ "$command" = merge ]; then
        [ -n "$engine_arg" ] && [ -n "$swift_arg" ] && [ -n "$out_arg" ] \
            || die "merge needs --engine ENGINE.a --swift SWIFT.a --out OUT.a"
        phase "merge"
        merge_archives "$engine_arg" "$swift_arg" "$out_arg"
        phase_end
        return
    fi

    local started=$SECONDS
    phase "prerequisites"
    check_prerequisites "$test_tools"
    phase "source: SQLCipher $PIN_VERSION ($PIN_TARBALL)"
    obtain_source "$source_file"
    if [ "$command" = fetch ]; then
        phase_end
        echo "$TARBALL"
        return
    fi
    # Not for 'fetch' alone: it may fetch into another cache (the tests do), and pin.json names the build's.
    write_pin_json
    phase "amalgamation (tclsh)"
    generate_amalgamation
    phase "engine: libsqlcipher.a"
    compile_engine
    if [ "$command" = engine ]; then
        phase_end
        return
    fi
    phase "Swift static library (swift build -c release --product SQLCipherKit)"
    build_swift
    phase "merge into a staged dist/"
    assemble_dist "$BUILD_DIR/lib/libsqlcipher.a" "$SWIFT_ARCHIVE"
    phase "verify the staged artifact: symbols, downstream links, run-time self-check"
    verify_dist "$STAGING"
    publish_dist
    local dist=$DIST_DIR/SQLCipherKit
    phase_end
    cat <<EOF

SQLCipherKit built in $((SECONDS - started))s
  artifact:  $dist/lib/libSQLCipherKit.a (Swift API + SQLCipher $PIN_VERSION, one archive)
  engine:    $dist/lib/libsqlcipher.a (C/C++ via pkg-config: $dist/lib/pkgconfig/sqlcipherkit.pc)
  CLI:       $dist/bin/sqlcipherkit (selfcheck, check, encrypt, decrypt, rekey, migrate, info, query)
  bundle:    $dist/SQLCipherEngine.artifactbundle (SE-0482 static library, libcrypto inside, for SwiftPM)
  manifest:  $dist/MANIFEST.json
  verified:  codec symbols, downstream link, encrypted file, cipher_version self-check
EOF
}

main "$@"
