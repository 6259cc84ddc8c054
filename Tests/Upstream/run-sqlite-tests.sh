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
# Each file must report the test count and the error count the list records, and fail exactly the tests the list
# names for it and its mode ("differ", exact names), each with its reason; anything else fails the run. A file that
# asks for no codec (do_not_use_codec) is never run keyed: it reads the file format byte by byte.
#
# Before anything is built or run:
#   * the list is checked (harness.sh's check_tests_list: exact names, counts that cover them) and accounts for every
#     file of its groups in the pinned tarball, read from the tarball itself (check_accounting: each run or left out
#     in both modes and named on some line; nothing named that the tarball lacks), so that a new upstream file fails
#     the run until it is read and listed;
#   * the checker's controls run (self_test), each an "ok: control: …" or "FAIL: control: …" line: the matcher must
#     accept logs of exactly the recorded failures of keyed walcrash.test and crash7.test and refuse each planted
#     change (a failure at page size 4096, a count one off, an unnamed error, a listed test passing, each in a form
#     that only one of its checks can catch), the list check must refuse a glob, and the accounting must refuse a
#     new file under a left-out glob. Any FAIL stops the run.
#
# Arguments: --long also runs the list's "long" entries (the longer command, docs/TESTING.md); --self-test runs only
# the list checks and the controls.
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
# Exit status: 0 every file ran its counts with exactly its listed differences and the checks and controls passed;
# 1 otherwise.
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

# The list's run entries (MODE FILE TESTS ERRORS), and its long ones too with --long, narrowed to
# SQLITE_TESTS_FILES when set.
run_entries() {
    local entry wanted
    awk -v long="$LONG" '$1 == "run" || ($1 == "long" && long) { print $2, $3, $4, $5 }' "$TESTS_LIST" \
        | while read -r -a entry; do
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
    run_testfixture "$file" "$LOGS/$name.log" "$RUN_ROOT/$name" 1 "$(listed_differences "$mode" "$file")" \
        "$(pinned_errors "$mode" "$file")" "${settings[@]}"
    echo "$RUN_TESTS $RUN_ERRORS $((SECONDS - started))" >"$LOGS/$name.result"
}

# ------------------------------------------------------------------------------------------ accounting ---

# The pinned tarball's files (paths under its top folder, test/wal.test), one a line, listed from the tarball itself
# (its SHA-256 checked again), so that a stray file in the extracted copy counts for nothing.
tarball_files() {
    local actual
    actual=$(sha256sum "$TARBALL" | cut -d' ' -f1)
    [ "$actual" = "$PIN_SHA256" ] || die "SHA-256 mismatch for $TARBALL: expected $PIN_SHA256, actual $actual"
    tar -tzf "$TARBALL" | sed -E 's#^[^/]*/##; /\/$/d; /^$/d'
}

# Whether the list LIST accounts for every file of its groups in FILES (a file of tarball paths, one a line): sets
# ACCOUNTING_PROBLEMS (one a line, empty when it returns 0) and ACCOUNTING_NOTE. The list's "group PATTERN" lines
# are the families of upstream files this build runs from (test/wal*.test, ext/fts5/test/*.test, …). Each file of
# FILES a group matches must be
#   * decided in both modes: a run or long line, or a leave line (its exact name, or a glob of files), for plain
#     and for keyed;
#   * named exactly on at least one run, long or leave line: a file that only a glob leaves out, in both modes or
#     in one with nothing in the other, is a file nobody looked at (a new upstream file after a bump);
# and the list names nothing that is not there: every run, long or leave file (or glob) matches a file of FILES
# inside a group, and every group matches some file.
check_accounting() {
    local list=$1 files=$2
    ACCOUNTING_PROBLEMS=$(awk '
        function glob_to_regex(g,    r) {
            r = g; gsub(/[.+^$()|\\]/, "\\\\&", r); gsub(/\*/, "[^/]*", r); gsub(/\?/, "[^/]", r); return "^" r "$"
        }
        FNR == NR { file[$0] = 1; next }
        /^[[:space:]]*(#|$)/ { next }
        $1 == "group" { group[$2] = glob_to_regex($2); next }
        $1 == "run" || $1 == "long" { decided[$2 " " $3] = 1; named[$3] = 1; listed[$3] = $1 " " $2; next }
        $1 == "leave" {
            which = ($2 == "all") ? "plain keyed" : $2
            if ($3 ~ /[*?[]/) { n = split(which, m, " "); for (i = 1; i <= n; i++) leaveglob[m[i] " " $3] = glob_to_regex($3) }
            else { n = split(which, m, " "); for (i = 1; i <= n; i++) decided[m[i] " " $3] = 1; named[$3] = 1 }
            listed[$3] = "leave " $2
            next
        }
        END {
            for (f in file) {
                ingroup = ""
                for (g in group) if (f ~ group[g]) { ingroup = g; break }
                if (ingroup == "") continue
                members++
                split("plain keyed", both, " ")
                for (i = 1; i <= 2; i++) {
                    mode = both[i]
                    if ((mode " " f) in decided) continue
                    covered = 0
                    for (k in leaveglob) if (substr(k, 1, length(mode) + 1) == mode " " && f ~ leaveglob[k]) covered = 1
                    if (!covered) printf "%s (group %s) is neither run nor left out %s: run it, or leave it with its reason\n", f, ingroup, mode
                }
                if (!(f in named)) printf "%s (group %s) is named on no run or leave line, only reached by a glob: read it, then run it or leave it by name with its reason\n", f, ingroup
            }
            for (f in listed) {
                if (f ~ /[*?[]/) {
                    r = glob_to_regex(f); hit = 0
                    for (x in file) if (x ~ r) { hit = 1; break }
                    if (!hit) printf "%s (%s) matches no file of the pinned tarball\n", f, listed[f]
                    continue
                }
                if (!(f in file)) { printf "%s (%s) is not in the pinned tarball\n", f, listed[f]; continue }
                ingroup = 0
                for (g in group) if (f ~ group[g]) ingroup = 1
                if (!ingroup) printf "%s (%s) is in no group of the list: add its group\n", f, listed[f]
            }
            for (g in group) {
                hit = 0
                for (x in file) if (x ~ group[g]) { hit = 1; break }
                if (!hit) printf "group %s matches no file of the pinned tarball\n", g
            }
            printf "MEMBERS %d\n", members
        }' "$files" <(sed -E 's/^[[:space:]]+//' "$list"))
    ACCOUNTING_NOTE="$(sed -n 's/^MEMBERS //p' <<<"$ACCOUNTING_PROBLEMS") files in $(grep -c '^group ' "$list") groups"
    ACCOUNTING_PROBLEMS=$(grep -v '^MEMBERS ' <<<"$ACCOUNTING_PROBLEMS" | sort || true)
    [ -z "$ACCOUNTING_PROBLEMS" ]
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

# ------------------------------------------------------------------------------------------- controls ---

# The checker's controls, on inputs of their own making, before any file runs (and alone with --self-test): each
# prints "ok: control: …" when the checker does what it is there for, "FAIL: control: …" otherwise, and the run
# fails on any FAIL. The matcher (match_failures) must accept a log of exactly the failures the list records for
# a file and refuse that log with one planted change; the list check must refuse a glob; the accounting must accept
# the list against the pinned tarball and refuse it once a new file appears under a left-out glob.
CONTROL_FAILS=0
control() {
    if [ "$2" = "$3" ]; then
        echo "ok: control: $1"
    else
        echo "FAIL: control: $1 (${4:-the checker did not do it})"
        CONTROL_FAILS=$((CONTROL_FAILS + 1))
    fi
}

# Writes LOG as tester.tcl would end a file's run: ERRORS errors out of TESTS, the names that failed (each as often
# as it appears among NAMES...).
synthetic_log() {
    local log=$1 errors=$2 tests=$3
    shift 3
    {
        echo "(synthetic log written by run-sqlite-tests.sh's controls)"
        echo "$errors errors out of $tests tests on vm Linux 64-bit"
        [ $# -eq 0 ] || echo "!Failures on these tests: $*"
        echo "All memory allocations freed - no leaks"
    } >"$log"
}

# The verdict of match_failures on LOG against the list's entry for MODE FILE: "accepted", or "refused: WHY".
verdict() {
    if match_failures "$1" "$(listed_differences "$2" "$3")" "$(pinned_errors "$2" "$3")" "${4:-1}"; then
        echo accepted
    else
        echo "refused: $MATCH_PROBLEMS"
    fi
}

self_test() {
    local dir log names=() tests errors got
    dir=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-sqlite-controls.XXXXXX")
    HARNESS_CLEANUP+=("$dir")
    log=$dir/synthetic.log
    # The real list, checked as the run checks it.
    if (check_tests_list) >"$dir/list.out" 2>&1; then
        echo "ok: the list: every differ line names exact tests, every pinned count covers its names"
    else
        echo "FAIL: the list: $(tail -n1 "$dir/list.out")"
        CONTROL_FAILS=$((CONTROL_FAILS + 1))
    fi
    local entry=(keyed test/walcrash.test) crash7=(keyed test/crash7.test)
    tests=$(awk '$1 == "run" && $2 == "keyed" && $3 == "test/walcrash.test" { print $4 }' "$TESTS_LIST")
    read -r -a names <<<"$(listed_differences "${entry[@]}")"
    errors=$(pinned_errors "${entry[@]}")
    # 1. The recorded failures of keyed walcrash.test are accepted (else the refusals below would prove nothing).
    synthetic_log "$log" "$errors" "${tests:-0}" "${names[@]}"
    got=$(verdict "$log" "${entry[@]}")
    control "the matcher accepts keyed walcrash.test's recorded failures (${#names[@]} names, $errors errors)" \
        "${#names[@]}:$got" "$errors:accepted" "$got"
    # 2. Planted: walcrash-7.3.2 and 7.3.3 fail too (iteration 3 of walcrash-7 runs at page size 4096, which the
    # list says recovers: none of them is listed since the pin's local change kdf-salt-from-wal, see the list).
    synthetic_log "$log" "$((errors + 2))" "${tests:-0}" "${names[@]}" walcrash-7.3.2 walcrash-7.3.3
    got=$(verdict "$log" "${entry[@]}")
    control "a planted walcrash-7.3.2 and 7.3.3 failure (page size 4096) fails keyed walcrash.test" "${got%%:*}" refused "$got"
    # The same in place of a listed failure, so that the count alone cannot catch it.
    synthetic_log "$log" "$errors" "${tests:-0}" "${names[@]/#walcrash-7.1.2/walcrash-7.3.2}"
    got=$(verdict "$log" "${entry[@]}")
    control "walcrash-7.3.2 (page size 4096) failing in place of the listed walcrash-7.1.2, the count unchanged, fails keyed walcrash.test" \
        "${got%%:*}" refused "$got"
    # 3. Planted: one failure fewer than pinned (a name listed still fails, but once less: crash7-1.1.integrity
    # fails twice in the recorded run, once for test.db and once for test.db-journal).
    read -r -a names <<<"$(listed_differences "${crash7[@]}")"
    errors=$(pinned_errors "${crash7[@]}")
    local twice=() name
    for name in "${names[@]}"; do twice+=("$name" "$name"); done
    synthetic_log "$log" "$errors" 294 "${twice[@]}"
    got=$(verdict "$log" "${crash7[@]}")
    control "the matcher accepts keyed crash7.test's recorded failures (each of ${#names[@]} integrity checks twice, $errors errors)" \
        "$got" accepted "$got"
    synthetic_log "$log" "$((errors - 1))" 294 "${twice[@]:1}"
    got=$(verdict "$log" "${crash7[@]}")
    control "a failure count one below the pinned $errors (crash7-1.1.integrity failing once) fails keyed crash7.test" \
        "${got%%:*}" refused "$got"
    # The name check and the count check each on their own: with the count unchanged, crash7-1.2.integrity
    # (from_size 4096) fails in place of one of crash7-1.1.integrity's two failures (an unlisted name; every listed
    # name still fails), then crash7-1.1.integrity passes while crash7-1.5.integrity fails twice more (a listed name
    # that passes; no unlisted one).
    synthetic_log "$log" "$errors" 294 crash7-1.2.integrity "${twice[@]:1}"
    got=$(verdict "$log" "${crash7[@]}")
    control "crash7-1.2.integrity (from_size 4096) failing in place of one of crash7-1.1.integrity's two, the count unchanged, fails keyed crash7.test" \
        "${got%%:*}" refused "$got"
    synthetic_log "$log" "$errors" 294 "${twice[@]:2}" crash7-1.5.integrity crash7-1.5.integrity
    got=$(verdict "$log" "${crash7[@]}")
    control "crash7-1.1.integrity passing while crash7-1.5.integrity fails twice more, the count unchanged, fails keyed crash7.test" \
        "${got%%:*}" refused "$got"
    # 4. Planted: an error that is no named failure (files left open, unfreed memory, a crash after the last test):
    # the pinned count of errors, one of them unnamed (crash7-1.1.integrity named once, still failed).
    synthetic_log "$log" "$errors" 294 "${twice[@]:1}"
    got=$(verdict "$log" "${crash7[@]}")
    control "$errors errors, the pinned count, but one of them no named failure, fails keyed crash7.test" "${got%%:*}" refused "$got"
    # 5. Planted: a listed test passes.
    synthetic_log "$log" "$((errors - 2))" 294 "${twice[@]:2}"
    got=$(verdict "$log" "${crash7[@]}")
    control "a listed test that passes (crash7-1.1.integrity) fails keyed crash7.test" "${got%%:*}" refused "$got"
    # 6. A glob in a differ line is refused by the list check: walcrash-7.* in place of the exact names of the
    # iterations at page size 1024 (a glob is what the list held before issue 45; the counts stay consistent, so only
    # the glob can fail).
    sed -E 's/^(differ keyed test\/walcrash\.test )walcrash-7\.\{1\.\.97\.\.6\}\.\{2,3,4\} /\1walcrash-7.* /' "$TESTS_LIST" >"$dir/glob.txt"
    if ! grep -q '^differ keyed test/walcrash.test walcrash-7\.\* ' "$dir/glob.txt"; then
        got="not planted: no walcrash-7.{1..97..6}.{2,3,4} line in the list"
    elif (check_tests_list "$dir/glob.txt") >/dev/null 2>&1; then got=accepted; else got=refused; fi
    control "a glob (walcrash-7.*) in a differ line fails the list check" "$got" refused "$got"
    # 7. Accounting: the list against the pinned tarball's files, then with a new file under a left-out glob.
    tarball_files >"$dir/files.txt"
    if check_accounting "$TESTS_LIST" "$dir/files.txt"; then got=accepted; else got="refused: $ACCOUNTING_PROBLEMS"; fi
    control "the list accounts for the pinned tarball's files ($ACCOUNTING_NOTE)" "$got" accepted "$got"
    local planted
    for planted in test/wal99.test ext/fts5/test/fts5zz.test; do
        { cat "$dir/files.txt"; echo "$planted"; } >"$dir/planted.txt"
        if check_accounting "$TESTS_LIST" "$dir/planted.txt"; then got=accepted; else got=refused; fi
        control "a new upstream file $planted (left out keyed by a glob, nothing plain) fails the accounting" "$got" refused
    done
}

main() {
    LONG= SELF_TEST_ONLY=
    while [ $# -gt 0 ]; do
        case $1 in
            --long) LONG=1 ;;
            --self-test) SELF_TEST_ONLY=1 ;;
            *) die "unknown argument '$1' (--long, --self-test; see the header of $0)" ;;
        esac
        shift
    done
    local started=$SECONDS
    check_tests_list
    self_test
    [ "$CONTROL_FAILS" = 0 ] || die "$CONTROL_FAILS of the checker's controls failed (FAIL: lines above): its verdicts cannot be trusted"
    check_accounting "$TESTS_LIST" <(tarball_files) \
        || die "Tests/Upstream/sqlite-tests.txt does not account for every file of its groups in the pinned tarball:"$'\n'"$ACCOUNTING_PROBLEMS"
    echo "ok: accounting: every one of the pinned tarball's $ACCOUNTING_NOTE is run or left out by name, in both modes"
    [ -z "$SELF_TEST_ONLY" ] || return 0
    printf '==> sqlite: SQLite %s test files (FTS5, temporary storage, WAL, journal, pager, crash) on the shipped engine, plain and keyed (Tcl rand() seed %s)\n' \
        "$PIN_SQLITE_VERSION" "$UPSTREAM_SEED"
    check_prerequisites
    locate_engine
    compose_flags
    build_testfixture
    check_harness
    rm -rf "${UPSTREAM_DIR:?}/$RUN_ROOT" "$LOGS"
    mkdir -p "$UPSTREAM_DIR/$RUN_ROOT" "$LOGS"
    check_local_change_regression
    write_seeded_tcl
    space_free_link

    local entries=() mode file tests running=0 entry
    mapfile -t entries < <(run_entries)
    [ ${#entries[@]} -gt 0 ] || die "no file to run (Tests/Upstream/sqlite-tests.txt${SQLITE_TESTS_FILES:+, SQLITE_TESTS_FILES=$SQLITE_TESTS_FILES})"
    for entry in "${entries[@]}"; do
        read -r mode file tests _ <<<"$entry"
        [ -f "$UPSTREAM_DIR/src/$file" ] || die "Tests/Upstream/sqlite-tests.txt runs $file, which the pinned tarball does not hold"
        if [ "$mode" = keyed ] && grep -q '^[[:space:]]*do_not_use_codec' "$UPSTREAM_DIR/src/$file"; then
            die "Tests/Upstream/sqlite-tests.txt runs $file keyed, but it asks for no codec (do_not_use_codec): run it plain"
        fi
    done
    # Side by side, JOBS at a time, in the list's order (the longest first, so that the short ones fill in).
    for entry in "${entries[@]}"; do
        read -r mode file tests _ <<<"$entry"
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
        read -r mode file tests _ <<<"$entry"
        name=$(run_name "$mode" "$file")
        if ! [ -s "$LOGS/$name.result" ] || ! read -r -a result <"$LOGS/$name.result"; then
            failed+=("$mode $file (above; log: $LOGS/$name.log)")
            continue
        fi
        lines+=("$(printf '  %-5s %-36s %5s tests, %s errors, each a listed difference (expected %s tests, %s errors; %ss)' \
            "$mode" "$file" "${result[0]}" "${result[1]}" "$tests" "$(pinned_errors "$mode" "$file")" "${result[2]}")")
        [ "${result[0]}" = "$tests" ] \
            || failed+=("$mode $file ran ${result[0]} tests, the list records $tests: part of it was skipped, or the file changed (update Tests/Upstream/sqlite-tests.txt after reading $LOGS/$name.log)")
        total=$((total + result[0])) differing=$((differing + result[1]))
    done
    printf '%s\n' "${lines[@]}"
    [ ${#failed[@]} -eq 0 ] || die "$(printf '%s\n' "${failed[@]}")"$'\n'"($(seed_note))"
    check_keying
    printf 'sqlite: %s files%s, %s tests, %s errors, each a listed difference (crypto provider %s, Tcl rand() seed %s): %ss\n' \
        "${#entries[@]}" "${LONG:+ (with the long ones)}" "$total" "$differing" "$CRYPTO_PROVIDER" "$UPSTREAM_SEED" \
        "$((SECONDS - started))"
}

main "$@"
