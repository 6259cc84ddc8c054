#!/usr/bin/env bash
# Tests/Upstream/run-upstream.sh: SQLCipher's own conformance suite against the engine SQLCipherKit ships.
#
# Builds SQLCipher's Tcl test harness `testfixture` from the same pinned tarball (SHA-256 checked) with the
# same codec, crypto provider and temp-store flags as libsqlcipher.a (Vendor/sqlcipher.pin), with SQLCipherKit's
# crypto provider appended to its amalgamation as build-sqlcipher.sh appends it (EXTRA_SRC), runs the whole
# upstream suite with it and fails on any upstream failure: test/sqlcipher.test (the suite runner, as
# upstream runs it) and each file it lists on its own, for a test count per file, plus
# test/sqlcipher-threads.test, which sqlcipher.test does not list. Every file's count must equal the one the
# pin records (PIN_UPSTREAM_TESTS): a file that silently skips itself, or a new file nobody counted, fails. The engine's other pin flags are kept too,
# except the ones listed in DROPPED_FLAGS below, each with the reason the upstream tests cannot take it.
# Upstream's Makefile adds its own harness flags on top (SQLITE_TEST, SQLITE_NO_SYNC,
# SQLITE_DEFAULT_PAGE_SIZE=1024…), as it does wherever this suite runs.
#
# Some upstream tests draw their data from Tcl's rand() (sqlcipher-compatibility.test "auto-vacuum-full" deletes
# the rows under a random bound, and fails, {ok 0 0}, when the bound passes every row), which Tcl seeds from the
# clock. So every test file is run through seeded.tcl (written into the build folder): Tcl's generator is seeded,
# expr {srand(UPSTREAM_SEED)}, before the file is sourced, in the file's own interpreter for the files the suite
# runner sources; each run checks that every file it sourced was seeded. The seed is printed on the first line,
# in the summary and in any failure, and UPSTREAM_SEED=N replays a run (the threads of sqlcipher-threads.test,
# which draw only which row to read, stay unseeded).
#
# Everything it writes lives under Vendor/build/upstream/ (gitignored):
#   src/                the extracted tarball (the test scripts are run from here)
#   build/              the out-of-tree configure + make folder; build.log is its log
#   testfixture         the harness; testfixture.stamp says which inputs built it
#   run/                the tests' working folder (test.db…, SQLCipher's own cipher log), fresh each run
#   sqlcipher-test.log  the full output of the last run of sqlcipher.test; logs/FILE.log one per file
# testfixture is rebuilt only when the pin, the flags, the compiler, Tcl or this recipe change.
#
# Exit status: 0 every upstream test passed; 1 a failure, a missing summary line, or a build/setup error.
# Environment: CC (default cc), MAKE_JOBS (default 2), UPSTREAM_JOBS (test files run side by side, default 1),
# UPSTREAM_TIMEOUT (seconds one test run may take,
# default 1200), UPSTREAM_TARGET=aarch64 (a cross-built harness run under qemu: Tests/Emulation/upstream-aarch64.sh),
# UPSTREAM_SEED (Tcl's rand() seed before each test file, a number of 1-9 digits; default 1).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../Vendor/sqlcipher.pin
source "$ROOT/Vendor/sqlcipher.pin"

CC=${CC:-cc}
MAKE_JOBS=${MAKE_JOBS:-2}
UPSTREAM_TIMEOUT=${UPSTREAM_TIMEOUT:-1200}
CACHE_DIR=$ROOT/Vendor/cache
UPSTREAM_DIR=$ROOT/Vendor/build/upstream
TARBALL=$CACHE_DIR/$PIN_TARBALL
LOG=$UPSTREAM_DIR/sqlcipher-test.log

# Bump when the way testfixture is configured or built changes, so an old harness is not reused.
RECIPE=upstream-v3

# Pin flags the upstream suite cannot take, each with why (the shipped engine keeps them all):
#   SQLCIPHER_OMIT_DEFAULT_LOGGING  sqlcipher-pragmas.test "verify-cipher_log_level" asserts that the default
#                                   log level is WARN; this flag leaves it at NONE, which is its purpose. Kept,
#                                   it fails that one test (measured on 4.6.1: "1 errors out of 194 tests";
#                                   the assertion is unchanged since).
#   HAVE_STDINT_H                   on the command line it reaches the harness's tclsqlite.c too, which then
#                                   uses uintptr_t without including <stdint.h> and does not compile. The
#                                   engine loses nothing: configure finds <stdint.h> and writes HAVE_STDINT_H 1
#                                   into sqlite_cfg.h, which the harness's sqlite3.c includes.
DROPPED_FLAGS=(-DSQLCIPHER_OMIT_DEFAULT_LOGGING -DHAVE_STDINT_H)

# Flags the suite needs on top of the pin's:
#   SQLCIPHER_TEST     compiles in PRAGMA cipher_test_on/off (fault injection: fail_encrypt, fail_decrypt,
#                      fail_migrate), which sqlcipher-core, -compatibility and -codecerror use. Test builds only.
EXTRA_FLAGS=(-DSQLCIPHER_TEST)

# SQLCipherKit's crypto provider (the pin's -DSQLCIPHER_CRYPTO_CUSTOM names its set-up function), appended as
# build-sqlcipher.sh appends it.
# shellcheck source=../../BuildSupport/engine/provider.sh
source "$ROOT/BuildSupport/engine/provider.sh"

# Which crypto provider the harness is built with (provider.sh): UPSTREAM_CRYPTO_PROVIDER=sqlcipherkit (default,
# the engine's) or reference (SQLCipher's own crypto_openssl.c, as build-sqlcipher.sh --crypto-provider
# reference builds the engine). The reference harness lives in Vendor/build/upstream-reference/, so both stay built.
# UPSTREAM_FILES="a.test b.test" runs only those files (each against its pinned count), not the suite runner.
select_crypto_provider "${UPSTREAM_CRYPTO_PROVIDER:-sqlcipherkit}"
if [ "$CRYPTO_PROVIDER" = reference ]; then
    UPSTREAM_DIR=$ROOT/Vendor/build/upstream-reference
    LOG=$UPSTREAM_DIR/sqlcipher-test.log
fi
read -r -a ONLY_FILES <<<"${UPSTREAM_FILES:-}"
# Tcl's rand() seed (see the header): fixed, so that every run draws the same data; another one only on purpose.
UPSTREAM_SEED=${UPSTREAM_SEED:-1}
[[ $UPSTREAM_SEED =~ ^[0-9]{1,9}$ ]] \
    || { echo "run-upstream.sh: error: UPSTREAM_SEED must be a number of 1-9 digits, not '$UPSTREAM_SEED'" >&2; exit 1; }

# Test files run on their own besides those sqlcipher.test lists (upstream runs it by hand, under TSan).
EXTRA_FILES=(sqlcipher-threads.test)

# Files whose run ends with "Unfreed memory: N bytes" although nothing leaks: sqlcipher-threads.test turns
# SQLite's memory statistics off at its start (sqlite3_config_memstatus 0, so that counting does not serialize
# its threads), after the harness has already counted its own allocations; their frees are then not counted,
# and tester.tcl's final leak check adds one error after the "0 errors" line (exit 1). Measured on the current pin: the
# same file with the statistics left on ends "All memory allocations freed - no leaks", exit 0. For these
# files, and only when that line is the sole failure, the run counts as clean (memstatus_is_sole_failure);
# leaks are LeakSanitizer's job in Tests/Fuzz.
MEMSTATUS_OFF_FILES=(sqlcipher-threads.test)
# What may follow the "0 errors out of N tests" line of such a file besides that one line: tester.tcl's
# memory figures (show_memstats and the lines after it), nothing that reports a failure.
MEMSTATUS_TAIL='^(|(Memory used|Allocation count|Page-cache used|Page-cache overflow|Parser stack depth): .*'
MEMSTATUS_TAIL+='|(Maximum|Current) memory usage: -?[0-9]+ bytes|Number of malloc\(\) *: -?[0-9]+ calls)$'

die() {
    printf 'run-upstream.sh: error: %s\n' "$*" >&2
    exit 1
}
note() { printf '    %s\n' "$*"; }

# The native harness by default; another target's settings come from its own file (Tests/Emulation).
CONFIGURE_HOST=() RUN_PREFIX=() TCL_CONFIG_CANDIDATES=()
case "${UPSTREAM_TARGET:-native}" in
    native) ;;
    # shellcheck source=../Emulation/upstream-aarch64.sh
    aarch64) source "$ROOT/Tests/Emulation/upstream-aarch64.sh" ;;
    *) die "unknown UPSTREAM_TARGET '$UPSTREAM_TARGET' (native or aarch64)" ;;
esac

CLEANUP=()
cleanup() {
    local path
    for path in ${CLEANUP[@]+"${CLEANUP[@]}"}; do rm -rf "$path"; done
}
trap cleanup EXIT

# ------------------------------------------------------------------------------------- prerequisites ---

# The folder holding tclConfig.sh (tcl-dev), which configure needs to build testfixture; empty if none.
tcl_config_dir() {
    local dir dirs=(/usr/lib/tcl8.6 /usr/lib/"$(uname -m)"-linux-gnu/tcl8.6 /usr/lib64/tcl8.6 /usr/local/lib /usr/lib/tcl8.7
        /usr/lib)
    # A cross-built harness needs its target's Tcl, never the native one.
    [ ${#TCL_CONFIG_CANDIDATES[@]} -eq 0 ] || dirs=("${TCL_CONFIG_CANDIDATES[@]}")
    for dir in "${dirs[@]}"; do
        if [ -f "$dir/tclConfig.sh" ]; then
            echo "$dir"
            return
        fi
    done
}

have_openssl_headers() {
    printf '#include <openssl/evp.h>\n' | "$CC" -E -x c - >/dev/null 2>&1
}

check_prerequisites() {
    local missing=()
    [ -n "$(tcl_config_dir)" ] || missing+=(tcl-dev)
    command -v tclsh >/dev/null || missing+=(tcl)
    have_openssl_headers || missing+=(libssl-dev)
    # The test command's build step (./build-sqlcipher.sh --test-tools) installs these; this script only checks.
    [ ${#missing[@]} -eq 0 ] || die "missing system packages: ${missing[*]} (./build-sqlcipher.sh --test-tools installs \
them when run as root; or: sudo apt-get install ${missing[*]})"
    TCL_DIR=$(tcl_config_dir)
    local tool
    for tool in "$CC" make tar sha256sum tclsh; do
        command -v "$tool" >/dev/null || die "required tool '$tool' is not on PATH"
    done
}

# ------------------------------------------------------------------------------------------------ build ---

# The compile flags: the pin's, minus DROPPED_FLAGS, plus EXTRA_FLAGS.
compose_flags() {
    local flag dropped keep
    CFLAGS_USED=()
    for flag in "${ENGINE_CFLAGS[@]}"; do
        keep=yes
        for dropped in "${DROPPED_FLAGS[@]}"; do
            [ "$flag" != "$dropped" ] || keep=no
        done
        [ "$keep" = no ] || CFLAGS_USED+=("$flag")
    done
    CFLAGS_USED+=("${EXTRA_FLAGS[@]}")
    # The pin's configure flags (--with-tempstore=… and the like), but with Tcl: the harness is a Tcl program.
    CONFIGURE_USED=()
    for flag in "${PIN_CONFIGURE_FLAGS[@]}"; do
        [ "$flag" = --disable-tcl ] || CONFIGURE_USED+=("$flag")
    done
    CONFIGURE_USED+=(--with-tcl="$TCL_DIR" ${CONFIGURE_HOST[@]+"${CONFIGURE_HOST[@]}"})
}

build_testfixture() {
    local stamp stamp_file=$UPSTREAM_DIR/testfixture.stamp
    stamp=$(printf '%s\n' "$RECIPE" "$PIN_SHA256" "$PIN_TARBALL" "${CFLAGS_USED[@]}" "${CONFIGURE_USED[@]}" \
        "$("$CC" --version | head -n1)" "$(sed -n 's/^TCL_PATCH_LEVEL=//p' "$TCL_DIR/tclConfig.sh")" \
        "$([ "$CRYPTO_PROVIDER" = reference ] || sha256sum "$PROVIDER_SOURCE")" \
        | sha256sum | cut -d' ' -f1)
    if [ -x "$UPSTREAM_DIR/testfixture" ] && [ -f "$UPSTREAM_DIR/src/test/sqlcipher.test" ] \
        && [ "$(cat "$stamp_file" 2>/dev/null)" = "$stamp" ]; then
        note "testfixture up to date (pin, flags, compiler and Tcl unchanged)"
        return
    fi
    [ -f "$TARBALL" ] || die "the pinned tarball $TARBALL is missing: run ./build-sqlcipher.sh first (it fetches and caches it)"
    local actual
    actual=$(sha256sum "$TARBALL" | cut -d' ' -f1)
    [ "$actual" = "$PIN_SHA256" ] || die "SHA-256 mismatch for $TARBALL: expected $PIN_SHA256, actual $actual; \
delete it and run ./build-sqlcipher.sh to fetch a genuine copy"
    note "source: $TARBALL (SHA-256 ok)"

    rm -rf "$UPSTREAM_DIR"
    mkdir -p "$UPSTREAM_DIR/src" "$UPSTREAM_DIR/build"
    tar -xzf "$TARBALL" -C "$UPSTREAM_DIR/src" --strip-components=1
    [ -x "$UPSTREAM_DIR/src/configure" ] || die "the tarball holds no configure script"

    # SQLCipher's configure and Makefile break on paths with spaces: build through a space-free symlink.
    local work
    work=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-upstream.XXXXXX")
    CLEANUP+=("$work")
    ln -s "$UPSTREAM_DIR" "$work/up"
    cp "$PROVIDER_SOURCE" "$UPSTREAM_DIR/build/"
    note "configure ${CONFIGURE_USED[*]} CFLAGS=\"${CFLAGS_USED[*]}\" LDFLAGS=-lcrypto"
    note "make -j$MAKE_JOBS testfixture (log: $UPSTREAM_DIR/build/build.log)"
    if ! (cd "$work/up/build" \
        && ../src/configure "${CONFIGURE_USED[@]}" CC="$CC" CFLAGS="${CFLAGS_USED[*]}" LDFLAGS="-lcrypto" \
        && make -j"$MAKE_JOBS" testfixture $(provider_make_arguments)) \
        >"$UPSTREAM_DIR/build/build.log" 2>&1; then
        # The link line alone is tens of kilobytes: show the ends of the last lines.
        tail -n 30 "$UPSTREAM_DIR/build/build.log" | cut -c1-300 >&2
        die "building testfixture failed (full log: $UPSTREAM_DIR/build/build.log)"
    fi
    amalgamation_has_selected_provider "$UPSTREAM_DIR/build/sqlite3.c" \
        || die "the harness's sqlite3.c does not hold the $CRYPTO_PROVIDER crypto provider (EXTRA_SRC)"
    cp "$UPSTREAM_DIR/build/testfixture" "$UPSTREAM_DIR/testfixture"
    echo "$stamp" >"$stamp_file"
}

# ------------------------------------------------------------------------------------------------- run ---

# Before trusting a "0 errors" line, proves the harness is the engine the pin describes: SQLCipher of the
# pinned version on the pinned SQLite, with what SQLCipherKit's promises rest on whatever the pin says (like
# verify-symbols.sh for the engine): the codec, OpenSSL, and temporary data in memory (TEMP_STORE 2 or 3;
# upstream's suite does not test that, and a harness without the codec skips nearly all of it).
check_harness() {
    local facts
    facts=$(cd "$UPSTREAM_DIR/run" && ${RUN_PREFIX[@]+"${RUN_PREFIX[@]}"} "$UPSTREAM_DIR/testfixture" /dev/stdin 2>&1 <<'EOF'
sqlite3 db :memory:
puts "cipher_version=[db one {PRAGMA cipher_version}]"
puts "sqlite_version=[db one {SELECT sqlite_version()}]"
db eval {PRAGMA key = 'k'}
puts "cipher_provider=[db one {PRAGMA cipher_provider}]"
foreach option [db eval {PRAGMA compile_options}] { puts "option=$option" }
db close
EOF
    ) || die "testfixture does not run: $facts"
    local want
    for want in "cipher_version=$PIN_VERSION community" "sqlite_version=$PIN_SQLITE_VERSION" \
        "cipher_provider=openssl" "option=HAS_CODEC" "option=TEMP_STORE=[23]" "option=THREADSAFE=1" \
        "option=ENABLE_FTS5"; do
        grep -qx "$want" <<<"$facts" \
            || die "testfixture is not the pinned engine: no '$want' in what it reports:"$'\n'"$(grep -E \
                '^(cipher_|sqlite_|option=(HAS_CODEC|TEMP_STORE|THREADSAFE|ENABLE_FTS5))' <<<"$facts")"
    done
}

# The files test/sqlcipher.test runs: the names in its test_set list, read from the pinned tarball's copy.
suite_files() {
    sed -n '/test_set/,/^\]/p' "$UPSTREAM_DIR/src/test/sqlcipher.test" | grep -oE 'sqlcipher-[A-Za-z0-9_-]+\.test'
}

# The count the pin records for FILE, or empty.
expected_count() {
    local entry
    for entry in "${PIN_UPSTREAM_TESTS[@]}"; do
        [ "${entry%%=*}" != "$1" ] || { echo "${entry#*=}"; return; }
    done
}

# Whether LOG of SCRIPT (which exited 1 with "0 errors") failed only on the one line its memory statistics
# being off produce: SCRIPT is one of MEMSTATUS_OFF_FILES, and after its "0 errors out of N tests" line comes
# exactly one "Unfreed memory: N bytes in M allocations" line and otherwise only memory figures. Anything
# else there ("N files were left open", "!Failures on these tests", a warning, a leak log) is a failure.
memstatus_is_sole_failure() {
    local script=$1 log=$2 tail unfreed others
    [[ " ${MEMSTATUS_OFF_FILES[*]} " == *" $script "* ]] || return 1
    # Everything after the last summary line.
    tail=$(awk '/^[0-9]+ errors out of [0-9]+ tests/ { n = NR } { line[NR] = $0 } END {
        for (i = n + 1; i <= NR; i++) print line[i] }' "$log")
    unfreed=$(grep -cE '^Unfreed memory: [0-9]+ bytes in [0-9]+ allocations$' <<<"$tail")
    others=$(grep -vE '^Unfreed memory: [0-9]+ bytes in [0-9]+ allocations$' <<<"$tail" | grep -cvE "$MEMSTATUS_TAIL")
    [ "$unfreed" = 1 ] && [ "$others" = 0 ] && ! grep -q '^!Failures on these tests:' "$log"
}

# The seed, as every failure states it: how to replay the run.
seed_note() { printf 'Tcl rand() seed %s: UPSTREAM_SEED=%s replays it' "$UPSTREAM_SEED" "$UPSTREAM_SEED"; }

# The line seeded.tcl prints each time it seeds Tcl's generator before a file is sourced.
SEEDED_LINE="^run-upstream: Tcl rand\\(\\) seeded with srand\\($UPSTREAM_SEED\\) before sourcing "

# Writes seeded.tcl, through which testfixture runs every test file (testfixture seeded.tcl SEED FILE): it seeds
# Tcl's generator and sources FILE as testfixture would have (argv0 is FILE's path: the tests find tester.tcl from
# it). The suite runner (sqlcipher.test) sources each of its files in a new interpreter (tester.tcl's
# slave_test_script), whose generator would start from the clock: once tester.tcl has defined that procedure, it
# is wrapped so that the new interpreter is seeded too before the file is sourced. Each seeding prints a line
# (SEEDED_LINE), which run_testfixture counts: a file sourced unseeded (say upstream renamed the procedure) fails.
write_seeded_tcl() {
    cat >"$UPSTREAM_DIR/seeded.tcl" <<'TCL'
set ::sqlcipherkit_seed [lindex $argv 0]
set ::argv0 [lindex $argv 1]
set ::argv [lrange $argv 2 end]
set ::argc [llength $::argv]
proc sqlcipherkit_seeding {file} {
  puts "run-upstream: Tcl rand() seeded with srand($::sqlcipherkit_seed) before sourcing [file tail $file]"
  return "expr {srand($::sqlcipherkit_seed)}"
}
proc sqlcipherkit_wrap {args} {
  if {[info procs slave_test_script] ne "" && [info procs sqlcipherkit_slave_test_script] eq ""} {
    rename slave_test_script sqlcipherkit_slave_test_script
    proc slave_test_script {script} {
      # script is [list source FILE] (tester.tcl's slave_test_file).
      sqlcipherkit_slave_test_script "[sqlcipherkit_seeding [lindex $script end]]; $script"
    }
  }
}
trace add execution source leave sqlcipherkit_wrap
eval [sqlcipherkit_seeding $::argv0]
source $::argv0
TCL
}

# Runs testfixture on SCRIPT (a path under src/test) into LOG, in the working folder RUN (default run; files run
# side by side each have their own), through seeded.tcl; sets RUN_ERRORS, RUN_TESTS, RUN_STATUS. SEEDINGS is how
# many times the run must seed Tcl's generator (default 1, the file; for the suite runner, 1 + its files).
run_testfixture() {
    local script=$1 log=$2 run=${3:-run} seedings=${4:-1} seeded
    rm -rf "${UPSTREAM_DIR:?}/$run"
    mkdir -p "$UPSTREAM_DIR/$run"
    RUN_STATUS=0
    # The tests write test.db… and SQLCipher's cipher log into the working folder, so they run in run/. The
    # script path is given whole: the tests find tester.tcl and sqlcipher-resources/ from it. Through a
    # space-free symlink, as the build.
    (cd "$WORK/up/$run" && timeout "$UPSTREAM_TIMEOUT" ${RUN_PREFIX[@]+"${RUN_PREFIX[@]}"} ../testfixture \
        ../seeded.tcl "$UPSTREAM_SEED" "../src/test/$script") >"$log" 2>&1 </dev/null || RUN_STATUS=$?
    [ "$RUN_STATUS" != 124 ] || die "test/$script did not finish within ${UPSTREAM_TIMEOUT}s (log: $log; $(seed_note))"
    local summary
    summary=$(grep -E '^[0-9]+ errors out of [0-9]+ tests' "$log" | tail -n1 || true)
    if [ -z "$summary" ]; then
        tail -n 30 "$log" >&2
        die "no 'N errors out of M tests' line: test/$script did not finish (exit $RUN_STATUS, log: $log; $(seed_note))"
    fi
    seeded=$(grep -cE "$SEEDED_LINE" "$log" || true)
    [ "$seeded" = "$seedings" ] \
        || die "test/$script: Tcl's rand() was seeded $seeded times, $seedings expected (once per file sourced): a file ran unseeded, its random data not replayable (see write_seeded_tcl; log: $log)"
    RUN_ERRORS=$(sed -E 's/^([0-9]+) errors out of ([0-9]+) tests.*/\1/' <<<"$summary")
    RUN_TESTS=$(sed -E 's/^([0-9]+) errors out of ([0-9]+) tests.*/\2/' <<<"$summary")
    if [ "$RUN_ERRORS" = 0 ] && [ "$RUN_STATUS" = 1 ] && memstatus_is_sole_failure "$script" "$log"; then
        note "test/$script: \"$(grep '^Unfreed memory: ' "$log")\" is its memory statistics being off (see MEMSTATUS_OFF_FILES), not a leak"
        RUN_STATUS=0
    fi
    if [ "$RUN_ERRORS" != 0 ] || [ "$RUN_STATUS" != 0 ]; then
        grep -E '^!Failures on these tests:|files were left open$|^Unfreed memory: ' "$log" >&2 || true
        grep -E -B2 -A6 '^! ' "$log" | head -n 60 >&2 || true
        die "SQLCipher's own test/$script failed against the pinned engine's flags ($RUN_ERRORS errors, exit $RUN_STATUS; $(seed_note))"
    fi
}

run_suite() {
    rm -rf "$UPSTREAM_DIR/run" "$UPSTREAM_DIR/logs"
    mkdir -p "$UPSTREAM_DIR/run" "$UPSTREAM_DIR/logs"
    check_harness
    write_seeded_tcl
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-upstream.XXXXXX")
    CLEANUP+=("$WORK")
    ln -s "$UPSTREAM_DIR" "$WORK/up"

    local files=() file
    mapfile -t files < <(suite_files)
    [ ${#files[@]} -gt 0 ] || die "found no test files in test/sqlcipher.test's test_set list"
    # Every file run has a recorded count, and every recorded count belongs to a file that runs.
    local missing=() entry known
    for file in "${files[@]}" "${EXTRA_FILES[@]}"; do
        [ -n "$(expected_count "$file")" ] || missing+=("$file")
    done
    for entry in "${PIN_UPSTREAM_TESTS[@]}"; do
        known=no
        for file in "${files[@]}" "${EXTRA_FILES[@]}"; do [ "${entry%%=*}" != "$file" ] || known=yes; done
        [ "$known" = yes ] || die "Vendor/sqlcipher.pin records $entry, but SQLCipher $PIN_VERSION runs no such file"
    done

    local started=$SECONDS total=0 expected line=() lines=() suite_tests=skipped suite_elapsed=0
    if [ ${#ONLY_FILES[@]} -gt 0 ]; then
        files=("${ONLY_FILES[@]}") EXTRA_FILES=() missing=()
    else
        # 1. The suite as upstream runs it.
        run_testfixture sqlcipher.test "$LOG" run $((${#files[@]} + 1))
        suite_tests=$RUN_TESTS suite_elapsed=$((SECONDS - started))
    fi
    # 2. Each file on its own, for its count (the suite runner reports one total only). With UPSTREAM_JOBS=N > 1,
    # N files at a time, each in a folder of its own (the emulated run: one qemu process is one core).
    local jobs=${UPSTREAM_JOBS:-1} running=0
    if [ "$jobs" -gt 1 ]; then
        for file in "${files[@]}" ${EXTRA_FILES[@]+"${EXTRA_FILES[@]}"}; do
            if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
            (
                trap - EXIT # the main shell removes the temporary folders, once every file has run
                file_started=$SECONDS
                run_testfixture "$file" "$UPSTREAM_DIR/logs/$file.log" "run-$file"
                echo "$RUN_TESTS $((SECONDS - file_started))" >"$UPSTREAM_DIR/logs/$file.result"
            ) &
            running=$((running + 1))
        done
        wait || true
    fi
    for file in "${files[@]}" ${EXTRA_FILES[@]+"${EXTRA_FILES[@]}"}; do
        local file_started=$SECONDS result=()
        if [ "$jobs" -gt 1 ]; then
            [ -s "$UPSTREAM_DIR/logs/$file.result" ] && read -r -a result <"$UPSTREAM_DIR/logs/$file.result" \
                || die "test/$file failed (above; log: $UPSTREAM_DIR/logs/$file.log; $(seed_note))"
            RUN_TESTS=${result[0]} file_started=$((SECONDS - result[1]))
        else
            run_testfixture "$file" "$UPSTREAM_DIR/logs/$file.log"
        fi
        total=$((total + RUN_TESTS))
        expected=$(expected_count "$file")
        lines+=("$(printf '  %-34s %4s tests, 0 errors (expected %s; %ss)' "$file" "$RUN_TESTS" "${expected:-?}" \
            "$((SECONDS - file_started))")")
        if [ -n "$expected" ] && [ "$RUN_TESTS" != "$expected" ]; then
            printf '%s\n' "${lines[@]}" >&2
            die "test/$file ran $RUN_TESTS tests, the pin records $expected ($(seed_note)): part of it was skipped, or the suite changed (update PIN_UPSTREAM_TESTS in Vendor/sqlcipher.pin after reading the log: $UPSTREAM_DIR/logs/$file.log)"
        fi
    done
    printf 'upstream SQLCipher %s (crypto provider %s, %s, Tcl rand() seed %s), 0 errors in every file:\n' \
        "$PIN_VERSION" "$CRYPTO_PROVIDER" "testfixture for $(readelf -h "$UPSTREAM_DIR/testfixture" \
        | sed -n 's/^ *Machine: *//p')" "$UPSTREAM_SEED"
    printf '%s\n' "${lines[@]}"
    if [ ${#ONLY_FILES[@]} -gt 0 ]; then
        printf '  %-34s not run (UPSTREAM_FILES names the files)\n' sqlcipher.test
    else
        printf '  %-34s %4s tests, 0 errors (the suite runner; %ss; log: %s)\n' sqlcipher.test "$suite_tests" \
            "$suite_elapsed" "$LOG"
    fi
    if [ ${#missing[@]} -gt 0 ]; then
        die "no test count recorded for: ${missing[*]} — record the counts above in PIN_UPSTREAM_TESTS (Vendor/sqlcipher.pin) once you have read their logs"
    fi
}

main() {
    [ $# -eq 0 ] || die "no arguments expected (see the header of $0)"
    local started=$SECONDS
    if [ ${#ONLY_FILES[@]} -gt 0 ]; then
        printf '==> upstream: SQLCipher %s %s, with the pin'"'"'s flags (%s; Tcl rand() seed %s)\n' "$PIN_VERSION" \
            "${ONLY_FILES[*]}" "${UPSTREAM_TARGET:-native}${RUN_PREFIX[*]:+, run by ${RUN_PREFIX[*]}}" "$UPSTREAM_SEED"
    else
        printf '==> upstream: SQLCipher %s test/sqlcipher.test, its files one by one, and sqlcipher-threads.test, with the pin'"'"'s flags (Tcl rand() seed %s)\n' \
            "$PIN_VERSION" "$UPSTREAM_SEED"
    fi
    check_prerequisites
    compose_flags
    build_testfixture
    run_suite
    note "build check and run: $((SECONDS - started))s"
}

main "$@"
