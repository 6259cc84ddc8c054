#!/usr/bin/env bash
# verify-symbols.sh: checks that a static archive really carries the SQLCipher engine (CI symbol
# verification), and optionally links and runs a downstream program against it.
#
# It passes only when SQLCipher's keying, codec and export symbols are defined, no sqlite3_* symbol is left
# undefined, and, for the merged SQLCipherKit artifact, the Swift API is there too. A plain-SQLite engine
# (built without SQLITE_HAS_CODEC) fails here: it would write plaintext. The downstream programs --link-test
# builds are BuildSupport/verify/downstream.swift and downstream.c.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROGRAM=verify-symbols.sh
# shellcheck source=BuildSupport/common.sh
source "$ROOT/BuildSupport/common.sh"

usage() {
    cat <<'EOF'
Usage: verify-symbols.sh ARCHIVE [options]

Checks (always):
  - ARCHIVE is a non-empty ar archive;
  - sqlite3_key, sqlite3_key_v2, sqlite3_rekey, sqlite3_rekey_v2 and SQLCipher's codec and export symbols
    are defined;
  - no sqlite3_* symbol is undefined;
  - if ARCHIVE holds the SQLCipherKit Swift module: its public API symbols are defined.

Options:
  --expect-from A      every global symbol A defines must be defined by ARCHIVE too (repeatable; the build
                       passes the engine and the Swift archive it merged)
  --link-test          also build and run a tiny downstream program (Swift for the merged artifact, C for an
                       engine archive) that writes an encrypted database and proves it: the file does not
                       begin with "SQLite format 3", holds no plaintext marker, refuses a wrong key, reads
                       back with the right one, and the program does not load a system libsqlite3
  --with-system-sqlite with --link-test: also link the system libsqlite3 (-lsqlite3, kept as needed) and
                       prove SQLCipher still answers
  --pkg-config         with --link-test on an engine archive: compile with
                       `pkg-config --cflags --libs sqlcipherkit` from ARCHIVE's lib/pkgconfig folder
  --include DIR        headers (sqlite3.h; for Swift also the CSQLCipher module map); default ARCHIVE/../include
  --modules DIR        Swift modules for --link-test; default ARCHIVE/../Modules
  --keep DIR           keep the link test's program and database in DIR
Exit status: 0 when everything holds, 1 with a list of what failed, 64 for bad usage.
EOF
}

fail_usage() {
    printf '%s: %s\n' "$PROGRAM" "$*" >&2
    usage >&2
    exit 64
}

# Sets ARCHIVE, EXPECT_FROM, LINK_TEST, SYSTEM_SQLITE, USE_PKG_CONFIG, INCLUDE_DIR, MODULES_DIR and KEEP_DIR.
parse_arguments() {
    ARCHIVE="" LINK_TEST=no SYSTEM_SQLITE=no USE_PKG_CONFIG=no INCLUDE_DIR="" MODULES_DIR="" KEEP_DIR=""
    EXPECT_FROM=()
    while [ $# -gt 0 ]; do
        case "$1" in
            --expect-from) [ $# -ge 2 ] || fail_usage "--expect-from needs an archive"; EXPECT_FROM+=("$2"); shift 2 ;;
            --link-test) LINK_TEST=yes; shift ;;
            --with-system-sqlite) SYSTEM_SQLITE=yes; shift ;;
            --pkg-config) USE_PKG_CONFIG=yes; shift ;;
            --include) [ $# -ge 2 ] || fail_usage "--include needs a folder"; INCLUDE_DIR=$2; shift 2 ;;
            --modules) [ $# -ge 2 ] || fail_usage "--modules needs a folder"; MODULES_DIR=$2; shift 2 ;;
            --keep) [ $# -ge 2 ] || fail_usage "--keep needs a folder"; KEEP_DIR=$2; shift 2 ;;
            -h | --help) usage; exit 0 ;;
            -*) fail_usage "unknown option: $1" ;;
            *) [ -z "$ARCHIVE" ] || fail_usage "one archive at a time"; ARCHIVE=$1; shift ;;
        esac
    done
    [ -n "$ARCHIVE" ] || fail_usage "no archive given"
}

# ---------------------------------------------------------------------------------------------- report ---

# A check that failed is recorded and the others still run; finish reports them all (exit 1) or OK (exit 0).
FAILURES=()
fail() { FAILURES+=("$1"); }
finish() {
    if [ ${#FAILURES[@]} -gt 0 ]; then
        printf '%s: FAILED for %s\n' "$PROGRAM" "$ARCHIVE" >&2
        printf '  - %s\n' "${FAILURES[@]}" >&2
        exit 1
    fi
    printf '%s: OK %s\n' "$PROGRAM" "$ARCHIVE"
    exit 0
}
fail_now() { fail "$1"; finish; }

# ------------------------------------------------------------------------------------------------ symbols ---

# Global symbols a file defines / leaves undefined, one name a line, sorted. (nm -P: "name type value size";
# U, w and v are undefined or weakly undefined; every other type is a definition.) NM reads the archive's
# machine (pick_binutils).
defined_symbols() {
    "$NM" -g -P "$1" 2>/dev/null | awk 'NF >= 2 && $2 !~ /^[Uwv]$/ { print $1 }' | LC_ALL=C sort -u
}
# Every symbol a file defines, local ones too (the artifact bundle makes everything but the API local).
all_defined_symbols() {
    "$NM" -P "$1" 2>/dev/null | awk 'NF >= 2 && $2 !~ /^[Uwv]$/ { print $1 }' | LC_ALL=C sort -u
}
undefined_symbols() {
    "$NM" -g -P "$1" 2>/dev/null | awk 'NF >= 2 && $2 == "U" { print $1 }' | LC_ALL=C sort -u
}

# Stops unless ARCHIVE is a non-empty ar archive; makes ARCHIVE absolute.
check_is_archive() {
    [ -f "$ARCHIVE" ] || fail_now "no such archive: $ARCHIVE"
    ARCHIVE=$(realpath "$ARCHIVE")
    [ -n "$(ar t "$ARCHIVE" 2>/dev/null)" ] || fail_now "not an ar archive, or an empty one: $ARCHIVE"
}

# Sets NM (and MACHINE): the host's nm for an archive of the host's machine, the cross binutils' for a foreign
# one (BuildSupport/common.sh, binutils_prefix_for_machine). readelf reads every ELF machine; nm does not.
pick_binutils() {
    local prefix host
    MACHINE=$(readelf -h "$ARCHIVE" 2>/dev/null | sed -n 's/^ *Machine: *//p' | sort -u | head -n1)
    host=$(readelf -h /proc/self/exe 2>/dev/null | sed -n 's/^ *Machine: *//p')
    NM=nm
    [ -n "$MACHINE" ] && [ "$MACHINE" != "$host" ] || return 0
    prefix=$(binutils_prefix_for_machine "$MACHINE") || fail_now "no binutils known for an archive of machine '$MACHINE'"
    NM=${prefix}nm
    command -v "$NM" >/dev/null || fail_now "$ARCHIVE is built for $MACHINE: $NM is needed to read it (apt-get install binutils-${prefix%-})"
    [ "$LINK_TEST" = no ] || fail_now "--link-test runs programs of this machine only; $ARCHIVE is built for $MACHINE (Tests/Emulation runs it under qemu)"
}

# 1. SQLCipher's keying API, codec and export: absent in an engine built without SQLITE_HAS_CODEC.
# The API must be global; the codec's internals only defined (the artifact bundle makes them local).
check_codec_symbols() {
    local symbol missing=()
    for symbol in sqlite3_key sqlite3_key_v2 sqlite3_rekey sqlite3_rekey_v2 sqlite3_open_v2 sqlite3_prepare_v2 \
        sqlite3_step; do
        grep -qxF "$symbol" "$WORK/defined" || missing+=("$symbol")
    done
    for symbol in sqlcipherCodecAttach sqlcipher_codec_pragma sqlcipher_exportFunc sqlcipher_version; do
        grep -qxF "$symbol" "$WORK/all-defined" || missing+=("$symbol")
    done
    [ ${#missing[@]} -eq 0 ] || fail "SQLCipher symbols not defined (engine built without SQLITE_HAS_CODEC?): ${missing[*]}"
}

# 2. No sqlite3_* reference may be left for another library (a system SQLite) to satisfy.
check_no_undefined_sqlite() {
    local unresolved
    unresolved=$(LC_ALL=C comm -23 "$WORK/undefined" "$WORK/defined" | grep -E '^sqlite3_' | tr '\n' ' ' || true)
    [ -z "$unresolved" ] || fail "sqlite3_* symbols undefined: $unresolved"
}

# 3. The Swift API, when this is the merged artifact (its module's mangled prefix is $s12SQLCipherKit); sets
# IS_SWIFT.
check_swift_api() {
    # shellcheck disable=SC2016 # a literal $ in a regular expression
    local prefix='^\$s12SQLCipherKit' api
    IS_SWIFT=no
    grep -q "$prefix" "$WORK/defined" || return 0
    IS_SWIFT=yes
    command -v swift >/dev/null \
        || { fail "the archive holds Swift code but no swift toolchain is on PATH to check it"; return 0; }
    grep "$prefix" "$WORK/defined" | swift demangle --simplified >"$WORK/swift-api" 2>/dev/null || true
    for api in 'static Engine.selfCheck()' 'Database.__allocating_init(path:key:configuration:)' \
        'Database.execute(_:)' 'Database.execute(_:_:)' 'Database.prepare(_:)' 'Database.rekey(to:)' \
        'static Key.passphrase(_:)' 'static Key.rawKey(_:)' 'static Key.rawKey(_:salt:)'; do
        grep -qF "$api" "$WORK/swift-api" || fail "Swift API symbol missing: SQLCipherKit.$api"
    done
}

# 4. Nothing the merged inputs defined may be lost.
check_expect_from() {
    local source_archive
    for source_archive in ${EXPECT_FROM[@]+"${EXPECT_FROM[@]}"}; do
        if [ ! -f "$source_archive" ]; then
            fail "--expect-from: no such archive: $source_archive"
            continue
        fi
        # Collect first, truncate after: `| head` would end comm with SIGPIPE, and pipefail the script.
        defined_symbols "$source_archive" | LC_ALL=C comm -23 - "$WORK/defined" >"$WORK/lost" || true
        if [ -s "$WORK/lost" ]; then
            fail "$(wc -l <"$WORK/lost") symbols defined by $(basename "$source_archive") are missing: $(sed -n '1,10p' "$WORK/lost" | tr '\n' ' ')"
        fi
    done
}

check_symbols() {
    defined_symbols "$ARCHIVE" >"$WORK/defined"
    all_defined_symbols "$ARCHIVE" >"$WORK/all-defined"
    undefined_symbols "$ARCHIVE" >"$WORK/undefined"
    check_codec_symbols
    check_no_undefined_sqlite
    check_swift_api
    check_expect_from
    [ ${#FAILURES[@]} -eq 0 ] || finish
    printf '%s: symbols ok (%s defined; SQLCipher codec and keying present%s)\n' "$PROGRAM" \
        "$(wc -l <"$WORK/defined")" "$([ "$IS_SWIFT" = yes ] && echo '; Swift API present')"
}

# ---------------------------------------------------------------------------------------------- link test ---

# Builds DIR/downstream from BuildSupport/verify/downstream.swift: only `import SQLCipherKit` and -l of the
# archive, no other flag.
build_swift_program() {
    local dir=$1 lib_dir=$2 system_flags=()
    cp "$ROOT/BuildSupport/verify/downstream.swift" "$dir/main.swift"
    command -v swiftc >/dev/null || fail_now "swiftc is needed to link-test a Swift archive"
    [ "$SYSTEM_SQLITE" = no ] || system_flags=(-Xlinker --no-as-needed -lsqlite3 -Xlinker --as-needed)
    if ! swiftc -O "$dir/main.swift" -o "$dir/downstream" -I "$MODULES_DIR" -I "$INCLUDE_DIR" -L "$lib_dir" \
        ${system_flags[@]+"${system_flags[@]}"} -l"$(basename "$ARCHIVE" .a | sed 's/^lib//')" \
        >"$dir/build.log" 2>&1; then
        cat "$dir/build.log" >&2
        fail_now "a Swift program importing SQLCipherKit did not build against $ARCHIVE with no extra flag"
    fi
}

# Sets CC_FLAGS: from `pkg-config --cflags --libs sqlcipherkit` in LIB_DIR/pkgconfig, or the archive itself.
c_flags() {
    local lib_dir=$1 flags_text
    if [ "$USE_PKG_CONFIG" = no ]; then
        CC_FLAGS=(-DSQLITE_HAS_CODEC -I "$INCLUDE_DIR" "$ARCHIVE" -lcrypto -lm)
        return
    fi
    command -v pkg-config >/dev/null || fail_now "pkg-config is not installed (apt-get install pkg-config)"
    export PKG_CONFIG_PATH=$lib_dir/pkgconfig
    flags_text=$(pkg-config --cflags --libs sqlcipherkit) \
        || fail_now "pkg-config does not know sqlcipherkit in $lib_dir/pkgconfig"
    # pkg-config escapes spaces in paths with backslashes: let the shell's own word splitting undo that.
    eval "CC_FLAGS=($flags_text)"
    printf '%s: pkg-config --cflags --libs sqlcipherkit: %s\n' "$PROGRAM" "$flags_text"
}

# Builds DIR/downstream from BuildSupport/verify/downstream.c: the SQLCipher C API only.
build_c_program() {
    local dir=$1 lib_dir=$2 system_flags=()
    cp "$ROOT/BuildSupport/verify/downstream.c" "$dir/main.c"
    c_flags "$lib_dir"
    # A system SQLite linked first is the harder case: its definitions are seen before the engine's.
    # shellcheck disable=SC2054 # commas inside -Wl, options
    [ "$SYSTEM_SQLITE" = no ] || system_flags=(-Wl,--no-as-needed -lsqlite3 -Wl,--as-needed)
    # An implicit declaration would mean the wrong sqlite3.h (without sqlite3_key) was used: make it fatal.
    if ! "${CC:-cc}" -O1 -Werror=implicit-function-declaration -o "$dir/downstream" "$dir/main.c" \
        ${system_flags[@]+"${system_flags[@]}"} "${CC_FLAGS[@]}" \
        >"$dir/build.log" 2>&1; then
        cat "$dir/build.log" >&2
        fail_now "a C program did not build against $ARCHIVE"
    fi
}

# Runs DIR/downstream, which writes DIR/test.db holding MARKER and reads it back; prints what it said.
run_downstream() {
    local dir=$1 marker=$2
    if ! (cd "$dir" && "$dir/downstream" "$dir/test.db" "$marker") >"$dir/run.log" 2>&1; then
        cat "$dir/run.log" >&2
        fail_now "the downstream program failed"
    fi
    sed 's/^/  /' "$dir/run.log"
    grep -q '^cipher_version: [0-9]' "$dir/run.log" || fail "the downstream program reported no cipher_version"
}

# The database at rest: not "SQLite format 3", MARKER nowhere in it. Fails (status 1) when a check recorded a
# failure, so its "ok:" line prints only when all held.
check_at_rest() {
    local dir=$1 marker=$2 failed_before=${#FAILURES[@]} file
    [ -s "$dir/test.db" ] || fail "the downstream program wrote no database"
    if cmp -s -n 16 "$dir/test.db" <(printf 'SQLite format 3\0'); then
        fail "the database begins with 'SQLite format 3': it is plaintext"
    fi
    for file in "$dir"/test.db*; do
        if grep -qaF "$marker" "$file"; then fail "the plaintext marker is readable in $(basename "$file")"; fi
    done
    [ ${#FAILURES[@]} -eq "$failed_before" ]
}

# No system libsqlite3 among the program's libraries (or, with --with-system-sqlite, one loaded on purpose).
check_libraries() {
    local program=$1 libraries
    # ldd must answer: an empty list would make "no libsqlite3" true of anything.
    if ! libraries=$(ldd "$program" 2>&1) || [ -z "$libraries" ]; then
        fail "ldd could not list the program's libraries: ${libraries:-no output}"
    elif [ "$SYSTEM_SQLITE" = yes ]; then
        if grep -q 'libsqlite3' <<<"$libraries"; then
            echo "  ok: system libsqlite3 loaded too, and SQLCipher answered"
        else
            fail "the system libsqlite3 was not loaded, so this run proves nothing about the symbol fight"
        fi
    elif grep -q 'libsqlite3' <<<"$libraries"; then
        fail "the program loads a system libsqlite3"
    else
        echo "  ok: no libsqlite3 among the program's libraries"
    fi
}

# Builds and runs a downstream program (Swift for the merged artifact, C for an engine archive) in --keep's
# folder or a temporary one, then checks what it wrote and what it loaded.
link_test() {
    local lib_dir dir marker at_rest_ok=no
    lib_dir=$(dirname "$ARCHIVE")
    INCLUDE_DIR=${INCLUDE_DIR:-$lib_dir/../include}
    MODULES_DIR=${MODULES_DIR:-$lib_dir/../Modules}
    dir=${KEEP_DIR:-$WORK/link-test}
    mkdir -p "$dir"
    dir=$(realpath "$dir")
    rm -f "$dir"/test.db*
    marker="SQLCipherKit-plaintext-marker-$$-$RANDOM$RANDOM"
    if [ "$IS_SWIFT" = yes ]; then
        build_swift_program "$dir" "$lib_dir"
    else
        build_c_program "$dir" "$lib_dir"
    fi
    run_downstream "$dir" "$marker"
    if check_at_rest "$dir" "$marker"; then at_rest_ok=yes; fi
    check_libraries "$dir/downstream"
    [ "$at_rest_ok" = no ] || echo "  ok: header is not 'SQLite format 3' and the marker is not in the file"
}

# -------------------------------------------------------------------------------------------------- main ---

main() {
    parse_arguments "$@"
    check_is_archive
    pick_binutils
    temp_dir WORK verify-symbols
    check_symbols
    [ "$LINK_TEST" = no ] || link_test
    finish
}

main "$@"
