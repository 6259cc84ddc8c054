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
