#!/usr/bin/env bash
# Tests/Upstream/run-upstream.sh: SQLCipher's own conformance suite against the engine SQLCipherKit ships.
#
# Builds SQLCipher's Tcl test harness `testfixture` from the same pinned tarball (SHA-256 checked) with the
# same codec, crypto provider and temp-store flags as libsqlcipher.a (Vendor/sqlcipher.pin), runs
# test/sqlcipher.test with it and fails on any upstream failure. The engine's other pin flags are kept too,
# except the ones listed in DROPPED_FLAGS below, each with the reason the upstream tests cannot take it.
# Upstream's Makefile adds its own harness flags on top (SQLITE_TEST, SQLITE_NO_SYNC,
# SQLITE_DEFAULT_PAGE_SIZE=1024…), as it does wherever this suite runs.
#
# Everything it writes lives under Vendor/build/upstream/ (gitignored):
#   src/                the extracted tarball (the test scripts are run from here)
#   build/              the out-of-tree configure + make folder; build.log is its log
#   testfixture         the harness; testfixture.stamp says which inputs built it
#   run/                the tests' working folder (test.db…, SQLCipher's own cipher log), fresh each run
#   sqlcipher-test.log  the full output of the last run
# testfixture is rebuilt only when the pin, the flags, the compiler, Tcl or this recipe change.
#
# Exit status: 0 every upstream test passed; 1 a failure, a missing summary line, or a build/setup error.
# Environment: CC (default cc), MAKE_JOBS (default 2), UPSTREAM_TIMEOUT (seconds the test run may take, default 1200).
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
RECIPE=upstream-v1

# Pin flags the upstream suite cannot take, each with why (the shipped engine keeps them all):
#   SQLCIPHER_OMIT_DEFAULT_LOGGING  sqlcipher-pragmas.test "verify-cipher_log_level" asserts that the default
#                                   log level is WARN; this flag leaves it at NONE, which is its purpose. Kept,
#                                   it fails that one test: "1 errors out of 194 tests".
#   HAVE_STDINT_H                   on the command line it reaches the harness's tclsqlite.c too, which then
#                                   uses uintptr_t without including <stdint.h> and does not compile. The
#                                   engine loses nothing: configure finds <stdint.h> and writes HAVE_STDINT_H 1
#                                   into sqlite_cfg.h, which the harness's sqlite3.c includes.
DROPPED_FLAGS=(-DSQLCIPHER_OMIT_DEFAULT_LOGGING -DHAVE_STDINT_H)

# Flags the suite needs on top of the pin's:
#   SQLCIPHER_TEST     compiles in PRAGMA cipher_test_on/off (fault injection: fail_encrypt, fail_decrypt,
#                      fail_migrate), which sqlcipher-core, -compatibility and -codecerror use. Test builds only.
EXTRA_FLAGS=(-DSQLCIPHER_TEST)

# The suite as this pin's tarball holds it: fewer tests than this means parts were skipped. A build without
# the codec, for one, skips every file (sqlcipher-*.test check `sqlite_orig -has-codec`) and reports
# "0 errors out of" a handful of tests. Measured on the pinned tarball; update it with the pin.
declare -A EXPECTED_TESTS=([4.6.1]=194)

die() {
    printf 'run-upstream.sh: error: %s\n' "$*" >&2
    exit 1
}
note() { printf '    %s\n' "$*"; }

CLEANUP=()
cleanup() {
    local path
    for path in ${CLEANUP[@]+"${CLEANUP[@]}"}; do rm -rf "$path"; done
}
trap cleanup EXIT

# ------------------------------------------------------------------------------------- prerequisites ---

# The folder holding tclConfig.sh (tcl-dev), which configure needs to build testfixture; empty if none.
tcl_config_dir() {
    local dir
    for dir in /usr/lib/tcl8.6 /usr/lib/"$(uname -m)"-linux-gnu/tcl8.6 /usr/lib64/tcl8.6 /usr/local/lib \
        /usr/lib/tcl8.7 /usr/lib; do
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
    for flag in "${PIN_CFLAGS[@]}"; do
        keep=yes
        for dropped in "${DROPPED_FLAGS[@]}"; do
            [ "$flag" != "$dropped" ] || keep=no
        done
        [ "$keep" = no ] || CFLAGS_USED+=("$flag")
    done
    CFLAGS_USED+=("${EXTRA_FLAGS[@]}")
    # configure adds its own -DSQLITE_TEMP_STORE after CFLAGS; derive its option from the pin's value so the
    # two agree (a later different -D would silently win).
    local temp_store=1
    for flag in "${CFLAGS_USED[@]}"; do
        case $flag in -DSQLITE_TEMP_STORE=*) temp_store=${flag#-DSQLITE_TEMP_STORE=} ;; esac
    done
    case $temp_store in
        0) TEMPSTORE_OPTION=never ;;
        1) TEMPSTORE_OPTION=no ;;
        2) TEMPSTORE_OPTION=yes ;;
        3) TEMPSTORE_OPTION=always ;;
        *) die "unexpected SQLITE_TEMP_STORE value in the pin: $temp_store" ;;
    esac
}

build_testfixture() {
    local stamp stamp_file=$UPSTREAM_DIR/testfixture.stamp
    stamp=$(printf '%s\n' "$RECIPE" "$PIN_SHA256" "$PIN_TARBALL" "${CFLAGS_USED[@]}" "$TEMPSTORE_OPTION" \
        "$("$CC" --version | head -n1)" "$(sed -n 's/^TCL_PATCH_LEVEL=//p' "$TCL_DIR/tclConfig.sh")" \
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
    note "configure --enable-tempstore=$TEMPSTORE_OPTION CFLAGS=\"${CFLAGS_USED[*]}\" LDFLAGS=-lcrypto"
    note "make -j$MAKE_JOBS testfixture (log: $UPSTREAM_DIR/build/build.log)"
    if ! (cd "$work/up/build" \
        && ../src/configure --with-tcl="$TCL_DIR" --enable-tempstore="$TEMPSTORE_OPTION" \
            CC="$CC" CFLAGS="${CFLAGS_USED[*]}" LDFLAGS="-lcrypto" \
        && make -j"$MAKE_JOBS" testfixture) >"$UPSTREAM_DIR/build/build.log" 2>&1; then
        # The link line alone is tens of kilobytes: show the ends of the last lines.
        tail -n 30 "$UPSTREAM_DIR/build/build.log" | cut -c1-300 >&2
        die "building testfixture failed (full log: $UPSTREAM_DIR/build/build.log)"
    fi
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
    facts=$(cd "$UPSTREAM_DIR/run" && "$UPSTREAM_DIR/testfixture" /dev/stdin 2>&1 <<'EOF'
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

run_suite() {
    rm -rf "$UPSTREAM_DIR/run"
    mkdir -p "$UPSTREAM_DIR/run"
    check_harness
    local started=$SECONDS status=0
    # The suite writes test.db… and its cipher log (sqlcipher-test.log) into the working folder, so it runs
    # in run/, not next to this script's capture of the same name. The script path is given whole: the
    # tests find tester.tcl and sqlcipher-resources/ from it. Through the space-free symlink, as the build.
    local work
    work=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-upstream.XXXXXX")
    CLEANUP+=("$work")
    ln -s "$UPSTREAM_DIR" "$work/up"
    (cd "$work/up/run" && timeout "$UPSTREAM_TIMEOUT" ../testfixture ../src/test/sqlcipher.test) \
        >"$LOG" 2>&1 </dev/null || status=$?
    local elapsed=$((SECONDS - started))
    [ "$status" != 124 ] || die "test/sqlcipher.test did not finish within ${UPSTREAM_TIMEOUT}s (log: $LOG)"

    local summary errors tests
    summary=$(grep -E '^[0-9]+ errors out of [0-9]+ tests' "$LOG" | tail -n1 || true)
    if [ -z "$summary" ]; then
        tail -n 30 "$LOG" >&2
        die "no 'N errors out of M tests' line: test/sqlcipher.test did not finish (exit $status, log: $LOG)"
    fi
    errors=$(sed -E 's/^([0-9]+) errors out of ([0-9]+) tests.*/\1/' <<<"$summary")
    tests=$(sed -E 's/^([0-9]+) errors out of ([0-9]+) tests.*/\2/' <<<"$summary")
    printf 'upstream SQLCipher %s test/sqlcipher.test: %s errors out of %s tests (%ss, log: %s)\n' \
        "$PIN_VERSION" "$errors" "$tests" "$elapsed" "$LOG"
    if [ "$errors" != 0 ] || [ "$status" != 0 ]; then
        grep -E '^!Failures on these tests:' "$LOG" >&2 || true
        grep -E -B2 -A6 '^! ' "$LOG" | head -n 60 >&2 || true
        die "SQLCipher's own tests failed against the pinned engine's flags ($errors errors, exit $status)"
    fi
    local expected=${EXPECTED_TESTS[$PIN_VERSION]:-}
    if [ -z "$expected" ]; then
        note "no expected test count recorded for SQLCipher $PIN_VERSION: add $tests to EXPECTED_TESTS"
    elif [ "$tests" -lt "$expected" ]; then
        die "only $tests tests ran, SQLCipher $PIN_VERSION's suite holds $expected: part of it was skipped"
    fi
}

main() {
    [ $# -eq 0 ] || die "no arguments expected (see the header of $0)"
    local started=$SECONDS
    printf '==> upstream: SQLCipher %s test/sqlcipher.test with the pin'"'"'s flags\n' "$PIN_VERSION"
    check_prerequisites
    compose_flags
    build_testfixture
    run_suite
    note "build check and run: $((SECONDS - started))s"
}

main "$@"
