// The benchmarks' C loops (Benchmarks/Support/RawLoops/raw_loops.inc) and crypto floor (crypto_floor.inc) for the
// callgrind gate. Every loop returns an SQLite result code (SQLITE_OK on success).
#ifndef CGATE_LOOPS_H
#define CGATE_LOOPS_H

#include <stdint.h>

struct sqlite3;

int gate_open(const char *path, const void *key, int key_length, struct sqlite3 **out);
void gate_close(struct sqlite3 *db);
int gate_exec(struct sqlite3 *db, const char *sql);
const char *gate_errmsg(struct sqlite3 *db);
int gate_query_text(struct sqlite3 *db, const char *sql, char *buffer, int capacity);
int gate_bulk_insert(struct sqlite3 *db, const char *insert_sql, const char *begin_sql, const char *commit_sql,
                     int64_t count, const int64_t *ids, const char *texts, int text_length, const double *reals,
                     const unsigned char *blobs, int blob_length);
int gate_scan_sum(struct sqlite3 *db, const char *sql, double *sum);
int gate_point_selects(struct sqlite3 *db, const char *sql, const int64_t *ids, int64_t count, int64_t *rows,
                       int64_t *text_bytes, int64_t *blob_bytes, double *real_sum, int64_t *first_bytes);
int gate_single_transactions(struct sqlite3 *db, const char *insert_sql, const char *begin_sql,
                             const char *commit_sql, int64_t count, const int64_t *ids, const char *texts,
                             int text_length, const double *reals, const unsigned char *blobs, int blob_length);
/// The pages the connection read from the file (decrypting them, when encrypted) since the last call: its page-cache
/// misses (SQLITE_DBSTATUS_CACHE_MISS), reset by the call.
int64_t gate_cache_misses(struct sqlite3 *db);
/// HMAC-SHA512 and AES-256-CBC decryption of `pages` pages of SQLCipher 4's default layout through libcrypto,
/// contexts reused (`contexts_per_page` 0) or new for every page (1); 0 on success.
int gate_crypto_floor(int64_t pages, int contexts_per_page, unsigned char *digest_xor);

#endif
