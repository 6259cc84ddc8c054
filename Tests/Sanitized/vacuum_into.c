/*
 * vacuum_into.c: issue 43's reproduction, in C, for Tests/Sanitized/run-sanitized.sh. Creates an encrypted database
 * at DIR/main.db with cipher page size PAGE_SIZE (a raw key: no key derivation), fills it, then runs
 * `PRAGMA cache_size = 3; VACUUM INTO 'DIR/copy.db'` and reopens the copy with the same key and page size.
 *
 *   vacuum_into DIR PAGE_SIZE
 *
 * Exits 0 when the copy opens and holds every row; 1 when a step fails (the message on stderr); a sanitizer report
 * aborts first. Linked against the sanitizer-built engine with SQLCipherKit's local changes it must exit 0; against
 * upstream's amalgamation (sqlite3.upstream.c, the same flags) AddressSanitizer must report the heap overflow (page
 * size 1024) or the read past the codec's buffer (65536): the control that shows the sanitizers see this bug.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3.h"

static const char KEY[] = "x'00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff'";

static int fail(sqlite3 *db, const char *what) {
    fprintf(stderr, "vacuum_into: %s: %s\n", what, db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_close(db);
    return 1;
}

static sqlite3 *open_keyed(const char *path, int page_size) {
    sqlite3 *db = NULL;
    char pragma[64];
    if (sqlite3_open(path, &db) != SQLITE_OK) return db;
    sqlite3_key(db, KEY, (int)strlen(KEY));
    snprintf(pragma, sizeof pragma, "PRAGMA cipher_page_size = %d", page_size);
    sqlite3_exec(db, pragma, NULL, NULL, NULL);
    return db;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR PAGE_SIZE\n", argv[0]);
        return 2;
    }
    int page_size = atoi(argv[2]);
    char main_path[4096], copy_path[4096], sql[8192];
    snprintf(main_path, sizeof main_path, "%s/main.db", argv[1]);
    snprintf(copy_path, sizeof copy_path, "%s/copy.db", argv[1]);
    sqlite3 *db = open_keyed(main_path, page_size);
    if (sqlite3_exec(db, "CREATE TABLE t(x); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                         "WHERE i < 2000) INSERT INTO t SELECT printf('row-%05d-%0400d', i, i) FROM n",
                     NULL, NULL, NULL) != SQLITE_OK)
        return fail(db, "filling the database");
    snprintf(sql, sizeof sql, "PRAGMA cache_size = 3; VACUUM INTO '%s'", copy_path);
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) return fail(db, "VACUUM INTO");
    sqlite3_close(db);
    db = open_keyed(copy_path, page_size);
    sqlite3_stmt *count = NULL;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &count, NULL) != SQLITE_OK ||
        sqlite3_step(count) != SQLITE_ROW)
        return fail(db, "reading the copy with its key and page size");
    int rows = sqlite3_column_int(count, 0);
    sqlite3_finalize(count);
    sqlite3_close(db);
    if (rows != 2000) {
        fprintf(stderr, "vacuum_into: the copy holds %d rows, not 2000\n", rows);
        return 1;
    }
    printf("vacuum_into: page size %d: the copy opens with its key and page size and holds 2000 rows\n", page_size);
    return 0;
}
