#include "SQLCipherKeying.h"

// Declared here rather than by including sqlite3.h: this target only needs this one function, which the
// engine archive (the artifact bundle) defines.
struct sqlite3;
int sqlite3_key_v2(struct sqlite3 *db, const char *zDbName, const void *pKey, int nKey);

int sqlcipherkeying_key(void *connection, const void *key, int length) {
    return sqlite3_key_v2((struct sqlite3 *)connection, "main", key, length);
}
