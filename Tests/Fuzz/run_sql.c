/*
 * run_sql.c: runs SQL on a fresh in-memory database of the engine fuzz.sh builds (the generated amalgamation
 * with the pin's flags, ASan and UBSan), lookaside and the page-cache bulk allocation off so that every object
 * SQLite allocates is its own heap block and AddressSanitizer sees a read one byte past it. The minimal
 * reproducer of the reports in known-issues/: `Tests/Fuzz/fuzz.sh --sql 'SQL'`.
 *
 * Prints each result row; exits 0 when every statement ran (a sanitizer report aborts first), 1 on an error.
 */
#include <stdio.h>

#include "sqlite3.h"

static int print_row(void *unused, int count, char **values, char **names) {
    (void)unused;
    for (int i = 0; i < count; i++) printf("%s%s=%s", i ? " " : "", names[i], values[i] ? values[i] : "NULL");
    printf("\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s 'SQL'\n", argv[0]);
        return 2;
    }
    sqlite3_config(SQLITE_CONFIG_LOOKASIDE, 0, 0);
    sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
    sqlite3 *db = NULL;
    char *error = NULL;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
        fprintf(stderr, "run_sql: cannot open an in-memory database\n");
        return 1;
    }
    int rc = sqlite3_exec(db, argv[1], print_row, NULL, &error);
    if (rc != SQLITE_OK) fprintf(stderr, "run_sql: %s\n", error ? error : sqlite3_errstr(rc));
    sqlite3_free(error);
    sqlite3_close(db);
    printf("run_sql: SQLite %s: %s\n", sqlite3_libversion(), rc == SQLITE_OK ? "all statements ran" : "failed");
    return rc == SQLITE_OK ? 0 : 1;
}
