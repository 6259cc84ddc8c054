// The file matrix between crypto providers: databases written by an engine with one provider, read by an engine
// with the other, both directions. SQLCipherKit's own file; run-matrix.sh links it once per engine (sqlcipherkit,
// reference) and compares what each reads.
//
//   matrix cases           prints the cases, one a line (the same list in every build)
//   matrix write DIR       writes DIR/N.db for every case N (then rekeyed where the case says so), and DIR/N.t.db,
//                          the same file with one byte of page 2 flipped
//   matrix read DIR        reads every case's file and its tampered copy, one line each: "N ok" when every row
//                          reads back exact, else what failed (result code and message, and cipher_integrity_check's
//                          pages). The lines of two engines reading the same file must be the same.
//
// The cases: the full product of the dimensions with more than two values, and every pair of values of all the
// dimensions covered (pairwise, completed greedily from a fixed seed), not the full product of all of them: page size 1-64 KiB, HMAC SHA1/256/512, PBKDF2 SHA1/256/512,
// cipher_compatibility 1-4, passphrase or raw key, a 32-byte plaintext header or none, WAL or rollback journal,
// rekeyed or not. KDF iterations are lowered to 1,000 (the algorithm is what differs between providers).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "sqlite3.h"

const char *sqlcipherkit_crypto_provider(void);

enum { PAGE, HMAC, KDF, COMPAT, KEYKIND, HEADER, WAL, REKEY, DIMENSIONS };
static const int sizes[DIMENSIONS] = {7, 3, 3, 4, 2, 2, 2, 2};
static const char *const hmac_names[] = {"HMAC_SHA1", "HMAC_SHA256", "HMAC_SHA512"};
static const char *const kdf_names[] = {"PBKDF2_HMAC_SHA1", "PBKDF2_HMAC_SHA256", "PBKDF2_HMAC_SHA512"};
#define MAX_CASES 400
static int cases[MAX_CASES][DIMENSIONS], case_count;

static uint64_t rng;
static uint64_t next_random(void) {
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Pairs (dimension a value x, dimension b value y) not yet in any case.
static unsigned char uncovered[DIMENSIONS][DIMENSIONS][8][8];
static int newly_covered(const int *c) {
    int n = 0;
    for (int a = 0; a < DIMENSIONS; a++)
        for (int b = a + 1; b < DIMENSIONS; b++) n += uncovered[a][b][c[a]][c[b]];
    return n;
}
static void generate_cases(void) {
    int remaining = 0;
    for (int a = 0; a < DIMENSIONS; a++)
        for (int b = a + 1; b < DIMENSIONS; b++)
            for (int x = 0; x < sizes[a]; x++)
                for (int y = 0; y < sizes[b]; y++) uncovered[a][b][x][y] = 1, remaining++;
    rng = 20240624;
    // First the full product of the four dimensions with more than two values (7 x 3 x 3 x 4 = 252 cases), the
    // two-valued ones drawn at random; then cases chosen greedily until every pair of values is covered.
    for (int p = 0; p < sizes[PAGE]; p++)
        for (int h = 0; h < sizes[HMAC]; h++)
            for (int k = 0; k < sizes[KDF]; k++)
                for (int v = 0; v < sizes[COMPAT]; v++) {
                    int *c = cases[case_count++];
                    c[PAGE] = p, c[HMAC] = h, c[KDF] = k, c[COMPAT] = v;
                    for (int d = KEYKIND; d < DIMENSIONS; d++) c[d] = (int)(next_random() % (uint64_t)sizes[d]);
                    for (int a = 0; a < DIMENSIONS; a++)
                        for (int b = a + 1; b < DIMENSIONS; b++)
                            if (uncovered[a][b][c[a]][c[b]]) uncovered[a][b][c[a]][c[b]] = 0, remaining--;
                }
    while (remaining > 0 && case_count < MAX_CASES) {
        int best[DIMENSIONS], best_score = -1;
        for (int attempt = 0; attempt < 400; attempt++) {
            int candidate[DIMENSIONS];
            for (int d = 0; d < DIMENSIONS; d++) candidate[d] = (int)(next_random() % (uint64_t)sizes[d]);
            int score = newly_covered(candidate);
            if (score > best_score) best_score = score, memcpy(best, candidate, sizeof best);
        }
        for (int a = 0; a < DIMENSIONS; a++)
            for (int b = a + 1; b < DIMENSIONS; b++)
                if (uncovered[a][b][best[a]][best[b]]) uncovered[a][b][best[a]][best[b]] = 0, remaining--;
        memcpy(cases[case_count++], best, sizeof best);
    }
    if (remaining > 0) { fprintf(stderr, "matrix: %d pairs not covered\n", remaining); exit(2); }
}

static int page_size(const int *c) { return 1024 << c[PAGE]; }

static void describe(int n, char *out, size_t room) {
    const int *c = cases[n];
    snprintf(out, room, "page %d, %s, %s, compatibility %d, %s, %s, %s, %s", page_size(c), hmac_names[c[HMAC]],
             kdf_names[c[KDF]], c[COMPAT] + 1, c[KEYKIND] ? "raw key" : "passphrase",
             c[HEADER] ? "plaintext header 32" : "no plaintext header", c[WAL] ? "WAL" : "rollback journal",
             c[REKEY] ? "rekeyed" : "not rekeyed");
}

// The key of case n, generation g (0: the first, 1: after rekey): a passphrase, or x'64 hex digits'.
static void case_key(int n, int g, char *out, size_t room) {
    if (cases[n][KEYKIND]) {
        uint64_t saved = rng;
        rng = 0xC0FFEEull * (uint64_t)(n + 1) + (uint64_t)g;
        int at = snprintf(out, room, "x'");
        for (int i = 0; i < 32; i++) at += snprintf(out + at, room - (size_t)at, "%02x", (unsigned)(next_random() & 0xff));
        snprintf(out + at, room - (size_t)at, "'");
        rng = saved;
    } else {
        snprintf(out, room, "matrix passphrase %d generation %d \xc3\xa9", n, g);
    }
}

static int exec(sqlite3 *db, const char *sql) { return sqlite3_exec(db, sql, NULL, NULL, NULL); }

// Opens case n's file with its key of generation g and its settings; NULL (after printing why) on failure.
static sqlite3 *open_case(const char *path, int n, int g, char *error, size_t room) {
    const int *c = cases[n];
    sqlite3 *db = NULL;
    char key[128], sql[256];
    case_key(n, g, key, sizeof key);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK
        || sqlite3_key_v2(db, "main", key, (int)strlen(key)) != SQLITE_OK) {
        snprintf(error, room, "open/key: %s", db ? sqlite3_errmsg(db) : "no memory");
        sqlite3_close(db);
        return NULL;
    }
    snprintf(sql, sizeof sql,
             "PRAGMA cipher_compatibility = %d; PRAGMA cipher_page_size = %d; PRAGMA cipher_hmac_algorithm = %s; "
             "PRAGMA cipher_kdf_algorithm = %s; PRAGMA kdf_iter = 1000;",
             c[COMPAT] + 1, page_size(c), hmac_names[c[HMAC]], kdf_names[c[KDF]]);
    int rc = exec(db, sql);
    if (rc == SQLITE_OK && c[HEADER]) {
        // The salt lives in the header SQLCipher leaves in plaintext: given here, derived from the case.
        snprintf(sql, sizeof sql, "PRAGMA cipher_plaintext_header_size = 32; PRAGMA cipher_salt = \"x'%032x'\";",
                 0x5a17 + n);
        rc = exec(db, sql);
    }
    if (rc != SQLITE_OK) {
        snprintf(error, room, "settings: %s", sqlite3_errmsg(db));
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

// Row i of case n: a text and a blob whose bytes and lengths come from (n, i).
#define ROWS 60
static void row_value(int n, int i, char *text, int *text_sz, unsigned char *blob, int *blob_sz) {
    uint64_t saved = rng;
    rng = (uint64_t)n * 1000003u + (uint64_t)i;
    *text_sz = 1 + (int)(next_random() % 300);
    for (int k = 0; k < *text_sz; k++) text[k] = (char)('a' + next_random() % 26);
    text[*text_sz] = 0;
    *blob_sz = (int)(next_random() % 3000);
    for (int k = 0; k < *blob_sz; k++) blob[k] = (unsigned char)next_random();
    rng = saved;
}

static int write_case(const char *dir, int n) {
    char path[512], error[512], key[128];
    unsigned char blob[3000];
    char text[302];
    int text_sz, blob_sz, rc;
    snprintf(path, sizeof path, "%s/%d.db", dir, n);
    sqlite3 *db = open_case(path, n, 0, error, sizeof error);
    if (db == NULL) { printf("%d write failed: %s\n", n, error); return 1; }
    rc = exec(db, cases[n][WAL] ? "PRAGMA journal_mode = WAL" : "PRAGMA journal_mode = DELETE");
    if (rc == SQLITE_OK) rc = exec(db, "CREATE TABLE t(i INTEGER PRIMARY KEY, s TEXT, b BLOB); BEGIN");
    sqlite3_stmt *insert = NULL;
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?, ?, ?)", -1, &insert, NULL);
    for (int i = 0; rc == SQLITE_OK && i < ROWS; i++) {
        row_value(n, i, text, &text_sz, blob, &blob_sz);
        sqlite3_bind_int(insert, 1, i);
        sqlite3_bind_text(insert, 2, text, text_sz, SQLITE_STATIC);
        sqlite3_bind_blob(insert, 3, blob, blob_sz, SQLITE_STATIC);
        rc = sqlite3_step(insert) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(insert);
    }
    sqlite3_finalize(insert);
    if (rc == SQLITE_OK) rc = exec(db, "COMMIT");
    if (rc == SQLITE_OK && cases[n][REKEY]) {
        case_key(n, 1, key, sizeof key);
        rc = sqlite3_rekey_v2(db, "main", key, (int)strlen(key));
    }
    if (rc == SQLITE_OK && cases[n][WAL]) rc = exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    if (rc != SQLITE_OK) printf("%d write failed: %s\n", n, sqlite3_errmsg(db));
    if (sqlite3_close(db) != SQLITE_OK) { printf("%d close failed\n", n); rc = SQLITE_ERROR; }
    if (rc != SQLITE_OK) return 1;

    // The tampered copy: one byte of page 2 (the table's root) flipped, in its encrypted content.
    char copy[520];
    snprintf(copy, sizeof copy, "%s/%d.t.db", dir, n);
    FILE *in = fopen(path, "rb"), *out = fopen(copy, "wb");
    if (!in || !out) { printf("%d tamper: cannot copy\n", n); return 1; }
    long offset = page_size(cases[n]) + 40, at = 0;
    int ch;
    while ((ch = fgetc(in)) != EOF) fputc(at++ == offset ? ch ^ 0x01 : ch, out);
    fclose(in);
    fclose(out);
    if (at <= offset) { printf("%d tamper: the file has no page 2\n", n); return 1; }
    return 0;
}

// Reads case n's file (or its tampered copy) and prints one line of what happened.
static void read_case(const char *dir, int n, int tampered) {
    char path[512], error[512], text[302];
    unsigned char blob[3000];
    int text_sz, blob_sz, rows = 0, wrong = 0, rc;
    snprintf(path, sizeof path, "%s/%d%s.db", dir, n, tampered ? ".t" : "");
    // Compatibility 1 has no HMAC: a flipped byte there is not detectable, only read the same by both engines.
    const char *label = !tampered ? "file" : cases[n][COMPAT] == 0 ? "tampered (no HMAC)" : "tampered";
    struct stat st;
    if (stat(path, &st) != 0) { printf("%d %s missing\n", n, label); return; }
    sqlite3 *db = open_case(path, n, cases[n][REKEY], error, sizeof error);
    if (db == NULL) { printf("%d %s: %s\n", n, label, error); return; }
    sqlite3_stmt *select = NULL;
    rc = sqlite3_prepare_v2(db, "SELECT i, s, b FROM t ORDER BY i", -1, &select, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(select)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        int i = sqlite3_column_int(select, 0);
        row_value(n, i, text, &text_sz, blob, &blob_sz);
        if (i != rows || sqlite3_column_bytes(select, 1) != text_sz
            || memcmp(sqlite3_column_text(select, 1), text, (size_t)text_sz) != 0
            || sqlite3_column_bytes(select, 2) != blob_sz
            || (blob_sz > 0 && memcmp(sqlite3_column_blob(select, 2), blob, (size_t)blob_sz) != 0)) wrong++;
        rows++;
    }
    int step_rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
    char step_error[256];
    snprintf(step_error, sizeof step_error, "%s", step_rc == SQLITE_OK ? "" : sqlite3_errmsg(db));
    sqlite3_finalize(select);
    // cipher_integrity_check's report (the pages whose HMAC fails), in one string.
    char integrity[512] = "";
    sqlite3_stmt *check = NULL;
    if (sqlite3_prepare_v2(db, "PRAGMA cipher_integrity_check", -1, &check, NULL) == SQLITE_OK) {
        size_t used = 0;
        while (sqlite3_step(check) == SQLITE_ROW && used < sizeof integrity - 2) {
            const char *row = (const char *)sqlite3_column_text(check, 0);
            used += (size_t)snprintf(integrity + used, sizeof integrity - used, "%s%s", used ? "; " : "", row ? row : "");
        }
    } else {
        snprintf(integrity, sizeof integrity, "(cannot run: %s)", sqlite3_errmsg(db));
    }
    sqlite3_finalize(check);
    sqlite3_close(db);
    // Compatibility 1 has no HMAC: cipher_integrity_check says it cannot check, which is clean for an intact file.
    int no_hmac_note = cases[n][COMPAT] == 0 && strcmp(integrity, "HMAC is not enabled, unable to integrity check") == 0;
    if (step_rc == SQLITE_OK && wrong == 0 && rows == ROWS && (integrity[0] == 0 || no_hmac_note))
        printf("%d %s ok\n", n, label);
    else
        printf("%d %s: read %d rows, %d wrong; rc %d (%s); cipher_integrity_check: %s\n", n, label, rows, wrong,
               step_rc, step_error, integrity[0] ? integrity : "clean");
}

int main(int argc, char **argv) {
    generate_cases();
    if (argc >= 2 && strcmp(argv[1], "cases") == 0) {
        char text[256];
        printf("crypto provider: %s\n", sqlcipherkit_crypto_provider());
        for (int n = 0; n < case_count; n++) describe(n, text, sizeof text), printf("%d: %s\n", n, text);
        printf("%d cases: every page size x HMAC x KDF x compatibility, every pair of all values\n", case_count);
        return 0;
    }
    if (argc != 3) { fprintf(stderr, "usage: matrix cases | write DIR | read DIR\n"); return 64; }
    printf("crypto provider: %s\n", sqlcipherkit_crypto_provider());
    if (strcmp(argv[1], "write") == 0) {
        int failures = 0;
        for (int n = 0; n < case_count; n++) failures += write_case(argv[2], n);
        printf("wrote %d cases, %d failures\n", case_count, failures);
        return failures ? 1 : 0;
    }
    if (strcmp(argv[1], "read") == 0) {
        for (int n = 0; n < case_count; n++) read_case(argv[2], n, 0), read_case(argv[2], n, 1);
        return 0;
    }
    fprintf(stderr, "usage: matrix cases | write DIR | read DIR\n");
    return 64;
}
