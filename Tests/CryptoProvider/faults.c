// Fault injection into SQLCipherKit's crypto provider (BuildSupport/engine/sqlcipherkit_provider.c, compiled here
// with -DSQLCIPHERKIT_PROVIDER_FAULTS): OpenSSL failing where the provider calls it, on a real database, and what
// a user sees. SQLCipherKit's own file; run by Tests/CryptoProvider/run-faults.sh (CryptoProviderTests).
//
// How it is built: as differential.c, the amalgamation generated from the pinned tarball without SQLCipherKit's
// provider, then the provider's source as it is in the checkout; only SQLCipherKit's provider is registered
// (-DSQLCIPHER_CRYPTO_CUSTOM=sqlcipherkit_openssl_setup, no SQLCIPHER_CRYPTO_OPENSSL).
//
//   faults fetch DIR               AES cannot be fetched (as on a system whose OpenSSL does not serve it):
//                                  sqlite3_initialize, :memory: and a plaintext file work; keying an encrypted
//                                  database fails, and nothing is written
//   faults KIND N write|read DIR   the N-th call of KIND (update, final, rekey, random, hmac) fails during a
//                                  write transaction (or a read); prints what the statement returned, whether
//                                  the same connection still works after the fault (it must not), and what a
//                                  new connection finds: the state before the transaction, intact
//   faults random-init DIR         no random bytes at sqlite3_initialize: it fails cleanly; then plaintext works
//                                  and keying fails, saying why
//   faults none 0 write|read DIR   the control: the same run with no fault (the checks above must then fail)
//
// Every run prints "RESULT ok" or "RESULT FAIL: why" last; the exit status is 0 only for "RESULT ok".
#include "sqlite3.c"
#include "sqlcipherkit_provider.c"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 300
#define MARKER "FAULT-INJECTION-PLAINTEXT-MARKER"
// A raw key (no PBKDF2: each run opens the database four times).
static const char key[] = "x'2DD29CA851E7B56E4697B0E1F08507293D761A05CE4D1B628663F411A8086D99'";

static int fail(const char *why) {
    printf("RESULT FAIL: %s\n", why);
    return 1;
}

static int exec(sqlite3 *db, const char *sql) { return sqlite3_exec(db, sql, NULL, NULL, NULL); }

// Opens DIR/test.db keyed; NULL (and why, printed) when it cannot.
static sqlite3 *open_keyed(const char *dir, int *rc_out) {
    char path[4096];
    sqlite3 *db = NULL;
    snprintf(path, sizeof path, "%s/test.db", dir);
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK) rc = sqlite3_key_v2(db, "main", key, (int)strlen(key));
    if (rc_out) *rc_out = rc;
    if (rc != SQLITE_OK) {
        printf("open: rc %d (%s): %s\n", rc, sqlite3_errstr(rc), db ? sqlite3_errmsg(db) : "no connection");
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

// count(*) and total length of t, or -1 with the error printed.
static long long state(sqlite3 *db, const char *label) {
    sqlite3_stmt *stmt = NULL;
    long long value = -1;
    int rc = sqlite3_prepare_v2(db, "SELECT count(*) * 1000000 + sum(length(x)) FROM t", -1, &stmt, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) value = sqlite3_column_int64(stmt, 0);
    if (value < 0) printf("%s: rc %d (%s): %s\n", label, rc, sqlite3_errstr(rc), sqlite3_errmsg(db));
    sqlite3_finalize(stmt);
    return value;
}

// Whether any file in DIR holds MARKER (plaintext on disk).
static int plaintext_on_disk(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *entry;
    int found = 0;
    while (d && (entry = readdir(d)) != NULL && !found) {
        char path[4096];
        if (entry->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        static char buffer[1 << 20];
        size_t n, carry = 0, m = strlen(MARKER);
        while ((n = fread(buffer + carry, 1, sizeof buffer - carry, f)) > 0) {
            n += carry;
            for (size_t i = 0; i + m <= n; i++)
                if (memcmp(buffer + i, MARKER, m) == 0) { printf("plaintext marker in %s\n", entry->d_name); found = 1; break; }
            carry = n < m ? n : m - 1;
            memmove(buffer, buffer + n - carry, carry);
        }
        fclose(f);
    }
    if (d) closedir(d);
    return found;
}

static int integrity(sqlite3 *db) {
    sqlite3_stmt *stmt = NULL;
    int ok = sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, NULL) == SQLITE_OK
             && sqlite3_step(stmt) == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(stmt, 0), "ok") == 0;
    sqlite3_finalize(stmt);
    if (ok && sqlite3_prepare_v2(db, "PRAGMA cipher_integrity_check", -1, &stmt, NULL) == SQLITE_OK) {
        ok = sqlite3_step(stmt) == SQLITE_DONE; // no rows: every page's HMAC verified
        sqlite3_finalize(stmt);
    }
    return ok;
}

static int fault_kind(const char *name) {
    static const char *names[] = {"none", "fetch", "update", "final", "rekey", "random", "hmac"};
    for (int i = 0; i < (int)(sizeof names / sizeof *names); i++)
        if (strcmp(name, names[i]) == 0) return i;
    return -1;
}

// fetch: AES cannot be fetched, from before sqlite3_initialize on.
static int run_fetch(const char *dir) {
    char path[4096];
    sqlite3 *db = NULL;
    sqlcipherkit_fault_arm(SQLCIPHERKIT_FAULT_FETCH, 1);
    if (sqlite3_initialize() != SQLITE_OK) return fail("sqlite3_initialize failed: every SQLite call would");
    if (sqlite3_open(":memory:", &db) != SQLITE_OK || exec(db, "CREATE TABLE m(x); INSERT INTO m VALUES (1)") != SQLITE_OK)
        return fail(":memory: does not work");
    sqlite3_close(db);
    snprintf(path, sizeof path, "%s/plain.db", dir);
    if (sqlite3_open(path, &db) != SQLITE_OK || exec(db, "CREATE TABLE p(x); INSERT INTO p VALUES (1)") != SQLITE_OK)
        return fail("a plaintext file does not work");
    sqlite3_close(db);
    if (sqlcipherkit_fault_hit_count() != 0) return fail("the fetch fault was spent before any encrypted open");
    int rc = SQLITE_OK;
    db = open_keyed(dir, &rc);
    if (db != NULL) {
        // The keying took: the fault was not reached (the control) or the provider did not fail the open.
        int write_rc = exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES ('" MARKER "')");
        printf("open: rc 0, then a write: rc %d (%s)\n", write_rc, sqlite3_errmsg(db));
        sqlite3_close(db);
        return fail("keying an encrypted database succeeded without AES");
    }
    printf("fetch fault hit %ld time(s); keying returned rc %d (%s); sqlcipherkit_provider_unavailable() = %d\n",
           sqlcipherkit_fault_hit_count(), rc, sqlite3_errstr(rc), sqlcipherkit_provider_unavailable());
    if (!sqlcipherkit_provider_unavailable()) return fail("the provider does not say AES is unavailable");
    snprintf(path, sizeof path, "%s/test.db", dir);
    FILE *f = fopen(path, "rb");
    long size = 0;
    if (f) { fseek(f, 0, SEEK_END); size = ftell(f); fclose(f); }
    printf("test.db after the failed open: %ld bytes\n", size);
    if (size != 0) return fail("the failed encrypted open wrote to the file");
    printf("RESULT ok\n");
    return 0;
}

// random-init: OpenSSL gives no random bytes when SQLCipher initialises (FIPS default properties without a FIPS
// module: no DRBG). SQLCipher cannot set itself up without them, for either provider: the first sqlite3_initialize
// must fail, cleanly (the pinned SQLCipher's error path would use its freed provider table if the context had been
// returned). SQLite then counts itself initialised: plaintext databases open, and every keying fails, with
// sqlcipherkit_provider_unavailable() saying why.
static int run_random_init(const char *dir) {
    sqlite3 *db = NULL;
    sqlcipherkit_fault_arm(SQLCIPHERKIT_FAULT_RANDOM, 1);
    int rc = sqlite3_initialize();
    printf("random fault hit %ld time(s); sqlite3_initialize returned rc %d (%s)\n", sqlcipherkit_fault_hit_count(),
           rc, sqlite3_errstr(rc));
    if (sqlcipherkit_fault_hit_count() != 1) return fail("the fault was not reached");
    if (rc == SQLITE_OK) return fail("SQLCipher initialised without random bytes");
    if (sqlite3_open(":memory:", &db) != SQLITE_OK || exec(db, "CREATE TABLE m(x); INSERT INTO m VALUES (1)") != SQLITE_OK)
        return fail("after the failed initialisation :memory: does not work");
    sqlite3_close(db);
    int key_rc = SQLITE_OK;
    db = open_keyed(dir, &key_rc);
    printf("then: :memory: works; keying returns rc %d; sqlcipherkit_provider_unavailable() = %d\n", key_rc,
           sqlcipherkit_provider_unavailable());
    if (db != NULL) { sqlite3_close(db); return fail("keying succeeded although SQLCipher is not initialised"); }
    if (!sqlcipherkit_provider_unavailable()) return fail("the provider does not say why keying fails");
    printf("RESULT ok\n");
    return 0;
}

static int run_fault(int kind, long n, int writing, const char *wal, const char *dir) {
    sqlite3 *db;
    long long before, after;
    char sql[256];
    // The database before: ROWS rows holding the marker, encrypted; its state read back.
    if ((db = open_keyed(dir, NULL)) == NULL) return fail("preparing: open");
    snprintf(sql, sizeof sql, "PRAGMA journal_mode = %s", wal);
    if (exec(db, sql) != SQLITE_OK || exec(db, "CREATE TABLE t(x)") != SQLITE_OK) return fail("preparing: schema");
    exec(db, "BEGIN");
    for (int i = 0; i < ROWS; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO t VALUES ('%s %d %0120d')", MARKER, i, i);
        if (exec(db, sql) != SQLITE_OK) return fail("preparing: insert");
    }
    if (exec(db, "COMMIT") != SQLITE_OK || (before = state(db, "preparing")) < 0) return fail("preparing: commit");
    sqlite3_close(db);

    // The fault: a new connection, the N-th call of KIND failing from here on.
    if ((db = open_keyed(dir, NULL)) == NULL) return fail("open before the fault");
    sqlcipherkit_fault_arm(kind, n);
    int rc;
    if (writing) {
        rc = exec(db, "BEGIN");
        for (int i = 0; rc == SQLITE_OK && i < ROWS; i++) {
            snprintf(sql, sizeof sql, "INSERT INTO t VALUES ('%s new %d %0120d')", MARKER, i, i);
            rc = exec(db, sql);
        }
        if (rc == SQLITE_OK) rc = exec(db, "UPDATE t SET x = x || ' updated' WHERE rowid % 3 = 0");
        if (rc == SQLITE_OK) rc = exec(db, "COMMIT");
        if (rc == SQLITE_OK) rc = exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    } else {
        rc = state(db, "read") < 0 ? sqlite3_errcode(db) : SQLITE_OK;
    }
    long hits = sqlcipherkit_fault_hit_count();
    sqlcipherkit_fault_arm(SQLCIPHERKIT_FAULT_NONE, 0);
    printf("fault %s #%ld during a %s (%s): hit %ld; the statement returned rc %d (%s): %s\n",
           kind == SQLCIPHERKIT_FAULT_NONE ? "none" : "armed", n, writing ? "write" : "read", wal, hits, rc,
           sqlite3_errstr(rc), sqlite3_errmsg(db));
    int failed = sqlcipherkit_provider_failed(db);
    printf("sqlcipherkit_provider_failed(connection) = %d\n", failed);
    if (hits == 0) { sqlite3_close(db); return fail("the fault was never reached"); }
    if (rc == SQLITE_OK) { sqlite3_close(db); return fail("the statement succeeded although the provider failed"); }
    // What lets the Swift layer say "the crypto provider failed" rather than SQLite's guess.
    if (!failed) { sqlite3_close(db); return fail("the connection does not record the provider's failure"); }
    // The same connection, the fault gone: it must stay unusable (SQLCipher's pager error and the provider's).
    after = state(db, "the same connection after the fault");
    int rc2 = exec(db, "INSERT INTO t VALUES ('" MARKER " after the fault')");
    printf("the same connection after the fault: read %s, write rc %d (%s)\n", after < 0 ? "fails" : "WORKS", rc2,
           sqlite3_errstr(rc2));
    sqlite3_close(db);
    if (after >= 0 || rc2 == SQLITE_OK) return fail("the connection kept working after a provider failure");

    // Nothing written: no plaintext anywhere, and a new connection finds the state before, intact.
    if (plaintext_on_disk(dir)) return fail("plaintext on disk");
    if ((db = open_keyed(dir, NULL)) == NULL) return fail("reopening after the fault");
    after = state(db, "reopened");
    int intact = integrity(db);
    if (sqlcipherkit_provider_failed(db)) { sqlite3_close(db); return fail("a new connection reports a failure"); }
    sqlite3_close(db);
    printf("reopened: state %s the one before; integrity_check and cipher_integrity_check: %s\n",
           after == before ? "equals" : "DIFFERS FROM", intact ? "ok" : "FAILED");
    if (after != before) return fail("the database changed");
    if (!intact) return fail("the database is not intact");
    printf("RESULT ok\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "fetch") == 0) return run_fetch(argv[2]);
    if (argc == 3 && strcmp(argv[1], "random-init") == 0) return run_random_init(argv[2]);
    int kind = argc >= 5 ? fault_kind(argv[1]) : -1;
    if (kind < 0 || kind == SQLCIPHERKIT_FAULT_FETCH || (strcmp(argv[3], "write") != 0 && strcmp(argv[3], "read") != 0)) {
        fprintf(stderr, "usage: faults fetch DIR | faults none|update|final|rekey|random|hmac N write|read DIR [wal]\n");
        return 64;
    }
    if (sqlite3_initialize() != SQLITE_OK) return fail("sqlite3_initialize");
    return run_fault(kind, atol(argv[2]), strcmp(argv[3], "write") == 0, argc > 5 ? argv[5] : "delete", argv[4]);
}
