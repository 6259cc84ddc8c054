// Keys a SQLite connection through SQLCipher's sqlite3_key_v2, for code that sees the connection only as an
// opaque pointer (GRDB's Database.sqliteConnection) and must not import a second sqlite3.h.
#ifndef SQLCIPHERKEYING_H
#define SQLCIPHERKEYING_H

/// Calls sqlite3_key_v2(connection, "main", key, length); returns its result code (0 is SQLITE_OK).
int sqlcipherkeying_key(void *connection, const void *key, int length);

#endif
