#!/usr/bin/env bash
# verify-symbols.sh: checks that a static archive really carries the SQLCipher engine (CI symbol
# verification), and optionally links and runs a downstream program against it.
#
# It passes only when SQLCipher's keying, codec and export symbols are defined, no sqlite3_* symbol is left
# undefined, and, for the merged SQLCipherKit artifact, the Swift API is there too. A plain-SQLite engine
# (built without SQLITE_HAS_CODEC) fails here: it would write plaintext.
set -euo pipefail

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
    printf 'verify-symbols.sh: %s\n' "$*" >&2
    usage >&2
    exit 64
}

archive="" link_test=no system_sqlite=no use_pkg_config=no include_dir="" modules_dir="" keep_dir=""
expect_from=()
while [ $# -gt 0 ]; do
    case "$1" in
        --expect-from) [ $# -ge 2 ] || fail_usage "--expect-from needs an archive"; expect_from+=("$2"); shift 2 ;;
        --link-test) link_test=yes; shift ;;
        --with-system-sqlite) system_sqlite=yes; shift ;;
        --pkg-config) use_pkg_config=yes; shift ;;
        --include) [ $# -ge 2 ] || fail_usage "--include needs a folder"; include_dir=$2; shift 2 ;;
        --modules) [ $# -ge 2 ] || fail_usage "--modules needs a folder"; modules_dir=$2; shift 2 ;;
        --keep) [ $# -ge 2 ] || fail_usage "--keep needs a folder"; keep_dir=$2; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        -*) fail_usage "unknown option: $1" ;;
        *) [ -z "$archive" ] || fail_usage "one archive at a time"; archive=$1; shift ;;
    esac
done
[ -n "$archive" ] || fail_usage "no archive given"

failures=()
fail() { failures+=("$1"); }
finish() {
    if [ ${#failures[@]} -gt 0 ]; then
        printf 'verify-symbols.sh: FAILED for %s\n' "$archive" >&2
        printf '  - %s\n' "${failures[@]}" >&2
        exit 1
    fi
    printf 'verify-symbols.sh: OK %s\n' "$archive"
    exit 0
}

if [ ! -f "$archive" ]; then
    fail "no such archive: $archive"
    finish
fi
archive=$(realpath "$archive")
if [ -z "$(ar t "$archive" 2>/dev/null)" ]; then
    fail "not an ar archive, or an empty one: $archive"
    finish
fi

# Global symbols a file defines / leaves undefined, one name a line, sorted. (nm -P: "name type value size";
# U, w and v are undefined or weakly undefined; every other type is a definition.)
defined_symbols() {
    nm -g -P "$1" 2>/dev/null | awk 'NF >= 2 && $2 !~ /^[Uwv]$/ { print $1 }' | LC_ALL=C sort -u
}
# Every symbol a file defines, local ones too (the artifact bundle makes everything but the API local).
all_defined_symbols() {
    nm -P "$1" 2>/dev/null | awk 'NF >= 2 && $2 !~ /^[Uwv]$/ { print $1 }' | LC_ALL=C sort -u
}
undefined_symbols() {
    nm -g -P "$1" 2>/dev/null | awk 'NF >= 2 && $2 == "U" { print $1 }' | LC_ALL=C sort -u
}

work=$(mktemp -d "${TMPDIR:-/tmp}/verify-symbols.XXXXXX")
trap 'rm -rf "$work"' EXIT
defined_symbols "$archive" >"$work/defined"
all_defined_symbols "$archive" >"$work/all-defined"
undefined_symbols "$archive" >"$work/undefined"

# 1. SQLCipher's keying API, codec and export: absent in an engine built without SQLITE_HAS_CODEC.
# The API must be global; the codec's internals only defined (the artifact bundle makes them local).
required=(sqlite3_key sqlite3_key_v2 sqlite3_rekey sqlite3_rekey_v2 sqlite3_open_v2 sqlite3_prepare_v2 sqlite3_step)
internals=(sqlcipherCodecAttach sqlcipher_codec_pragma sqlcipher_exportFunc sqlcipher_version)
missing=()
for symbol in "${required[@]}"; do
    grep -qxF "$symbol" "$work/defined" || missing+=("$symbol")
done
for symbol in "${internals[@]}"; do
    grep -qxF "$symbol" "$work/all-defined" || missing+=("$symbol")
done
[ ${#missing[@]} -eq 0 ] || fail "SQLCipher symbols not defined (engine built without SQLITE_HAS_CODEC?): ${missing[*]}"

# 2. No sqlite3_* reference may be left for another library (a system SQLite) to satisfy.
unresolved=$(LC_ALL=C comm -23 "$work/undefined" "$work/defined" | grep -E '^sqlite3_' | tr '\n' ' ' || true)
[ -z "$unresolved" ] || fail "sqlite3_* symbols undefined: $unresolved"

# 3. The Swift API, when this is the merged artifact (its module's mangled prefix is $s12SQLCipherKit).
is_swift=no
if grep -q '^\$s12SQLCipherKit' "$work/defined"; then
    is_swift=yes
    if ! command -v swift >/dev/null; then
        fail "the archive holds Swift code but no swift toolchain is on PATH to check it"
    else
        grep '^\$s12SQLCipherKit' "$work/defined" | swift demangle --simplified >"$work/swift-api" 2>/dev/null || true
        for api in 'static Engine.selfCheck()' 'Database.__allocating_init(path:key:configuration:)' \
            'Database.execute(_:)' 'Database.execute(_:_:)' 'Database.prepare(_:)' 'Database.rekey(to:)' \
            'static Key.passphrase(_:)' 'static Key.rawKey(_:)' 'static Key.rawKey(_:salt:)'; do
            grep -qF "$api" "$work/swift-api" || fail "Swift API symbol missing: SQLCipherKit.$api"
        done
    fi
fi

# 4. Nothing the merged inputs defined may be lost.
for source_archive in ${expect_from[@]+"${expect_from[@]}"}; do
    if [ ! -f "$source_archive" ]; then
        fail "--expect-from: no such archive: $source_archive"
        continue
    fi
    # Collect first, truncate after: `| head` would end comm with SIGPIPE, and pipefail the script.
    defined_symbols "$source_archive" | LC_ALL=C comm -23 - "$work/defined" >"$work/lost" || true
    if [ -s "$work/lost" ]; then
        fail "$(wc -l <"$work/lost") symbols defined by $(basename "$source_archive") are missing: $(sed -n '1,10p' "$work/lost" | tr '\n' ' ')"
    fi
done
[ ${#failures[@]} -eq 0 ] || finish
printf 'verify-symbols.sh: symbols ok (%s defined; SQLCipher codec and keying present%s)\n' \
    "$(wc -l <"$work/defined")" "$([ $is_swift = yes ] && echo '; Swift API present')"

[ "$link_test" = yes ] || finish

# ------------------------------------------------------------------------------------------ link test ---
lib_dir=$(dirname "$archive")
include_dir=${include_dir:-$lib_dir/../include}
modules_dir=${modules_dir:-$lib_dir/../Modules}
dir=${keep_dir:-$work/link-test}
mkdir -p "$dir"
dir=$(realpath "$dir")
rm -f "$dir"/test.db*
program=$dir/downstream
marker="SQLCipherKit-plaintext-marker-$$-$RANDOM$RANDOM"
system_flags=()

if [ "$is_swift" = yes ]; then
    cat >"$dir/main.swift" <<'EOF'
// A downstream app: only `import SQLCipherKit`, linked against the artifact with no other flag.
import SQLCipherKit
#if canImport(Glibc)
import Glibc
#endif

func check(_ ok: Bool, _ what: String) {
    guard ok else { print("FAIL: \(what)"); exit(1) }
    print("ok: \(what)")
}

let path = CommandLine.arguments[1], marker = CommandLine.arguments[2]
do {
    let facts = try Engine.selfCheck()
    print("cipher_version: \(facts.cipherVersion)")
    print("engine: \(facts)")
    let key = try Key.passphrase("downstream link-test passphrase")
    let writer = try Database(path: path, key: key)
    try writer.execute("CREATE TABLE t(v TEXT); INSERT INTO t VALUES('\(marker)')")
    writer.close()
    do {
        _ = try Database(path: path, key: .passphrase("a wrong passphrase"), mode: .readOnly)
        check(false, "a wrong key is refused")
    } catch SQLCipherError.wrongKeyOrNotADatabase {
        check(true, "a wrong key is refused")
    }
    let reader = try Database(path: path, key: key, mode: .readOnly)
    check(try reader.textValue("SELECT v FROM t") == marker, "the marker reads back with the right key")
} catch {
    print("FAIL: \(error)")
    exit(1)
}
EOF
    command -v swiftc >/dev/null || { fail "swiftc is needed to link-test a Swift archive"; finish; }
    [ "$system_sqlite" = no ] || system_flags=(-Xlinker --no-as-needed -lsqlite3 -Xlinker --as-needed)
    if ! swiftc -O "$dir/main.swift" -o "$program" -I "$modules_dir" -I "$include_dir" -L "$lib_dir" \
        ${system_flags[@]+"${system_flags[@]}"} -l"$(basename "$archive" .a | sed 's/^lib//')" \
        >"$dir/build.log" 2>&1; then
        cat "$dir/build.log" >&2
        fail "a Swift program importing SQLCipherKit did not build against $archive with no extra flag"
        finish
    fi
else
    cat >"$dir/main.c" <<'EOF'
/* A downstream C app: the SQLCipher C API only. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

static const char passphrase[] = "downstream link-test passphrase";

static int open_keyed(const char *path, const char *key, int flags, sqlite3 **db) {
    if (sqlite3_open_v2(path, db, flags, NULL) != SQLITE_OK) return 0;
    return sqlite3_key_v2(*db, "main", key, (int)strlen(key)) == SQLITE_OK;
}

int main(int argc, char **argv) {
    sqlite3 *db;
    sqlite3_stmt *stmt;
    char sql[256];
    if (argc < 3) return 64;
    if (!open_keyed(":memory:", passphrase, SQLITE_OPEN_READWRITE, &db)) return 1;
    if (sqlite3_prepare_v2(db, "PRAGMA cipher_version", -1, &stmt, NULL) != SQLITE_OK
        || sqlite3_step(stmt) != SQLITE_ROW) {
        printf("FAIL: PRAGMA cipher_version returned no row: the engine is not SQLCipher\n");
        return 1;
    }
    printf("cipher_version: %s\n", (const char *)sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    sqlite3_close(db);

    if (!open_keyed(argv[1], passphrase, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db)) return 1;
    snprintf(sql, sizeof sql, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES('%s')", argv[2]);
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        printf("FAIL: write: %s\n", sqlite3_errmsg(db));
        return 1;
    }
    sqlite3_close(db);

    if (!open_keyed(argv[1], "a wrong passphrase", SQLITE_OPEN_READONLY, &db)) return 1;
    if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_schema", NULL, NULL, NULL) != SQLITE_NOTADB) {
        printf("FAIL: a wrong key is refused\n");
        return 1;
    }
    printf("ok: a wrong key is refused\n");
    sqlite3_close(db);

    if (!open_keyed(argv[1], passphrase, SQLITE_OPEN_READONLY, &db)) return 1;
    if (sqlite3_prepare_v2(db, "SELECT v FROM t", -1, &stmt, NULL) != SQLITE_OK || sqlite3_step(stmt) != SQLITE_ROW
        || strcmp((const char *)sqlite3_column_text(stmt, 0), argv[2]) != 0) {
        printf("FAIL: the marker reads back with the right key\n");
        return 1;
    }
    printf("ok: the marker reads back with the right key\n");
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return 0;
}
EOF
    cc_flags=()
    if [ "$use_pkg_config" = yes ]; then
        command -v pkg-config >/dev/null || { fail "pkg-config is not installed (apt-get install pkg-config)"; finish; }
        export PKG_CONFIG_PATH=$lib_dir/pkgconfig
        flags_text=$(pkg-config --cflags --libs sqlcipherkit) \
            || { fail "pkg-config does not know sqlcipherkit in $lib_dir/pkgconfig"; finish; }
        # pkg-config escapes spaces in paths with backslashes: let the shell's own word splitting undo that.
        eval "cc_flags=($flags_text)"
        printf 'verify-symbols.sh: pkg-config --cflags --libs sqlcipherkit: %s\n' "$flags_text"
    else
        cc_flags=(-DSQLITE_HAS_CODEC -I "$include_dir" "$archive" -lcrypto -lm)
    fi
    # A system SQLite linked first is the harder case: its definitions are seen before the engine's.
    [ "$system_sqlite" = no ] || system_flags=(-Wl,--no-as-needed -lsqlite3 -Wl,--as-needed)
    # An implicit declaration would mean the wrong sqlite3.h (without sqlite3_key) was used: make it fatal.
    if ! "${CC:-cc}" -O1 -Werror=implicit-function-declaration -o "$program" "$dir/main.c" \
        ${system_flags[@]+"${system_flags[@]}"} "${cc_flags[@]}" \
        >"$dir/build.log" 2>&1; then
        cat "$dir/build.log" >&2
        fail "a C program did not build against $archive"
        finish
    fi
fi

if ! (cd "$dir" && "$program" "$dir/test.db" "$marker") >"$dir/run.log" 2>&1; then
    cat "$dir/run.log" >&2
    fail "the downstream program failed"
    finish
fi
sed 's/^/  /' "$dir/run.log"
grep -q '^cipher_version: [0-9]' "$dir/run.log" || fail "the downstream program reported no cipher_version"
# Each "ok:" below prints only when its own check recorded no failure.
failed_before=${#failures[@]}
[ -s "$dir/test.db" ] || fail "the downstream program wrote no database"
if cmp -s -n 16 "$dir/test.db" <(printf 'SQLite format 3\0'); then
    fail "the database begins with 'SQLite format 3': it is plaintext"
fi
for file in "$dir"/test.db*; do
    if grep -qaF "$marker" "$file"; then fail "the plaintext marker is readable in $(basename "$file")"; fi
done
at_rest_ok=$([ ${#failures[@]} -eq "$failed_before" ] && echo yes || echo no)
# ldd must answer: an empty list would make "no libsqlite3" true of anything.
if ! libraries=$(ldd "$program" 2>&1) || [ -z "$libraries" ]; then
    fail "ldd could not list the program's libraries: ${libraries:-no output}"
elif [ "$system_sqlite" = yes ]; then
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
[ "$at_rest_ok" = no ] || echo "  ok: header is not 'SQLite format 3' and the marker is not in the file"
finish
