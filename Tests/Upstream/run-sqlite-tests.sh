#!/usr/bin/env bash
# Tests/Upstream/run-sqlite-tests.sh: SQLite's own test files for what this build changes, on the harness built from
# the engine SQLCipherKit ships.
#
# The harness is Tests/Upstream/harness.sh's (the shipped, locally-changed amalgamation with the engine's crypto
# provider and libsqlcipher.a's compile line, plus only the test-only flags it names; the one run-upstream.sh uses,
# built once for both, and checked by check_harness before anything runs). The files are those
# Tests/Upstream/sqlite-tests.txt lists with "run": FTS5 (ext/fts5/test, which the local changes touch), temporary
# storage (the engine's SQLITE_TEMP_STORE=3), WAL, rollback journal and pager, and the crash files (test6.c's
# crash-simulating VFS: at a chosen sync it "cuts the power", keeping, dropping or tearing every write since the
# last sync of the file, then the parent process reopens and checks the database), each in its mode:
#   plain  no connection keyed: tester.tcl's own "-key xyzzy" is turned off (seeded.tcl, SQLCIPHERKIT_TESTER_KEY=0);
#   keyed  every connection to a database file keyed with HARNESS_TEST_KEY below (SQLCIPHERKIT_HARNESS_KEY: the
#          harness's automatic extension calls sqlite3_key_v2, harness/sqlcipherkit_harness.c), the crash tests'
#          child processes included, so that a power cut lands on encrypted pages, WAL frames and journals.
# Each file must report the count the list records, and fail exactly the tests the list names for it and its mode
# ("differ"), each with its reason; anything else fails the run. A file that asks for no codec (do_not_use_codec) is
# never run keyed: it reads the file format byte by byte.
#
# Two more checks, each able to fail:
#   * the keying is real: every database file the keyed files leave (test.db, test2.db, test.db2…; not journals,
#     WAL, shared memory or backup copies) has no "SQLite format 3" header, at least one is left, and one opens with
#     the key but not without it; every one the plain files leave has that header (but for files under 100 bytes,
#     too short to hold one);
#   * a local change is in the engine under test: the FTS5 trigram LIKE input of the pin's local change
#     fts5-trigram-like-overread (Tests/Fuzz/known-issues/sqlite-fts5-trigram-like-overread-min) runs under
#     valgrind with no error (lookaside off, so that the pattern is a heap block of its own); on a harness built
#     from upstream's unchanged output (UPSTREAM_HARNESS_SOURCE=unchanged) valgrind reports the read one byte past
#     the pattern, and check_harness already fails there (no local changes reported, the export gate missing).
#
# Everything it writes lives under the harness folder (Vendor/build/upstream/, gitignored): sqlite-run/MODE-FILE/
# (each file's working folder, kept until the next run) and sqlite-logs/MODE-FILE.log.
#
# Exit status: 0 every file ran its count with only its listed differences and the checks passed; 1 otherwise.
# Environment: harness.sh's (CC, UPSTREAM_CRYPTO_PROVIDER, UPSTREAM_HARNESS_SOURCE, UPSTREAM_TIMEOUT, UPSTREAM_SEED;
# native only), and
#   SQLITE_TESTS_JOBS   files run side by side (default 2: the machine's cores)
#   SQLITE_TESTS_FILES  "MODE:FILE …" runs only those entries of the list (each against its count), e.g.
#                       "keyed:test/crash.test"
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SCRIPT_NAME=run-sqlite-tests.sh
# shellcheck source=../../Vendor/sqlcipher.pin
source "$ROOT/Vendor/sqlcipher.pin"
[ "${UPSTREAM_TARGET:-native}" = native ] \
    || { echo "$SCRIPT_NAME: error: native only (UPSTREAM_TARGET is '$UPSTREAM_TARGET')" >&2; exit 1; }
# shellcheck source=harness.sh
source "$ROOT/Tests/Upstream/harness.sh"
select_harness

# The fixed test key of the keyed mode: a raw key (x'…', 32 bytes: "SQLCipherKit harness test key 32"), as
# DatabasePool keys its connections, so that a connection costs no PBKDF2 run (the crash tests open hundreds); the
# page format is the shipped default's. Exactly 64 hex digits, or SQLCipher takes it for a passphrase: with 68, the
# keyed files still passed but ran 20-50 times slower (crash9.test 595 s instead of 22), each connection paying the
# key derivation.
HARNESS_TEST_KEY="x'53514c4369706865724b6974206861726e6573732074657374206b6579203332'"
[[ $HARNESS_TEST_KEY =~ ^x\'[0-9a-f]{64}\'$ ]] || die "HARNESS_TEST_KEY must be a raw key, x'…' with 64 hex digits"
JOBS=${SQLITE_TESTS_JOBS:-2}
[[ $JOBS =~ ^[1-9][0-9]?$ ]] || die "SQLITE_TESTS_JOBS must be a number from 1 to 99, not '$JOBS'"
RUN_ROOT=sqlite-run
LOGS=$UPSTREAM_DIR/sqlite-logs
TRIGRAM_INPUT=$ROOT/Tests/Fuzz/known-issues/sqlite-fts5-trigram-like-overread-min

# The list's run entries (MODE FILE TESTS), narrowed to SQLITE_TESTS_FILES when set.
run_entries() {
    local entry wanted
    awk '$1 == "run" { print $2, $3, $4 }' "$TESTS_LIST" | while read -r -a entry; do
        if [ -n "${SQLITE_TESTS_FILES:-}" ]; then
            wanted=no
            for want in $SQLITE_TESTS_FILES; do [ "$want" != "${entry[0]}:${entry[1]}" ] || wanted=yes; done
            [ "$wanted" = yes ] || continue
        fi
        echo "${entry[*]}"
    done
}

# A folder or log name for MODE and FILE.
run_name() { printf '%s-%s' "$1" "$(tr '/' '_' <<<"$2")"; }

# Runs one entry (MODE FILE) into its log; writes "TESTS ERRORS SECONDS" to its .result file when it passed.
run_entry() {
    local mode=$1 file=$2 name started=$SECONDS settings=(SQLCIPHERKIT_TESTER_KEY=0)
    name=$(run_name "$mode" "$file")
    [ "$mode" = plain ] || settings+=("SQLCIPHERKIT_HARNESS_KEY=$HARNESS_TEST_KEY")
    run_testfixture "$file" "$LOGS/$name.log" "$RUN_ROOT/$name" 1 "$(listed_differences "$mode" "$file")" "${settings[@]}"
    echo "$RUN_TESTS $RUN_ERRORS $((SECONDS - started))" >"$LOGS/$name.result"
}

# The database files a run left in FOLDER: test.db, test2.db, test.db2 and the like (no journal, WAL, shared-memory
# or backup copy, which the tests name test.db-journal-bu and so on), not empty.
left_databases() {
    find "$1" -type f -size +0 -regextype posix-extended -regex '.*/test[0-9]*\.db[0-9]*' 2>/dev/null | sort
}

# Whether FILE begins with SQLite's plaintext header.
plaintext_header() { [ "$(head -c 16 "$1" | tr '\0' '@')" = "SQLite format 3@" ]; }

# The keying is real (see the header): the keyed runs' databases are encrypted, the plain runs' are not.
check_keying() {
    local mode file name db keyed=() plain=0
    while read -r mode file _; do
        name=$(run_name "$mode" "$file")
        while IFS= read -r db; do
            [ -n "$db" ] || continue
            if [ "$mode" = keyed ]; then
                ! plaintext_header "$db" || die "keyed run of $file left $db with a plaintext 'SQLite format 3' header: a connection was not keyed"
                keyed+=("$(stat -c %s "$db") $db")
            else
                plaintext_header "$db" || [ "$(stat -c %s "$db")" -lt 100 ] \
                    || die "plain run of $file left $db without the plaintext header: a connection was keyed"
                plain=$((plain + 1))
            fi
        done < <(left_databases "$UPSTREAM_DIR/$RUN_ROOT/$name")
    done < <(run_entries)
    grep -q '^keyed ' < <(run_entries) || return 0
    [ ${#keyed[@]} -gt 0 ] || die "the keyed runs left no database file to check: the keying check cannot tell anything"
    # One of them, the largest that opens with the key, opens with it and not without it (a copy: reading it may
    # roll a hot journal back). Not every one opens with the key alone: a crash test may leave its last database
    # at another page size, which a keyed connection must be told (cipher_page_size; see sqlite-tests.txt).
    local entry copy opened probe=
    copy=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-keyed.XXXXXX")
    HARNESS_CLEANUP+=("$copy")
    while read -r _ db; do
        cp "$db" "$copy/probe.db"
        opened=$(cd "$copy" && HARNESS_KEY=$HARNESS_TEST_KEY "$UPSTREAM_DIR/testfixture" /dev/stdin 2>&1 <<'EOF'
sqlite3 db probe.db
puts "without the key: [catch {db eval {SELECT count(*) FROM sqlite_schema}} message] $message"
db close
sqlite3 db probe.db
db eval "PRAGMA key = \"$env(HARNESS_KEY)\""
puts "with the key: [catch {db eval {SELECT count(*) FROM sqlite_schema}} message] $message"
db close
EOF
        )
        rm -f "$copy/probe.db"
        grep -qE '^with the key: 0 [0-9]+$' <<<"$opened" || continue
        grep -qx 'without the key: 1 file is not a database' <<<"$opened" \
            || die "$db (left by a keyed run) opens without the key:"$'\n'"$opened"
        probe=$db
        break
    done < <(printf '%s\n' "${keyed[@]}" | sort -rn)
    [ -n "$probe" ] || die "none of the ${#keyed[@]} database files the keyed runs left opens with the key"
    note "keying: ${#keyed[@]} database files left by the keyed runs, none with a plaintext header; $(basename "$probe") ($(stat -c %s "$probe") bytes) opens with the key only; $plain left by the plain runs, all plaintext"
}

# A local change is in the engine under test (see the header).
check_local_change_regression() {
    command -v valgrind >/dev/null || die "valgrind is missing (./build-sqlcipher.sh --test-tools installs it)"
    [ -s "$TRIGRAM_INPUT" ] || die "$TRIGRAM_INPUT is missing"
    local dir log
    dir=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-regression.XXXXXX")
    HARNESS_CLEANUP+=("$dir")
    log=$LOGS/local-change-regression.log
    if ! (cd "$dir" && SQL_INPUT=$TRIGRAM_INPUT valgrind --error-exitcode=99 --quiet "$UPSTREAM_DIR/testfixture" /dev/stdin \
        >"$log" 2>&1 <<'EOF'
set input [open $env(SQL_INPUT)]
fconfigure $input -translation binary
# The fuzzer's input: a byte that picks its mode (2: SQL on an in-memory database), then the SQL.
set sql [string range [read $input] 1 end]
close $input
sqlite3 db :memory:
# Lookaside off: the LIKE pattern's copy is then a heap block of its own, and a read past it leaves the block.
sqlite3_db_config_lookaside db 0 0 0
puts "rows: [db eval $sql]"
db close
EOF
    ); then
        grep -E 'Invalid read|at 0x|by 0x' "$log" | head -n 8 >&2 || true
        die "valgrind reports an error running the input of the local change fts5-trigram-like-overread ($TRIGRAM_INPUT) on the harness: the engine under test lacks the change (log: $log)"
    fi
    grep -qx 'rows: 1' "$log" || die "the local change's input did not run to its result (log: $log)"
    note "local change fts5-trigram-like-overread: its input runs clean under valgrind ($(basename "$TRIGRAM_INPUT"))"
}

main() {
    [ $# -eq 0 ] || die "no arguments expected (see the header of $0)"
    local started=$SECONDS
    printf '==> sqlite: SQLite %s test files (FTS5, temporary storage, WAL, journal, pager, crash) on the shipped engine, plain and keyed (Tcl rand() seed %s)\n' \
        "$PIN_SQLITE_VERSION" "$UPSTREAM_SEED"
    check_prerequisites
    locate_engine
    compose_flags
    build_testfixture
    check_harness
    check_tests_list
    rm -rf "${UPSTREAM_DIR:?}/$RUN_ROOT" "$LOGS"
    mkdir -p "$UPSTREAM_DIR/$RUN_ROOT" "$LOGS"
    check_local_change_regression
    write_seeded_tcl
    space_free_link

    local entries=() mode file tests running=0 entry
    mapfile -t entries < <(run_entries)
    [ ${#entries[@]} -gt 0 ] || die "no file to run (Tests/Upstream/sqlite-tests.txt${SQLITE_TESTS_FILES:+, SQLITE_TESTS_FILES=$SQLITE_TESTS_FILES})"
    for entry in "${entries[@]}"; do
        read -r mode file tests <<<"$entry"
        [ -f "$UPSTREAM_DIR/src/$file" ] || die "Tests/Upstream/sqlite-tests.txt runs $file, which the pinned tarball does not hold"
        if [ "$mode" = keyed ] && grep -q '^[[:space:]]*do_not_use_codec' "$UPSTREAM_DIR/src/$file"; then
            die "Tests/Upstream/sqlite-tests.txt runs $file keyed, but it asks for no codec (do_not_use_codec): run it plain"
        fi
    done
    # Side by side, JOBS at a time, in the list's order (the longest first, so that the short ones fill in).
    for entry in "${entries[@]}"; do
        read -r mode file tests <<<"$entry"
        if [ "$running" -ge "$JOBS" ]; then wait -n || true; running=$((running - 1)); fi
        (
            trap - EXIT # the main shell removes the temporary folders, once every file has run
            run_entry "$mode" "$file"
        ) &
        running=$((running + 1))
    done
    wait || true

    local lines=() result=() name total=0 differing=0 failed=()
    for entry in "${entries[@]}"; do
        read -r mode file tests <<<"$entry"
        name=$(run_name "$mode" "$file")
        if ! [ -s "$LOGS/$name.result" ] || ! read -r -a result <"$LOGS/$name.result"; then
            failed+=("$mode $file (above; log: $LOGS/$name.log)")
            continue
        fi
        lines+=("$(printf '  %-5s %-36s %5s tests, %s listed differences (expected %s; %ss)' "$mode" "$file" \
            "${result[0]}" "${result[1]}" "$tests" "${result[2]}")")
        [ "${result[0]}" = "$tests" ] \
            || failed+=("$mode $file ran ${result[0]} tests, the list records $tests: part of it was skipped, or the file changed (update Tests/Upstream/sqlite-tests.txt after reading $LOGS/$name.log)")
        total=$((total + result[0])) differing=$((differing + result[1]))
    done
    printf '%s\n' "${lines[@]}"
    [ ${#failed[@]} -eq 0 ] || die "$(printf '%s\n' "${failed[@]}")"$'\n'"($(seed_note))"
    check_keying
    printf 'sqlite: %s files, %s tests, %s of them listed differences (crypto provider %s, Tcl rand() seed %s): %ss\n' \
        "${#entries[@]}" "$total" "$differing" "$CRYPTO_PROVIDER" "$UPSTREAM_SEED" "$((SECONDS - started))"
}

main "$@"
