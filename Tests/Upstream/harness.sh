# shellcheck shell=bash
# Tests/Upstream/harness.sh: the test harness (SQLite's Tcl program `testfixture`) built from the engine SQLCipherKit
# ships, and the way test files run on it. Sourced by run-upstream.sh (SQLCipher's own files) and run-sqlite-tests.sh
# (SQLite's files for what this build changes), which set ROOT and SCRIPT_NAME (for messages) first; sourcing reads
# the settings below and defines the functions; nothing is built or run until a function is called.
#
# The harness is the shipped engine: its engine object is compiled from the generated, locally-changed
# amalgamation build-sqlcipher.sh ships (amalgamation/sqlite3.c of the engine's build folder, SQLCipherKit's crypto
# provider appended when it is the one selected, the pin's local changes applied), with the same flags as
# libsqlcipher.a (ENGINE_CFLAGS: the pin's PIN_CFLAGS for the selected provider, BuildSupport/engine/provider.sh),
# plus only the test-only flags named in HARNESS_ENGINE_FLAGS below, each with its reason. SQLCipher's make then
# builds testfixture as upstream does, but links that object where its Makefile would compile its own sqlite3.c
# (TESTFIXTURE_SRC1): make never generates an amalgamation here, and build_testfixture fails if one appears or if
# the link line names anything but ours. The test C files (src/test*.c, tclsqlite.c, ext/*/test helpers) and the
# test scripts come from the pinned tarball (SHA-256 checked), extracted under the harness folder. SQLCipherKit's own
# part of the harness, compiled into it only: harness/sqlcipherkit_harness.c (the export permit, the test key, the
# facts the check reads; its header says how each is asked for).
#
# check_harness proves what was built before any result is believed: the pinned SQLCipher and SQLite versions, the
# codec, TEMP_STORE 2 or 3, FTS5; the local changes the pin lists, as the engine itself reports them
# (sqlcipherkit_local_changes()); the crypto provider selected; sqlcipher_export() refused without the permit (the
# export gate, a local change, is in the object); and PRAGMA compile_options equal to the shipped archive's
# (libsqlcipher.a, read by a probe program linked against it) except exactly the harness flags' own entries.
#
# Environment (both scripts):
#   CC                         C compiler (default cc)
#   UPSTREAM_CRYPTO_PROVIDER   sqlcipherkit (default: the engine's) or reference (SQLCipher's own OpenSSL provider:
#                              the engine build-sqlcipher.sh --crypto-provider reference builds into
#                              Vendor/build/engine-reference/, through Tests/CryptoProvider/engine.sh, which builds
#                              it first when needed)
#   UPSTREAM_TARGET            native (default) or aarch64 (cross-built, run under qemu:
#                              Tests/Emulation/upstream-aarch64.sh)
#   UPSTREAM_HARNESS_SOURCE    shipped (default: amalgamation/sqlite3.c) or unchanged (amalgamation/sqlite3.upstream.c,
#                              upstream's output as generated, without the local changes: to see check_harness and
#                              the local-change checks fail; its harness in a folder of its own, suffix -unchanged)
#   UPSTREAM_TIMEOUT           seconds one test file may run (default 1200)
#   UPSTREAM_SEED              Tcl's rand() seed before each test file, 1-9 digits (default 1)
#
# Harness folders (gitignored): Vendor/build/upstream/ (native, SQLCipherKit's provider), upstream-reference/,
# upstream-aarch64/, each with src/ (the extracted tarball), build/ (configure + make; build.log), testfixture and
# testfixture.stamp (the inputs that built it: rebuilt only when one changes), and the runs' folders and logs.

CC=${CC:-cc}
UPSTREAM_TIMEOUT=${UPSTREAM_TIMEOUT:-1200}
CACHE_DIR=$ROOT/Vendor/cache
TARBALL=$CACHE_DIR/$PIN_TARBALL

# Bump when the way testfixture is configured or built changes, so an old harness is not reused.
RECIPE=shipped-engine-v1

# ------------------------------------------------------------------------------------------- the flags ---

# Test-only flags the harness's engine object gets on top of ENGINE_CFLAGS (the same compile line as libsqlcipher.a):
#   SQLITE_TEST      compiles in the hooks SQLite's test C files drive and read: I/O-error and disk-full
#                    injection (SimulateIOError), sync and full-sync counters, the test-control entry points, the
#                    dbstat and dbpage tables test1.c registers. The test files do not link without it.
#   SQLITE_PRIVATE=  SQLite's internal functions get external linkage instead of `static`: the test C files call
#                    them (the btree, pager and vdbe internals test2.c, test3.c and test_btree.c drive). No code
#                    changes, only linkage.
#   SQLITE_NO_SYNC=1 fsync() and fdatasync() return at once. The pager still calls xSync exactly as shipped, and
#                    SQLITE_TEST counts each call (tests read the counts); the crash tests' simulated power cuts
#                    (test6.c) decide what survives from the sync calls they see above the OS layer, not from the
#                    disk. Upstream's own harness rule always sets it; real syncs would only make the run minutes
#                    longer on a shared disk.
#   SQLCIPHER_TEST   compiles in SQLCipher's PRAGMA cipher_test_on/off (fault injection: fail_encrypt,
#                    fail_decrypt, fail_migrate), which sqlcipher-core, -compatibility and -codecerror use.
HARNESS_ENGINE_FLAGS=(-DSQLITE_TEST -DSQLITE_PRIVATE= -DSQLITE_NO_SYNC=1 -DSQLCIPHER_TEST)
# One pin flag the harness replaces rather than keeps:
#   SQLITE_EXTRA_INIT=sqlcipher_extra_init  becomes SQLITE_EXTRA_INIT=sqlcipherkit_harness_extra_init, which calls
#                    sqlcipher_extra_init first, unchanged, then registers the harness's automatic extension (after
#                    every initialization: sqlite3_shutdown drops automatic extensions, and the test files shut
#                    down and start again often). Why not SQLite's other hook, which would leave the flag alone:
#                    harness/sqlcipherkit_harness.c says (it deadlocks).
HARNESS_EXTRA_INIT=sqlcipherkit_harness_extra_init
# Flags of the test C sources, in place of SQLCipher's main.mk TESTFIXTURE_FLAGS (make's own flags for them): they
# are compiled with the engine's flags too (CFLAGS), so that their idea of the build (test_config.c's `ifcapable`,
# the structures sqliteInt.h declares) is the engine's, and configure's OPT_FEATURE_FLAGS is emptied (it enables
# math functions and percentile, which the engine lacks: `ifcapable` would claim them).
#   SQLITE_TEST=1, SQLITE_PRIVATE=          as for the engine object, so that both sides agree
#   SQLITE_CORE                             the extension sources (ext/misc, fts5 test helpers) are built in, not
#                                           loadable
#   TCLSH_INIT_PROC=sqlite3TestInit         tclsqlite.c's main() registers the test commands (test_tclsh.c)
#   BUILD_sqlite                            as main.mk compiles every Tcl source
#   SQLITE_SERIES_CONSTRAINT_VERIFY=1, SQLITE_CKSUMVFS_STATIC, SQLITE_STATIC_RANDOMJSON
#                                           read only by ext/misc test helpers (series.c, cksumvfs.c, randomjson.c),
#                                           none of them in the engine
# main.mk's TESTFIXTURE_FLAGS left out, because they change the engine under test: SQLITE_DEFAULT_PAGE_SIZE=1024 (the
# shipped default is 4096; tests that assume 1024 are listed differences), SQLITE_ENABLE_STMTVTAB, _DBPAGE_VTAB,
# _BYTECODE_VTAB, _CARRAY, _PERCENTILE (features the shipped engine does not have; test1.c's carray binding gets
# a refusing stand-in, harness/sqlcipherkit_harness.c), SQLITE_STRICT_SUBTYPE=1 (a behaviour the shipped engine
# does not have); and SQLITE_CRASH_TEST, SQLITE_SERVER (no source of this tarball reads them).
HARNESS_TEST_SOURCE_FLAGS=(-DSQLITE_TEST=1 -DSQLITE_PRIVATE= -DSQLITE_CORE -DTCLSH_INIT_PROC=sqlite3TestInit
    -DBUILD_sqlite -DSQLITE_SERIES_CONSTRAINT_VERIFY=1 -DSQLITE_CKSUMVFS_STATIC -DSQLITE_STATIC_RANDOMJSON)
# No pin flag is dropped any more. The harness SQLCipher's make built before dropped two: SQLCIPHER_OMIT_DEFAULT_LOGGING
# (kept now, as shipped: the one SQLCipher test that asserts the default log level is WARN is a listed difference,
# Tests/Upstream/sqlite-tests.txt) and HAVE_STDINT_H (it broke tclsqlite.c on an older pin; measured on the current
# one, the test sources compile with it).

HARNESS_C=$ROOT/Tests/Upstream/harness/sqlcipherkit_harness.c

# shellcheck source=../../BuildSupport/engine/provider.sh
source "$ROOT/BuildSupport/engine/provider.sh"

die() {
    printf '%s: error: %s\n' "$SCRIPT_NAME" "$*" >&2
    exit 1
}
note() { printf '    %s\n' "$*"; }

# ------------------------------------------------------------------------------------------ selection ---

# Sets CRYPTO_PROVIDER, ENGINE_CFLAGS, UPSTREAM_DIR, HARNESS_SOURCE and the target's settings (CONFIGURE_HOST,
# RUN_PREFIX, TCL_CONFIG_CANDIDATES) from the environment.
select_harness() {
    select_crypto_provider "${UPSTREAM_CRYPTO_PROVIDER:-sqlcipherkit}"
    UPSTREAM_DIR=$ROOT/Vendor/build/upstream
    [ "$CRYPTO_PROVIDER" = sqlcipherkit ] || UPSTREAM_DIR=$ROOT/Vendor/build/upstream-$CRYPTO_PROVIDER
    CONFIGURE_HOST=() RUN_PREFIX=() TCL_CONFIG_CANDIDATES=() ENGINE_ARCHIVE_TARGET= HARNESS_NM=nm
    case "${UPSTREAM_TARGET:-native}" in
        native) ;;
        # shellcheck source=../Emulation/upstream-aarch64.sh
        aarch64) source "$ROOT/Tests/Emulation/upstream-aarch64.sh" ;;
        *) die "unknown UPSTREAM_TARGET '$UPSTREAM_TARGET' (native or aarch64)" ;;
    esac
    HARNESS_SOURCE=${UPSTREAM_HARNESS_SOURCE:-shipped}
    case "$HARNESS_SOURCE" in
        shipped) ;;
        unchanged) UPSTREAM_DIR=$UPSTREAM_DIR-unchanged ;;
        *) die "unknown UPSTREAM_HARNESS_SOURCE '$HARNESS_SOURCE' (shipped or unchanged)" ;;
    esac
    UPSTREAM_SEED=${UPSTREAM_SEED:-1}
    [[ $UPSTREAM_SEED =~ ^[0-9]{1,9}$ ]] || die "UPSTREAM_SEED must be a number of 1-9 digits, not '$UPSTREAM_SEED'"
}

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
    for tool in "$CC" make tar sha256sum tclsh "$HARNESS_NM" cmp flock; do
        command -v "$tool" >/dev/null || die "required tool '$tool' is not on PATH"
    done
}

# ------------------------------------------------------------------------------------------------ build ---

# The engine's build folder (ENGINE_DIR: amalgamation/, include/, lib/libsqlcipher.a), the amalgamation the harness
# compiles (AMALGAMATION) and the archive check_harness compares it with (ENGINE_ARCHIVE).
locate_engine() {
    if [ "${UPSTREAM_TARGET:-native}" = native ]; then
        ENGINE_DIR=$("$ROOT/Tests/CryptoProvider/engine.sh" "$CRYPTO_PROVIDER") \
            || die "no $CRYPTO_PROVIDER engine to build the harness from (Tests/CryptoProvider/engine.sh failed, above)"
        ENGINE_ARCHIVE=$ENGINE_DIR/lib/libsqlcipher.a
    else
        # The cross-built engine compiles the same generated amalgamation as the native one (BuildSupport/build/arm64.sh).
        ENGINE_DIR=$ROOT/Vendor/build
        ENGINE_ARCHIVE=$ROOT/Vendor/build/$ENGINE_ARCHIVE_TARGET/lib/libsqlcipher.a
    fi
    AMALGAMATION=$ENGINE_DIR/amalgamation/sqlite3.c
    [ "$HARNESS_SOURCE" = shipped ] || AMALGAMATION=$ENGINE_DIR/amalgamation/sqlite3.upstream.c
    [ -s "$AMALGAMATION" ] || die "$AMALGAMATION is missing: run ./build-sqlcipher.sh first (it generates the engine's source)"
    [ -s "$ENGINE_ARCHIVE" ] || die "$ENGINE_ARCHIVE is missing: run ./build-sqlcipher.sh first"
    amalgamation_has_selected_provider "$AMALGAMATION" \
        || die "$AMALGAMATION does not hold the $CRYPTO_PROVIDER crypto provider (EXTRA_SRC)"
}

# The compile flags: HARNESS_ENGINE_CFLAGS for the engine object (ENGINE_CFLAGS with SQLITE_EXTRA_INIT replaced, plus
# HARNESS_ENGINE_FLAGS), TEST_SOURCE_CFLAGS for the test sources (ENGINE_CFLAGS), ENGINE_EXTRA_INIT (the pin's value),
# CONFIGURE_USED.
compose_flags() {
    local flag
    HARNESS_ENGINE_CFLAGS=() ENGINE_EXTRA_INIT=
    for flag in "${ENGINE_CFLAGS[@]}"; do
        case "$flag" in
            -DSQLITE_EXTRA_INIT=*)
                ENGINE_EXTRA_INIT=${flag#-DSQLITE_EXTRA_INIT=}
                HARNESS_ENGINE_CFLAGS+=("-DSQLITE_EXTRA_INIT=$HARNESS_EXTRA_INIT") ;;
            *) HARNESS_ENGINE_CFLAGS+=("$flag") ;;
        esac
    done
    [ -n "$ENGINE_EXTRA_INIT" ] || die "the pin has no -DSQLITE_EXTRA_INIT=… flag (SQLCipher needs one; the harness wraps it)"
    HARNESS_ENGINE_CFLAGS+=("${HARNESS_ENGINE_FLAGS[@]}")
    TEST_SOURCE_CFLAGS=("${ENGINE_CFLAGS[@]}")
    # The pin's configure flags, but with Tcl: the harness is a Tcl program. configure only prepares make's tools
    # and the headers the test sources include; the engine's own flags are the ones above.
    CONFIGURE_USED=()
    for flag in "${PIN_CONFIGURE_FLAGS[@]}"; do
        [ "$flag" = --disable-tcl ] || CONFIGURE_USED+=("$flag")
    done
    CONFIGURE_USED+=(--with-tcl="$TCL_DIR" ${CONFIGURE_HOST[@]+"${CONFIGURE_HOST[@]}"})
}

HARNESS_CLEANUP=()
harness_cleanup() {
    local path
    for path in ${HARNESS_CLEANUP[@]+"${HARNESS_CLEANUP[@]}"}; do rm -rf "$path"; done
}
trap harness_cleanup EXIT

# A space-free path to UPSTREAM_DIR (SQLCipher's configure and Makefile, and some tests, break on spaces): WORK/up.
space_free_link() {
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-upstream.XXXXXX")
    HARNESS_CLEANUP+=("$WORK")
    ln -s "$UPSTREAM_DIR" "$WORK/up"
}

# Builds UPSTREAM_DIR/testfixture unless its stamp says the same inputs built it. Serialized by a lock on the
# folder, so that the two scripts never build one harness at once.
build_testfixture() {
    mkdir -p "$(dirname "$UPSTREAM_DIR")"
    exec {HARNESS_LOCK}>"$UPSTREAM_DIR.lock"
    flock "$HARNESS_LOCK"
    local stamp stamp_file=$UPSTREAM_DIR/testfixture.stamp
    stamp=$(printf '%s\n' "$RECIPE" "$PIN_SHA256" "$PIN_TARBALL" "$HARNESS_SOURCE" "$(sha256sum <"$AMALGAMATION")" \
        "$(sha256sum <"$HARNESS_C")" "${HARNESS_ENGINE_CFLAGS[@]}" "${TEST_SOURCE_CFLAGS[@]}" \
        "${HARNESS_TEST_SOURCE_FLAGS[@]}" "${CONFIGURE_USED[@]}" "$("$CC" --version | head -n1)" \
        "$(sed -n 's/^TCL_PATCH_LEVEL=//p' "$TCL_DIR/tclConfig.sh")" | sha256sum | cut -d' ' -f1)
    if [ -x "$UPSTREAM_DIR/testfixture" ] && [ -f "$UPSTREAM_DIR/src/test/tester.tcl" ] \
        && [ "$(cat "$stamp_file" 2>/dev/null)" = "$stamp" ]; then
        note "testfixture up to date (engine source, flags, compiler and Tcl unchanged)"
        flock -u "$HARNESS_LOCK"
        return
    fi
    [ -f "$TARBALL" ] || die "the pinned tarball $TARBALL is missing: run ./build-sqlcipher.sh first (it fetches and caches it)"
    local actual started=$SECONDS
    actual=$(sha256sum "$TARBALL" | cut -d' ' -f1)
    [ "$actual" = "$PIN_SHA256" ] || die "SHA-256 mismatch for $TARBALL: expected $PIN_SHA256, actual $actual; \
delete it and run ./build-sqlcipher.sh to fetch a genuine copy"
    note "test sources and scripts: $TARBALL (SHA-256 ok)"
    note "engine source: $AMALGAMATION"

    rm -rf "$UPSTREAM_DIR"
    mkdir -p "$UPSTREAM_DIR/src" "$UPSTREAM_DIR/build"
    tar -xzf "$TARBALL" -C "$UPSTREAM_DIR/src" --strip-components=1
    [ -x "$UPSTREAM_DIR/src/configure" ] || die "the tarball holds no configure script"
    space_free_link
    local build=$WORK/up/build log=$UPSTREAM_DIR/build/build.log
    note "configure ${CONFIGURE_USED[*]} (log: $log)"
    # 1. configure, and the generated headers the test sources include (sqliteInt.h includes sqlite3.h, parse.h and
    # opcodes.h; the fts5 test helpers fts5.h) and tclsqlite-ex.c (tclsqlite.c with its output formatter). Nothing
    # of the engine is generated here.
    if ! (cd "$build" && ../src/configure "${CONFIGURE_USED[@]}" CC="$CC" CFLAGS="${TEST_SOURCE_CFLAGS[*]}" LDFLAGS="-lcrypto" \
        && make sqlite3.h parse.h opcodes.h tclsqlite-ex.c && cp ../src/ext/fts5/fts5.h .) >"$log" 2>&1; then
        tail -n 30 "$log" | cut -c1-300 >&2
        die "preparing the harness build failed (log: $log)"
    fi
    # The header the test sources see is the engine's own.
    cmp -s "$build/sqlite3.h" "$(dirname "$AMALGAMATION")/sqlite3.h" \
        || die "make's sqlite3.h differs from the engine's $(dirname "$AMALGAMATION")/sqlite3.h"
    # 2. The engine object: libsqlcipher.a's compile line (engine.sh compile_engine_archive) plus the test-only flags.
    note "$CC -c ${HARNESS_ENGINE_CFLAGS[*]} $(basename "$AMALGAMATION") (the engine object)"
    (cd "$build" && "$CC" -c "${HARNESS_ENGINE_CFLAGS[@]}" -o sqlcipherkit-engine.o "$AMALGAMATION") >>"$log" 2>&1 \
        || { tail -n 20 "$log" >&2; die "compiling the engine object failed (log: $log)"; }
    (cd "$build" && "$CC" -c "${ENGINE_CFLAGS[@]}" -I. "-DSQLCIPHERKIT_ENGINE_EXTRA_INIT=$ENGINE_EXTRA_INIT" \
        -o sqlcipherkit_harness.o "$HARNESS_C") >>"$log" 2>&1 \
        || { tail -n 20 "$log" >&2; die "compiling $HARNESS_C failed (log: $log)"; }
    # 3. testfixture: make's own rule, with the engine object where it would compile its own sqlite3.c.
    note "make testfixture TESTFIXTURE_SRC1=\"sqlcipherkit-engine.o sqlcipherkit_harness.o\" TESTFIXTURE_FLAGS=\"${HARNESS_TEST_SOURCE_FLAGS[*]}\" OPT_FEATURE_FLAGS="
    if ! (cd "$build" && make testfixture CFLAGS="${TEST_SOURCE_CFLAGS[*]}" OPT_FEATURE_FLAGS= \
        TESTFIXTURE_FLAGS="${HARNESS_TEST_SOURCE_FLAGS[*]}" \
        TESTFIXTURE_SRC1="sqlcipherkit-engine.o sqlcipherkit_harness.o") >"$UPSTREAM_DIR/build/make-testfixture.log" 2>&1; then
        tail -n 30 "$UPSTREAM_DIR/build/make-testfixture.log" | cut -c1-300 >&2
        die "building testfixture failed (log: $UPSTREAM_DIR/build/make-testfixture.log)"
    fi
    # The object linked is ours: make generated no amalgamation of its own, its one link line names our object and
    # no sqlite3.c, and the program defines the harness's init hook (and, but for the unchanged source, the
    # engine's record of its local changes).
    [ ! -e "$build/sqlite3.c" ] || die "make generated an amalgamation of its own ($build/sqlite3.c): the harness must compile the engine's"
    local link
    link=$(grep -- '-o testfixture ' "$UPSTREAM_DIR/build/make-testfixture.log" || true)
    [ "$(grep -c . <<<"$link")" = 1 ] && grep -q ' sqlcipherkit-engine.o ' <<<"$link" \
        && ! grep -qE '(^| )[^ ]*sqlite3\.c( |$)' <<<"$link" \
        || die "testfixture's link line does not link the engine object alone (log: $UPSTREAM_DIR/build/make-testfixture.log)"
    local symbols # read whole: grep -q stopping early would fail nm with SIGPIPE under pipefail
    symbols=$("$HARNESS_NM" "$build/testfixture")
    grep -qE " [Tt] $HARNESS_EXTRA_INIT\$" <<<"$symbols" \
        || die "testfixture does not define $HARNESS_EXTRA_INIT: not linked with the harness's engine object"
    if [ "$HARNESS_SOURCE" = shipped ]; then
        grep -qE ' [Tt] sqlcipherkit_local_changes$' <<<"$symbols" \
            || die "testfixture lacks sqlcipherkit_local_changes: not linked with the shipped, locally-changed engine"
    fi
    cp "$build/testfixture" "$UPSTREAM_DIR/testfixture"
    echo "$stamp" >"$stamp_file"
    note "testfixture built in $((SECONDS - started))s"
    flock -u "$HARNESS_LOCK"
}

# ------------------------------------------------------------------------------------------- the check ---

# The names of the pin's local changes, space-separated, in the pin's order (what sqlcipherkit_local_changes() returns).
pin_local_change_names() {
    local entry names=()
    for entry in ${PIN_LOCAL_CHANGES[@]+"${PIN_LOCAL_CHANGES[@]}"}; do names+=("${entry%%|*}"); done
    printf '%s' "${names[*]}"
}

# Runs testfixture on the Tcl script on stdin in a folder of its own, with the environment VAR=VALUE... given.
harness_tcl() {
    local dir
    dir=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-harness-check.XXXXXX")
    HARNESS_CLEANUP+=("$dir")
    (cd "$dir" && env "$@" ${RUN_PREFIX[@]+"${RUN_PREFIX[@]}"} "$UPSTREAM_DIR/testfixture" /dev/stdin 2>&1)
}

# The compile options of the shipped archive ENGINE_ARCHIVE, from a probe program linked against it.
archive_compile_options() {
    local dir
    dir=$(mktemp -d "${TMPDIR:-/tmp}/sqlcipherkit-harness-probe.XXXXXX")
    HARNESS_CLEANUP+=("$dir")
    cat >"$dir/probe.c" <<'EOF'
/* Prints the compile options of the engine it is linked with (check_harness, Tests/Upstream/harness.sh). */
#include <stdio.h>
#include "sqlite3.h"
int main(void) {
    const char *option;
    for (int i = 0; (option = sqlite3_compileoption_get(i)) != NULL; i++) puts(option);
    return 0;
}
EOF
    "$CC" -I"$(dirname "$AMALGAMATION")" -o "$dir/probe" "$dir/probe.c" "$ENGINE_ARCHIVE" -lcrypto -lpthread -lm -ldl \
        >"$dir/probe.log" 2>&1 || die "linking a probe against $ENGINE_ARCHIVE failed: $(tail -n 5 "$dir/probe.log")"
    ${RUN_PREFIX[@]+"${RUN_PREFIX[@]}"} "$dir/probe" || die "the probe linked against $ENGINE_ARCHIVE did not run"
}

# Before trusting a "0 errors" line, proves the harness is the engine SQLCipherKit ships (see the header).
check_harness() {
    local facts
    facts=$(harness_tcl SQLCIPHERKIT_HARNESS_FACTS=1 <<'EOF'
sqlite3 db :memory:
puts "cipher_version=[db one {PRAGMA cipher_version}]"
puts "sqlite_version=[db one {SELECT sqlite_version()}]"
db eval {PRAGMA key = 'k'}
puts "cipher_provider=[db one {PRAGMA cipher_provider}]"
foreach fact [split [db one {SELECT sqlcipherkit_harness_facts()}] ";"] { puts "harness_$fact" }
foreach option [db eval {PRAGMA compile_options}] { puts "option=$option" }
db close
EOF
    ) || die "testfixture does not run: $facts"
    # Every check runs and every failure is reported, so that one run shows all that is wrong with a harness.
    local want problems=()
    for want in "cipher_version=$PIN_VERSION community" "sqlite_version=$PIN_SQLITE_VERSION" \
        "cipher_provider=openssl" "option=HAS_CODEC" "option=TEMP_STORE=[23]" "option=THREADSAFE=1" \
        "option=ENABLE_FTS5" "harness_local_changes=$(pin_local_change_names)" "harness_provider=$CRYPTO_PROVIDER"; do
        grep -qx "$want" <<<"$facts" || problems+=("it does not report '$want' (it reports: $(grep -E \
            '^(cipher_version|sqlite_version|cipher_provider|harness_local_changes|harness_provider)=' <<<"$facts" \
            | tr '\n' ' '))")
    done
    # Its compile options are the shipped archive's, except exactly the harness flags' own entries.
    local shipped harness expected
    shipped=$(archive_compile_options | sort)
    harness=$(sed -n 's/^option=//p' <<<"$facts" | sort)
    # SQLITE_TEST brings SQLITE_NEED_ERR_NAME with it (sqliteInt.h: the test commands print result codes by name).
    expected=$( (grep -vx "EXTRA_INIT=$ENGINE_EXTRA_INIT" <<<"$shipped"
        printf '%s\n' "EXTRA_INIT=$HARNESS_EXTRA_INIT" TEST NEED_ERR_NAME NO_SYNC) | sort)
    [ "$harness" = "$expected" ] || problems+=("its compile options are not the shipped archive's ($ENGINE_ARCHIVE) plus the harness flags': $(diff <(echo "$expected") <(echo "$harness") | grep '^[<>]' | sed 's/^</missing/; s/^>/unexpected/' | tr '\n' ';')")
    # The export gate (a local change) is in the object: without the harness's permit sqlcipher_export() refuses.
    local refusal
    refusal=$(harness_tcl <<'EOF'
sqlite3 db gate.db
db eval {CREATE TABLE t(a); INSERT INTO t VALUES(1); ATTACH 'copy.db' AS copy KEY ''}
puts "export=[catch {db eval {SELECT sqlcipher_export('copy')}} message] $message"
db close
EOF
    )
    grep -q '^export=1 sqlcipher_export() is refused' <<<"$refusal" \
        || problems+=("sqlcipher_export() ran without the permit: no export gate (local change sqlcipher-export-gate): $refusal")
    [ ${#problems[@]} = 0 ] || die "testfixture is not the engine SQLCipherKit ships ($UPSTREAM_DIR/testfixture):$(printf '\n  - %s' "${problems[@]}")"
    note "harness: SQLCipher $PIN_VERSION on SQLite $PIN_SQLITE_VERSION, crypto provider $CRYPTO_PROVIDER, local changes: $(pin_local_change_names); compile options = the shipped archive's + TEST, NEED_ERR_NAME, NO_SYNC, EXTRA_INIT=$HARNESS_EXTRA_INIT; export gate refuses"
}

# ------------------------------------------------------------------------------------------------- run ---

# The seed, as every failure states it: how to replay the run.
seed_note() { printf 'Tcl rand() seed %s: UPSTREAM_SEED=%s replays it' "$UPSTREAM_SEED" "$UPSTREAM_SEED"; }

# The line seeded.tcl prints each time it seeds Tcl's generator before a file is sourced.
seeded_line() { printf '%s' "^run-upstream: Tcl rand\\(\\) seeded with srand\\($UPSTREAM_SEED\\) before sourcing "; }

# Writes seeded.tcl, through which testfixture runs every test file (testfixture seeded.tcl SEED FILE): it seeds Tcl's
# generator and sources FILE as testfixture would have (argv0 is FILE's path: the tests find tester.tcl from it). The
# suite runner (sqlcipher.test) sources each of its files in a new interpreter (tester.tcl's slave_test_script), whose
# generator would start from the clock: once tester.tcl has defined that procedure, it is wrapped so that the new
# interpreter is seeded too before the file is sourced. Each seeding prints a line (seeded_line), which
# run_testfixture counts: a file sourced unseeded (say upstream renamed the procedure) fails.
# With SQLCIPHERKIT_TESTER_KEY=0 in the environment, tester.tcl's own keying is turned off: on a build with a codec
# its [sqlite3] wrapper opens every connection with "-key xyzzy" (a passphrase) unless ::do_not_use_codec is set, and
# it unsets that variable when it is sourced, before it opens its first connection. seeded.tcl sets the variable
# before the file runs and sets it again whenever it is unset (a Tcl unset trace), so tester.tcl's wrapper keys
# nothing and the wrapper's other settings (cache size 3) stay. run-sqlite-tests.sh does that for SQLite's files so
# that the harness's own key (SQLCIPHERKIT_HARNESS_KEY, or none) decides every connection, the crash tests' child
# processes too, which never source tester.tcl, so that tester.tcl's key never reaches them (with it, every crash test
# file failed "file is not a database": the child wrote an unkeyed file, the parent read it with "xyzzy").
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
proc sqlcipherkit_no_tester_key {args} {
  set ::do_not_use_codec 1
  trace add variable ::do_not_use_codec unset sqlcipherkit_no_tester_key
}
if {[info exists ::env(SQLCIPHERKIT_TESTER_KEY)] && $::env(SQLCIPHERKIT_TESTER_KEY) eq "0"} {
  sqlcipherkit_no_tester_key
}
eval [sqlcipherkit_seeding $::argv0]
source $::argv0
TCL
}

# Files whose run ends with "Unfreed memory: N bytes" although nothing leaks (set by run-upstream.sh), and the
# figure each crypto provider's harness leaves there, "N bytes in M allocations" (MEMSTATUS_UNFREED[PROVIDER]): any
# other figure fails the run.
MEMSTATUS_OFF_FILES=()
declare -A MEMSTATUS_UNFREED=()
# What may follow the "0 errors out of N tests" line of such a file besides that one line: tester.tcl's
# memory figures (show_memstats and the lines after it), nothing that reports a failure.
MEMSTATUS_TAIL='^(|(Memory used|Allocation count|Page-cache used|Page-cache overflow|Parser stack depth): .*'
MEMSTATUS_TAIL+='|(Maximum|Current) memory usage: -?[0-9]+ bytes|Number of malloc\(\) *: -?[0-9]+ calls)$'

# Whether LOG of SCRIPT (which exited 1 with "0 errors") failed only on the one line its memory statistics
# being off produce: SCRIPT is one of MEMSTATUS_OFF_FILES, and after its "0 errors out of N tests" line comes
# exactly one "Unfreed memory: N bytes in M allocations" line and otherwise only memory figures. Anything
# else there ("N files were left open", "!Failures on these tests", a warning, a leak log) is a failure.
memstatus_is_sole_failure() {
    local script=$1 log=$2 tail unfreed others
    memstatus_off "$script" || return 1
    # Everything after the last summary line.
    tail=$(awk '/^[0-9]+ errors out of [0-9]+ tests/ { n = NR } { line[NR] = $0 } END {
        for (i = n + 1; i <= NR; i++) print line[i] }' "$log")
    unfreed=$(grep -cxF "Unfreed memory: ${MEMSTATUS_UNFREED[$CRYPTO_PROVIDER]:-none pinned}" <<<"$tail")
    others=$(grep -vE '^Unfreed memory: [0-9]+ bytes in [0-9]+ allocations$' <<<"$tail" | grep -cvE "$MEMSTATUS_TAIL")
    if [ "$(grep -c '^Unfreed memory: ' <<<"$tail")" = 1 ] && [ "$unfreed" = 0 ]; then
        echo "$script: \"$(grep '^Unfreed memory: ' <<<"$tail")\", not the pinned \"Unfreed memory:" \
            "${MEMSTATUS_UNFREED[$CRYPTO_PROVIDER]:-(none pinned for provider $CRYPTO_PROVIDER)}\" (MEMSTATUS_UNFREED in run-upstream.sh): a leak, or the allocations changed" >&2
    fi
    [ "$unfreed" = 1 ] && [ "$others" = 0 ] && ! grep -q '^!Failures on these tests:' "$log"
}

# Whether SCRIPT (a path under the tarball) is one of MEMSTATUS_OFF_FILES.
memstatus_off() { [[ " ${MEMSTATUS_OFF_FILES[*]} " == *" $(basename "$1") "* ]]; }

# The names of the tests LOG reports failed (tester.tcl's "!Failures on these tests:" line), one a line, sorted, a
# name twice when it failed twice (crash7.test's integrity checks do): each is one of the errors counted.
failed_tests() {
    sed -n 's/^!Failures on these tests: //p' "$1" | tail -n1 | tr ' ' '\n' | sed '/^$/d' | sort
}

# Whether the failures LOG reports are exactly those expected: EXPECTED, the names listed as differing (exact names,
# space-separated, each once: expand_test_names has already expanded the list's braces), and ERRORS, the number of
# errors pinned for the file (a name may fail more than once: crash7.test's integrity checks do). STATUS is
# testfixture's exit status. The log's "N errors out of M tests" line must say ERRORS; every error must be a named
# failure (an unnamed one, "files were left open" or "Unfreed memory", is a failure of its own); every name that
# failed must be listed and every name listed must have failed; the status must be 0 with no error, 1 with some.
# Sets MATCH_PROBLEMS (a sentence, empty when it returns 0), RUN_ERRORS and RUN_TESTS (from the log). Reads nothing
# but LOG, so that run-sqlite-tests.sh's controls run it on logs of their own making.
match_failures() {
    local log=$1 expected=$2 errors=$3 status=$4 summary name got failed_count=0 problems=()
    local -A listed=() seen=()
    summary=$(grep -E '^[0-9]+ errors out of [0-9]+ tests' "$log" | tail -n1 || true)
    if [ -z "$summary" ]; then
        MATCH_PROBLEMS="no 'N errors out of M tests' line" RUN_ERRORS= RUN_TESTS=
        return 1
    fi
    RUN_ERRORS=$(sed -E 's/^([0-9]+) errors out of ([0-9]+) tests.*/\1/' <<<"$summary")
    RUN_TESTS=$(sed -E 's/^([0-9]+) errors out of ([0-9]+) tests.*/\2/' <<<"$summary")
    for name in $expected; do listed[$name]=1; done
    got=$(failed_tests "$log")
    local unexpected=() unmatched=()
    while IFS= read -r name; do
        [ -n "$name" ] || continue
        failed_count=$((failed_count + 1))
        [ -n "${seen[$name]:-}" ] || { seen[$name]=1; [ -n "${listed[$name]:-}" ] || unexpected+=("$name"); }
    done <<<"$got"
    for name in $expected; do [ -n "${seen[$name]:-}" ] || unmatched+=("$name"); done
    [ "$RUN_ERRORS" = "$errors" ] \
        || problems+=("$RUN_ERRORS errors where Tests/Upstream/sqlite-tests.txt pins $errors")
    [ "$failed_count" = "$RUN_ERRORS" ] \
        || problems+=("$RUN_ERRORS errors but $failed_count named failures (an error that is not a failed test: files left open, unfreed memory, a crash)")
    if [ ${#unexpected[@]} -gt 0 ]; then
        local text=${unexpected[*]:0:20}
        [ ${#unexpected[@]} -le 20 ] || text+=" and $((${#unexpected[@]} - 20)) more"
        problems+=("failed, not a listed difference: $text")
    fi
    [ ${#unmatched[@]} = 0 ] \
        || problems+=("listed as differing but passed (remove from Tests/Upstream/sqlite-tests.txt): ${unmatched[*]:0:20}")
    { [ "$status" = 0 ] && [ "$RUN_ERRORS" = 0 ]; } || { [ "$status" = 1 ] && [ "$RUN_ERRORS" != 0 ]; } \
        || problems+=("exit status $status with $RUN_ERRORS errors")
    MATCH_PROBLEMS=$(IFS=';'; printf '%s' "${problems[*]}" | sed 's/;/; /g')
    [ ${#problems[@]} = 0 ]
}

# Runs testfixture on SCRIPT (a path under the extracted tarball, e.g. test/wal.test) into LOG, in the working folder
# RUN under UPSTREAM_DIR, through seeded.tcl; SEEDINGS is how many times the run must seed Tcl's generator (1 for a
# file, 1 + its files for the suite runner); EXPECTED is the tests that differ on this build (exact names,
# space-separated, sqlite-tests.txt) and ERRORS the number of errors pinned for it: those names must fail, nothing
# else may, and the errors must number exactly ERRORS (match_failures). Further arguments are VAR=VALUE settings
# for the run. Sets RUN_ERRORS, RUN_TESTS, RUN_STATUS; dies on any other outcome.
run_testfixture() {
    local script=$1 log=$2 run=$3 seedings=$4 expected=$5 errors=$6 seeded folder
    shift 6
    rm -rf "${UPSTREAM_DIR:?}/$run"
    mkdir -p "$UPSTREAM_DIR/$run"
    folder=$WORK/up/$run
    if memstatus_off "$script"; then
        # Its "Unfreed memory" figure is pinned (MEMSTATUS_UNFREED), and SQLite keeps each database's full path,
        # from the working folder (getcwd, the physical path), in allocations that figure counts: it moved with the
        # checkout's path (113,864 bytes under /work/main, 113,880 and 113,888 in fresh clones under /tmp; 113,776
        # and 113,912 measured in working folders of 8 and 48 characters). So it runs in a folder whose path is
        # the same length on every machine, /tmp/sqlcipherkit-unfreed.XXXXXX (not TMPDIR, whose length varies).
        folder=$(mktemp -d /tmp/sqlcipherkit-unfreed.XXXXXX) || die "cannot create a folder in /tmp for $script"
        HARNESS_CLEANUP+=("$folder")
    fi
    RUN_STATUS=0
    # The tests write their databases (and SQLCipher's cipher log) into the working folder. The script path is given
    # whole: the tests find tester.tcl (and SQLCipher's sqlcipher-resources/) from it.
    # Through the space-free link (space_free_link): some tests break on paths with spaces.
    (cd "$folder" && env "$@" timeout "$UPSTREAM_TIMEOUT" ${RUN_PREFIX[@]+"${RUN_PREFIX[@]}"} "$WORK/up/testfixture" \
        "$WORK/up/seeded.tcl" "$UPSTREAM_SEED" "$WORK/up/src/$script") >"$log" 2>&1 </dev/null || RUN_STATUS=$?
    [ "$RUN_STATUS" != 124 ] || die "$script did not finish within ${UPSTREAM_TIMEOUT}s (log: $log; $(seed_note))"
    if ! grep -qE '^[0-9]+ errors out of [0-9]+ tests' "$log"; then
        tail -n 30 "$log" >&2
        die "no 'N errors out of M tests' line: $script did not finish (exit $RUN_STATUS, log: $log; $(seed_note))"
    fi
    seeded=$(grep -cE "$(seeded_line)" "$log" || true)
    [ "$seeded" = "$seedings" ] \
        || die "$script: Tcl's rand() was seeded $seeded times, $seedings expected (once per file sourced): a file ran unseeded, its random data not replayable (see write_seeded_tcl; log: $log)"
    local status=$RUN_STATUS
    if grep -E '^[0-9]+ errors out of [0-9]+ tests' "$log" | tail -n1 | grep -E '^0 errors ' >/dev/null && [ "$RUN_STATUS" = 1 ] \
        && memstatus_is_sole_failure "$script" "$log"; then
        note "$script: \"$(grep '^Unfreed memory: ' "$log")\" is its memory statistics being off (see MEMSTATUS_OFF_FILES), not a leak"
        status=0 RUN_STATUS=0
    fi
    match_failures "$log" "$expected" "$errors" "$status" && return 0
    grep -E '^!Failures on these tests:|files were left open$|^Unfreed memory: ' "$log" | cut -c1-2000 >&2 || true
    grep -E -B2 -A6 '^! ' "$log" | head -n 60 >&2 || true
    die "$script failed on the shipped engine ($RUN_ERRORS errors, exit $RUN_STATUS: $MATCH_PROBLEMS; log: $log; $(seed_note))"
}

# ------------------------------------------------------------------------------------- the list of tests ---

# The one file that lists SQLite's test files this build runs (with their counts), those left out (with why), and
# every upstream test, SQLite's or SQLCipher's, that differs on this build (with why). Its header gives the format.
TESTS_LIST=$ROOT/Tests/Upstream/sqlite-tests.txt

# The exact test names a differ line's TEST field stands for, one a line: the field itself, or its braces expanded
# as bash would ({a,b,c} each name; {N..M} and {N..M..STEP} each number), without a shell, and without globs: a field
# with *, ? or [ is refused (returns 1), so that a list entry can only name tests, never match what its reason does
# not explain. walcrash-7.{6..96..6}.{2,4} is walcrash-7.6.2, walcrash-7.6.4, walcrash-7.12.2, … walcrash-7.96.4.
expand_test_names() {
    local token=$1 prefix body rest item step
    [[ $token != *[\*\?\[]* ]] || return 1
    if [[ $token =~ ^([^{}]*)\{([^{}]*)\}(.*)$ ]]; then
        prefix=${BASH_REMATCH[1]} body=${BASH_REMATCH[2]} rest=${BASH_REMATCH[3]}
        if [[ $body =~ ^([0-9]+)\.\.([0-9]+)(\.\.([1-9][0-9]*))?$ ]]; then
            # Copied out first: the recursive calls' own matches overwrite BASH_REMATCH.
            local first=$((10#${BASH_REMATCH[1]})) last=$((10#${BASH_REMATCH[2]}))
            step=${BASH_REMATCH[4]:-1}
            [ "$first" -le "$last" ] || return 1
            for ((item = first; item <= last; item += step)); do
                expand_test_names "$prefix$item$rest" || return 1
            done
        elif [[ $body == *,* ]]; then
            local items=()
            IFS=, read -r -a items <<<"$body"
            for item in "${items[@]}"; do
                [ -n "$item" ] || return 1
                expand_test_names "$prefix$item$rest" || return 1
            done
        else
            return 1
        fi
    elif [[ $token == *[{}]* ]]; then
        return 1
    else
        printf '%s\n' "$token"
    fi
}

# Checks the list's lines (LIST, default TESTS_LIST; a control passes one of its own): each a comment, blank, or
# one of
#   run MODE FILE TESTS ERRORS   |   long MODE FILE TESTS ERRORS   |   differ MODE FILE TEST REASON…
#   leave MODE FILE REASON…      |   group PATTERN DESCRIPTION…
# (MODE plain or keyed; differ and leave also take all, and differ a "+root" suffix: only when run as root); no file
# both run and left out in one mode, nor run twice in one mode; every differ field expands to exact names (no glob),
# no name listed twice for a file and mode; a file's pinned ERRORS is 0 exactly when no test of it is listed, and
# at least the number of names listed for it (a name may fail more than once, never less than once).
check_tests_list() {
    local list=${1:-$TESTS_LIST}
    [ -f "$list" ] || die "$list is missing"
    local bad
    bad=$(awk '
        /^[[:space:]]*(#|$)/ { next }
        ($1 == "run" || $1 == "long") && NF == 5 && ($2 == "plain" || $2 == "keyed") && $4 ~ /^[0-9]+$/ && $5 ~ /^[0-9]+$/ {
            if (($2 " " $3) in run) printf "line %d: %s %s is run twice\n", NR, $2, $3
            run[$2 " " $3] = 1; next
        }
        $1 == "differ" && NF >= 5 && $2 ~ /^(plain|keyed|all)(\+root)?$/ { next }
        $1 == "leave" && NF >= 4 && ($2 == "plain" || $2 == "keyed" || $2 == "all") {
            if ($2 == "all") { left["plain " $3] = 1; left["keyed " $3] = 1 } else left[$2 " " $3] = 1
            next
        }
        $1 == "group" && NF >= 3 { next }
        { printf "line %d: %s\n", NR, $0 }
        END { for (f in run) if (f in left) printf "%s is both run and left out\n", f }' "$list")
    [ -z "$bad" ] || die "$list: malformed:"$'\n'"$bad"
    # Every differ field names exact tests, no name twice for a file and mode.
    local expanded duplicates
    expanded=$(expanded_differences "$list") || die "$list: $expanded"
    duplicates=$(cut -d' ' -f1-3 <<<"$expanded" | sed -E 's/^(plain|keyed|all)\+root /\1 /' | sort | uniq -d | head -n 5)
    [ -z "$duplicates" ] || die "$list: listed twice for one file and mode: $(tr '\n' ';' <<<"$duplicates")"
    # Each run entry's pinned errors against the names listed for it, as an unprivileged user and as root (the
    # +root names count only then): 0 exactly when no name is listed, and at least one error per name.
    bad=$(awk '
        FNR == NR {
            m = $1; r = sub(/\+root$/, "", m)
            if (m == "all") { n["plain " $2, r]++; n["keyed " $2, r]++ } else n[m " " $2, r]++
            next
        }
        ($1 == "run" || $1 == "long") {
            k = $2 " " $3; names = n[k, 0]; rootnames = names + n[k, 1]
            if ((names == 0) != ($5 == 0)) printf "%s %s pins %d errors with %d tests listed for it\n", $1, k, $5, names
            if ($5 < names) printf "%s %s pins %d errors, fewer than the %d tests listed for it (each fails at least once)\n", $1, k, $5, names
            if ((rootnames == 0) != ($5 + n[k, 1] == 0)) printf "%s %s as root: %d errors with %d tests listed\n", $1, k, $5 + n[k, 1], rootnames
        }' <(printf '%s\n' "$expanded") "$list")
    [ -z "$bad" ] || die "$list: $bad"
}

# Every differ line of LIST expanded, one test a line: "MODE FILE NAME" (MODE as written, +root included); fails,
# printing the line, if a TEST field is not an exact list of names (expand_test_names).
expanded_differences() {
    local list=$1 kind mode file token names
    while read -r kind mode file token _; do
        [ "$kind" = differ ] || continue
        names=$(expand_test_names "$token") && [ -n "$names" ] || {
            echo "differ $mode $file $token: not an exact test name nor a {a,b}/{N..M..STEP} list of them (no *, ? or [: a list entry names the tests its reason explains, and only those)"
            return 1
        }
        sed "s|^|$mode $file |" <<<"$names"
    done < <(sed -E 's/^[[:space:]]+//' "$list" | grep -E '^differ ')
}

# The tests listed as differing for FILE (a path under the tarball) in MODE (plain, keyed, or own: SQLCipher's
# files, which key their own connections), exact names, space-separated: the entries of that mode and those marked
# all, expanded (expand_test_names), and those marked +root only when this runs as root (a test that needs an
# unprivileged user to make a file read-only fails as root and passes otherwise).
listed_differences() {
    local root=0 token
    [ "$(id -u)" != 0 ] || root=1
    while IFS= read -r token; do
        expand_test_names "$token" || die "$TESTS_LIST: differ … $2 $token: not an exact list of test names"
    done < <(awk -v mode="$1" -v file="$2" -v root="$root" '
        $1 == "differ" && $3 == file {
            m = $2
            if (sub(/\+root$/, "", m) && !root) next
            if (m == mode || m == "all") print $4
        }' "$TESTS_LIST") | sort -u | tr '\n' ' '
}

# How many of the names listed for FILE in MODE are +root entries: each fails once more when root runs it.
listed_root_count() {
    local token count=0
    while IFS= read -r token; do
        count=$((count + $(expand_test_names "$token" | wc -l)))
    done < <(awk -v mode="$1" -v file="$2" '
        $1 == "differ" && $3 == file && $2 ~ /\+root$/ { m = $2; sub(/\+root$/, "", m); if (m == mode || m == "all") print $4 }' \
        "$TESTS_LIST")
    echo "$count"
}

# The errors pinned for FILE in MODE: the run (or long) line's ERRORS, plus one for each +root name when root runs.
pinned_errors() {
    local errors root=0
    [ "$(id -u)" != 0 ] || root=1
    errors=$(awk -v mode="$1" -v file="$2" '($1 == "run" || $1 == "long") && $2 == mode && $3 == file { print $5 }' \
        "$TESTS_LIST")
    [ -n "$errors" ] || die "$TESTS_LIST has no run line for $1 $2"
    echo $((errors + (root ? $(listed_root_count "$1" "$2") : 0)))
}
