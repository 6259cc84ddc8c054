// Tests/Upstream/harness/sqlcipherkit_harness.c: SQLCipherKit's own part of the test harness (testfixture) that
// Tests/Upstream/harness.sh builds from the shipped, locally-changed amalgamation. Compiled into that harness only,
// never into the engine an application links. SQLCipherKit's own code (MIT), not SQLite's or SQLCipher's.
//
// The engine object is compiled with -DSQLITE_EXTRA_INIT=sqlcipherkit_harness_extra_init (harness.sh's
// HARNESS_ENGINE_FLAGS) in place of the pin's -DSQLITE_EXTRA_INIT=sqlcipher_extra_init: sqlite3_initialize() then
// calls the function at the end of this file every time it initializes the library, which calls SQLCipher's own
// initialization first, unchanged (its name is given as SQLCIPHERKIT_ENGINE_EXTRA_INIT when this file is compiled),
// then registers one automatic extension, run on every connection opened after it, after SQLCipher's own (which
// defines sqlcipher_export()). Why at every initialization and not once: sqlite3_shutdown() drops every automatic
// extension (sqlite3_reset_auto_extension), and SQLite's test files shut the library down and start it again often
// (tester.tcl at the start of every file, crashsql's child process at its start). Why not SQLite's other hook,
// SQLITE_EXTRA_INIT_MUTEXED, which would leave the pin's flag alone: it runs before initialization is complete, and
// sqlite3_auto_extension() allocates while holding the main mutex; the allocation starts the initialization again,
// which waits for that same mutex (seen: testfixture hung at start-up, in sqlite3_realloc64 under
// sqlite3_auto_extension under SQLITE_EXTRA_INIT_MUTEXED).
//
// What the extension does on each new connection is asked for by environment variables, each off when unset, so
// that a plain run of SQLite's test files sees the engine exactly as shipped:
//
//   SQLCIPHERKIT_HARNESS_EXPORT=1
//       Permits sqlcipher_export() for SQLCipher's own test files. The shipped engine's local change
//       "sqlcipher-export-gate" makes sqlcipher_export() refuse unless the connection's client data
//       "sqlcipherkit_export" is set, and takes that permit on entry (one permit, one call); only SQLCipherKit's
//       typed API sets it. SQLCipher's tests call the function from SQL, so this grants the permit before each
//       statement runs (sqlite3_trace_v2, SQLITE_TRACE_STMT, which also fires when a cached statement runs again)
//       and when a statement naming the function is prepared (the authorizer, SQLITE_FUNCTION). Two hooks because
//       a connection has one slot for each: a test that installs its own trace (`db trace`; sqlcipher-
//       compatibility.test's verify-cipher-export-with-trace-configured does) replaces the first, and one that
//       installs its own authorizer (`db authorizer`) replaces the second. A test that replaces both and then
//       exports would see the gate refuse; none does. The engine's code is not changed: the gate is exercised as
//       shipped, only opened by the C API as SQLCipherKit's own export opens it.
//
//   SQLCIPHERKIT_HARNESS_KEY=KEY
//       Keys every connection whose main database is a file (sqlite3_key_v2 on "main", before the first
//       statement) with KEY, a passphrase or a raw key x'…' (run-sqlite-tests.sh passes a raw one: no key
//       derivation per connection), so that SQLite's own tests, the crash tests above all, run on encrypted
//       databases. The crash tests' child processes are this same program with the same environment, so they are
//       keyed alike. A database ATTACHed without KEY takes the main database's key material (SQLCipher's rule: it
//       opens files created attached to that main database), so attached files are encrypted too. In-memory and
//       temporary databases (an empty file name) are not keyed: there is no file for a key to protect (temporary
//       storage is in memory, SQLITE_TEMP_STORE=3). The connections keyed are counted (sqlcipherkit_harness_facts).
//
//   SQLCIPHERKIT_HARNESS_FACTS=1
//       Registers the SQL function sqlcipherkit_harness_facts(), which returns what harness.sh's check reads:
//       "local_changes=NAMES;provider=NAME;keyed=N", NAMES from the engine's own sqlcipherkit_local_changes()
//       (BuildSupport/local_changes.py appends it to the generated amalgamation; "(none)" for a harness built from
//       upstream's unchanged output, which lacks it), NAME "sqlcipherkit" when SQLCipherKit's provider is compiled
//       in (its set-up function is defined), "reference" when SQLCipher's own OpenSSL provider is (PRAGMA
//       cipher_provider says "openssl" for both), N the connections this process keyed so far.
#include <stdlib.h>
#include <string.h>

#include "sqlite3.h"

#ifndef SQLITE_HAS_CODEC
#error "compile with the engine's flags (-DSQLITE_HAS_CODEC ...): the harness keys connections with sqlite3_key_v2"
#endif

// Defined by the engine only when it carries local changes, and only one of the two providers is compiled in:
// weak references read as null when absent, so the same file links with every amalgamation.
extern const char *sqlcipherkit_local_changes(void) __attribute__((weak));
extern int sqlcipherkit_openssl_setup(void *provider) __attribute__((weak));
extern int sqlcipher_openssl_setup(void *provider) __attribute__((weak));

// The client data name the engine's export gate reads (BuildSupport/engine/local-changes/sqlcipher-export-gate.change).
#define EXPORT_PERMIT "sqlcipherkit_export"

static int keyed_connections = 0;

static int env_on(const char *name) {
    const char *value = getenv(name);
    return value != NULL && strcmp(value, "1") == 0;
}

static void grant_export_permit(sqlite3 *db) {
    // Any non-null pointer is a permit; the gate removes it when it takes it.
    sqlite3_set_clientdata(db, EXPORT_PERMIT, (void *)db, NULL);
}

static int permit_on_statement(unsigned type, void *db, void *statement, void *sql) {
    (void)type, (void)statement, (void)sql;
    grant_export_permit((sqlite3 *)db);
    return 0;
}

static int permit_on_prepare(void *db, int action, const char *arg1, const char *function, const char *schema,
                             const char *trigger) {
    (void)arg1, (void)schema, (void)trigger;
    if (action == SQLITE_FUNCTION && function != NULL && sqlite3_stricmp(function, "sqlcipher_export") == 0) {
        grant_export_permit((sqlite3 *)db);
    }
    return SQLITE_OK;
}

static void harness_facts(sqlite3_context *context, int argc, sqlite3_value **argv) {
    (void)argc, (void)argv;
    const char *changes = sqlcipherkit_local_changes ? sqlcipherkit_local_changes() : "(none)";
    const char *provider = sqlcipherkit_openssl_setup ? "sqlcipherkit"
                           : sqlcipher_openssl_setup  ? "reference"
                                                      : "(unknown)";
    char *facts = sqlite3_mprintf("local_changes=%s;provider=%s;keyed=%d", changes[0] ? changes : "(none)", provider,
                                  keyed_connections);
    if (facts == NULL) {
        sqlite3_result_error_nomem(context);
        return;
    }
    sqlite3_result_text(context, facts, -1, sqlite3_free);
}

static int harness_connection(sqlite3 *db, char **error, const void *api) {
    (void)api;
    int rc = SQLITE_OK;
    const char *key = getenv("SQLCIPHERKIT_HARNESS_KEY");
    const char *file = sqlite3_db_filename(db, "main");
    if (key != NULL && key[0] != '\0' && file != NULL && file[0] != '\0') {
        rc = sqlite3_key_v2(db, "main", key, (int)strlen(key));
        if (rc != SQLITE_OK) {
            *error = sqlite3_mprintf("sqlcipherkit_harness: keying %s failed (%d)", file, rc);
            return rc;
        }
        __atomic_add_fetch(&keyed_connections, 1, __ATOMIC_RELAXED);
    }
    if (env_on("SQLCIPHERKIT_HARNESS_EXPORT")) {
        sqlite3_trace_v2(db, SQLITE_TRACE_STMT, permit_on_statement, db);
        sqlite3_set_authorizer(db, permit_on_prepare, db);
    }
    if (env_on("SQLCIPHERKIT_HARNESS_FACTS")) {
        rc = sqlite3_create_function_v2(db, "sqlcipherkit_harness_facts", 0, SQLITE_UTF8, NULL, harness_facts, NULL,
                                        NULL, NULL);
    }
    return rc;
}

// The harness's test1.c calls sqlite3_carray_bind() and sqlite3_carray_bind_v2() (its Tcl command
// sqlite3_carray_bind) whatever the engine holds, but the engine defines them only under SQLITE_ENABLE_CARRAY, which
// the shipped engine does not set. Rather than add a feature to the engine under test, these stand in and refuse,
// as the shipped engine has no carray(): weak, so an engine that does define them wins. No test file the harness
// runs binds a carray (the carray*.test files are not among them).
__attribute__((weak)) int sqlite3_carray_bind_v2(sqlite3_stmt *statement, int index, void *data, int count,
                                                 int flags, void (*destructor)(void *), void *destructor_argument) {
    (void)statement, (void)index, (void)data, (void)count, (void)flags;
    if (destructor != NULL && destructor != SQLITE_STATIC && destructor != SQLITE_TRANSIENT) {
        destructor(destructor_argument);
    }
    return SQLITE_ERROR;
}

__attribute__((weak)) int sqlite3_carray_bind(sqlite3_stmt *statement, int index, void *data, int count, int flags,
                                              void (*destructor)(void *)) {
    return sqlite3_carray_bind_v2(statement, index, data, count, flags, destructor, data);
}

#ifndef SQLCIPHERKIT_ENGINE_EXTRA_INIT
#error "compile with -DSQLCIPHERKIT_ENGINE_EXTRA_INIT=the pin's SQLITE_EXTRA_INIT value (harness.sh does)"
#endif
int SQLCIPHERKIT_ENGINE_EXTRA_INIT(const char *argument);

// SQLITE_EXTRA_INIT of the harness's engine: SQLCipher's initialization, then the harness's automatic extension.
// By now the library is initialized (SQLite calls this hook after marking it so, outside its mutexes), so
// sqlite3_auto_extension() may allocate; registering the same function twice is a no-op.
int sqlcipherkit_harness_extra_init(const char *argument) {
    int rc = SQLCIPHERKIT_ENGINE_EXTRA_INIT(argument);
    if (rc != SQLITE_OK) return rc;
    return sqlite3_auto_extension((void (*)(void))harness_connection);
}
