// The C baseline loops (Support/RawLoops/raw_loops.inc) compiled against the SQLCipher engine SQLCipherKit links (Vendor/build/lib/libsqlcipher.a).
// Every function returns an SQLite result code (SQLITE_OK on success).
#ifndef CRAW_SQLCIPHER_H
#define CRAW_SQLCIPHER_H

#include <stdint.h>

struct sqlite3;

/// Opens (creating) `path` as SQLCipherKit does, keys it with `key` (NULL: no key) and reads page 1.
int rawsqlcipher_open(const char *path, const void *key, int key_length, struct sqlite3 **out);
/// Closes a connection.
void rawsqlcipher_close(struct sqlite3 *db);
/// Runs SQL (scripts too), discarding rows.
int rawsqlcipher_exec(struct sqlite3 *db, const char *sql);
/// The connection's last error message.
const char *rawsqlcipher_errmsg(struct sqlite3 *db);
/// The first column of the first row of `sql` as text into `buffer`: SQLITE_ROW, or SQLITE_DONE for no row.
int rawsqlcipher_query_text(struct sqlite3 *db, const char *sql, char *buffer, int capacity);
/// Workload 1: every row inserted in one transaction with one prepared statement.
int rawsqlcipher_bulk_insert(struct sqlite3 *db, const char *insert_sql, const char *begin_sql, const char *commit_sql,
                     int64_t count, const int64_t *ids, const char *texts, int text_length, const double *reals,
                     const unsigned char *blobs, int blob_length);
/// Workload 2: every row of `sql`, its first column summed.
int rawsqlcipher_scan_sum(struct sqlite3 *db, const char *sql, double *sum);
/// Workload 3: one row per id, every column read and folded into the outputs.
int rawsqlcipher_point_selects(struct sqlite3 *db, const char *sql, const int64_t *ids, int64_t count, int64_t *rows,
                       int64_t *text_bytes, int64_t *blob_bytes, double *real_sum, int64_t *first_bytes);
/// Workload 4: one transaction per row.
int rawsqlcipher_single_transactions(struct sqlite3 *db, const char *insert_sql, const char *begin_sql,
                             const char *commit_sql, int64_t count, const int64_t *ids, const char *texts,
                             int text_length, const double *reals, const unsigned char *blobs, int blob_length);
/// The pages the connection read from the file (and, encrypted, decrypted) since the last call: its page-cache
/// misses (SQLITE_DBSTATUS_CACHE_MISS), reset by the call.
int64_t rawsqlcipher_cache_misses(struct sqlite3 *db);
/// The crypto floor (Support/RawLoops/crypto_floor.inc): HMAC-SHA512 and AES-256-CBC decryption of `pages` pages
/// of SQLCipher 4's default layout through libcrypto; `contexts_per_page`: a new HMAC and cipher context per page,
/// as SQLCipher's reference OpenSSL provider calls libcrypto, else contexts reused. `digest_xor` (64 bytes) receives every result folded. 0 on success.
int rawsqlcipher_crypto_floor(int64_t pages, int contexts_per_page, unsigned char *digest_xor);

#endif
