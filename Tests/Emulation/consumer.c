/* Tests/Emulation/consumer.c: a C app on SQLCipherEngine.artifactbundle's SQLCipher C API only, built once per
 * architecture from the bundle's variant for that triple (run-aarch64.sh: aarch64 under qemu-user-static, and
 * natively), so that files can be exchanged between the two.
 *
 *   consumer selfcheck                 prints the machine, cipher_version, provider, cipher_status; exit 0 only
 *                                      when the engine is SQLCipher and a keyed connection encrypts
 *   consumer write DB KEY MARKER ROWS  creates DB (encrypted with passphrase KEY): ROWS rows holding MARKER
 *   consumer read DB KEY MARKER ROWS   opens DB with KEY: cipher_status 1, integrity ok, exactly ROWS rows of MARKER
 *   consumer wrongkey DB KEY           exit 0 only when opening DB with KEY is refused (SQLITE_NOTADB)
 *
 * Every failure prints a FAIL line and exits 1. The key is never put in SQL text (sqlite3_key_v2). */
#include "SQLCipherEngine.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

/* SQLCipherKit's crypto glue in the engine archive: the provider compiled in. */
const char *sqlcipherkit_crypto_provider(void);

static int fail(const char *what, sqlite3 *db) {
    printf("FAIL: %s%s%s\n", what, db ? ": " : "", db ? sqlite3_errmsg(db) : "");
    return 1;
}

static int open_keyed(const char *path, const char *key, int flags, sqlite3 **db) {
    if (sqlite3_open_v2(path, db, flags, NULL) != SQLITE_OK) return 0;
    return sqlite3_key_v2(*db, "main", key, (int)strlen(key)) == SQLITE_OK;
}

/* The first column of the first row of sql as text into out (empty when no row); 0 on an error. */
static int one_text(sqlite3 *db, const char *sql, char *out, size_t size) {
    sqlite3_stmt *stmt;
    int rc;
    out[0] = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK) return 0;
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && sqlite3_column_text(stmt, 0))
        snprintf(out, size, "%s", (const char *)sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    return rc == SQLITE_ROW || rc == SQLITE_DONE;
}

static int selfcheck(void) {
    sqlite3 *db;
    struct utsname machine;
    char version[128], provider[128], provider_version[128], status[16];
    if (uname(&machine) != 0) return fail("uname", NULL);
    printf("machine: %s\n", machine.machine);
    if (!open_keyed(":memory:", "consumer self-check", SQLITE_OPEN_READWRITE, &db)) return fail("open", db);
    if (!one_text(db, "PRAGMA cipher_version", version, sizeof version) || !version[0])
        return fail("PRAGMA cipher_version returned no row: the engine is not SQLCipher", db);
    one_text(db, "PRAGMA cipher_provider", provider, sizeof provider);
    one_text(db, "PRAGMA cipher_provider_version", provider_version, sizeof provider_version);
    if (!one_text(db, "PRAGMA cipher_status", status, sizeof status)) return fail("PRAGMA cipher_status", db);
    printf("cipher_version: %s\ncipher_provider: %s (%s)\ncrypto_provider: %s\ncipher_status: %s\nsqlite: %s\n",
           version, provider, provider_version, sqlcipherkit_crypto_provider(), status, sqlite3_libversion());
    sqlite3_close(db);
    if (strcmp(status, "1") != 0) return fail("cipher_status is not 1: a keyed connection does not encrypt", NULL);
    return 0;
}

static int write_db(const char *path, const char *key, const char *marker, int rows) {
    sqlite3 *db;
    sqlite3_stmt *stmt;
    int i;
    if (!open_keyed(path, key, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db)) return fail("open", db);
    if (sqlite3_exec(db, "CREATE TABLE t(n INTEGER PRIMARY KEY, v TEXT, r REAL); BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return fail("create", db);
    if (sqlite3_prepare_v2(db, "INSERT INTO t(n, v, r) VALUES (?, ?, ?)", -1, &stmt, NULL) != SQLITE_OK)
        return fail("prepare", db);
    for (i = 0; i < rows; i++) {
        sqlite3_bind_int(stmt, 1, i);
        sqlite3_bind_text(stmt, 2, marker, -1, SQLITE_STATIC);
        sqlite3_bind_double(stmt, 3, i / 8.0);
        if (sqlite3_step(stmt) != SQLITE_DONE) return fail("insert", db);
        sqlite3_reset(stmt);
    }
    sqlite3_finalize(stmt);
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) return fail("commit", db);
    if (sqlite3_close(db) != SQLITE_OK) return fail("close", db);
    printf("wrote %d rows\n", rows);
    return 0;
}

static int read_db(const char *path, const char *key, const char *marker, int rows) {
    sqlite3 *db;
    char text[64], sql[256];
    if (!open_keyed(path, key, SQLITE_OPEN_READONLY, &db)) return fail("open", db);
    if (!one_text(db, "PRAGMA integrity_check", text, sizeof text) || strcmp(text, "ok") != 0)
        return fail("integrity_check", db);
    if (!one_text(db, "PRAGMA cipher_status", text, sizeof text) || strcmp(text, "1") != 0)
        return fail("cipher_status is not 1", db);
    sqlite3_snprintf(sizeof sql, sql, "SELECT count(*) FROM t WHERE v = %Q AND r = n / 8.0", marker);
    if (!one_text(db, sql, text, sizeof text) || atoi(text) != rows) return fail("the rows do not read back", db);
    printf("read back %s rows\n", text);
    sqlite3_close(db);
    return 0;
}

static int wrong_key(const char *path, const char *key) {
    sqlite3 *db;
    int rc;
    if (!open_keyed(path, key, SQLITE_OPEN_READONLY, &db)) return fail("open", db);
    rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_schema", NULL, NULL, NULL);
    sqlite3_close(db);
    if (rc != SQLITE_NOTADB) return fail("a wrong key was not refused with SQLITE_NOTADB", NULL);
    printf("wrong key refused\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "selfcheck") == 0) return selfcheck();
    if (argc == 6 && strcmp(argv[1], "write") == 0) return write_db(argv[2], argv[3], argv[4], atoi(argv[5]));
    if (argc == 6 && strcmp(argv[1], "read") == 0) return read_db(argv[2], argv[3], argv[4], atoi(argv[5]));
    if (argc == 4 && strcmp(argv[1], "wrongkey") == 0) return wrong_key(argv[2], argv[3]);
    fprintf(stderr, "usage: consumer selfcheck | write|read DB KEY MARKER ROWS | wrongkey DB KEY\n");
    return 64;
}
