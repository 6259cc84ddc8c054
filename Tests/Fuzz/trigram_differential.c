/*
 * trigram_differential.c: LIKE and GLOB on FTS5 trigram tables against the same patterns on a plain table, on
 * the engine fuzz.sh builds (the generated amalgamation, local changes included, with ASan and UBSan), lookaside
 * and the page-cache bulk allocation off so that AddressSanitizer sees a read past any allocation.
 *
 * A trigram table answers LIKE and GLOB through its index (sqlite3Fts5ExprPattern() turns the pattern into a
 * MATCH expression, a superset that SQLite then filters), so the rows it returns must be exactly the rows a plain
 * table returns for the same pattern. Rows and patterns are random (seeded): ASCII in both cases, non-ASCII
 * (accents, ß, CJK, an emoji), quotes, and every special character; patterns with %, _, *, ?, [...], [^...],
 * ranges, unterminated classes, ESCAPE. Tables: the default trigram (case-insensitive for ASCII, like LIKE),
 * case_sensitive 1, remove_diacritics 1, detail=column and detail=none. It also runs the three statements of the
 * over-read report first (known-issues/sqlite-fts5-trigram-like-overread.md).
 *
 * Agreement alone proves nothing if the trigram side stopped using its index (both sides would run the same
 * LIKE code) or if the patterns stopped matching rows (both sides would return nothing), so the run also fails
 * when too few pattern/operator pairs were answered through the index or matched rows. The minimums scale with
 * the number of patterns (fixed ones included): at least 2 pairs per pattern answered through the index (seed 1,
 * 200 patterns: 654 of 872 pairs, 3 per pattern: LIKE, GLOB and both, never the 3-argument like()), and at least
 * 1 pair per 2 patterns matching rows (seed 1: 175 of 872; seeds 1-12: 158 to 241; minimum 109).
 *
 * Usage: trigram_differential [SEED [PATTERNS]]   (defaults: seed 1, 200 patterns)
 * Prints the seed and the counts; exits 0 when every query agreed and both minimums were met, 1 on the first
 * disagreement (the pattern, the table and both row sets are printed) or on a minimum not met (the count and
 * the minimum are printed), 2 on an engine error. A sanitizer report aborts the run.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3.h"

#define ROWS 160
#define MAX_TEXT 256
#define MAX_MATCHES (ROWS + 8)

static uint64_t g_state;

static uint64_t next_random(void) {
    /* xorshift64*: small, seedable, the same sequence on every platform. */
    g_state ^= g_state >> 12;
    g_state ^= g_state << 25;
    g_state ^= g_state >> 27;
    return g_state * 2685821657736338717ULL;
}

static unsigned below(unsigned n) { return (unsigned)(next_random() % n); }

static sqlite3 *g_db;

static void fail_engine(const char *what) {
    fprintf(stderr, "trigram_differential: %s: %s\n", what, sqlite3_errmsg(g_db));
    exit(2);
}

static void exec(const char *sql) {
    char *error = NULL;
    if (sqlite3_exec(g_db, sql, NULL, NULL, &error) != SQLITE_OK) {
        fprintf(stderr, "trigram_differential: %s: %s\n", sql, error ? error : "?");
        exit(2);
    }
}

/* The trigram tables, each compared with the plain table `plain`. */
static const char *const kTables[][2] = {
    {"tri", "fts5(body, tokenize = 'trigram')"},
    {"tri_cs", "fts5(body, tokenize = 'trigram case_sensitive 1')"},
    {"tri_rd", "fts5(body, tokenize = 'trigram remove_diacritics 1')"},
    {"tri_col", "fts5(body, tokenize = 'trigram', detail = 'column')"},
    {"tri_none", "fts5(body, tokenize = 'trigram', detail = 'none')"},
};
#define TABLE_COUNT (sizeof kTables / sizeof kTables[0])

/* What rows are made of: letters few enough that trigrams repeat across rows, both cases, non-ASCII letters
 * whose case folds (é/É, ü/Ü) and ones that do not (ß, CJK, emoji), and the characters LIKE and GLOB give a
 * meaning to. */
static const char *const kTextPieces[] = {
    "a", "b", "c", "a", "b", "c", "A", "B", "C", "ab", "abc", "bca", "ABC", "Abc", " ", " ", "x", "y",
    "é", "É", "e", "ü", "Ü", "ß", "日本", "語", "😀", "%", "_", "*", "?", "[", "]", "^", "-", "\\", "\"", "'",
    "the quick", "brown fox", "quick", "QUICK",
};
/* Pattern pieces beyond the text pieces: the wildcards and classes of LIKE and GLOB. */
static const char *const kWildPieces[] = {
    "%", "%", "_", "*", "*", "?", "[abc]", "[^a]", "[a-c]", "[]a]", "[^]b]", "[A-C]", "[é]", "[^日]", "[",
    "]", "^", "\\", "\\%", "\\_",
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void append(char *buffer, const char *piece) {
    size_t used = strlen(buffer), length = strlen(piece);
    if (used + length < MAX_TEXT) memcpy(buffer + used, piece, length + 1);
}

static void random_text(char *buffer, unsigned max_pieces) {
    buffer[0] = 0;
    unsigned pieces = below(max_pieces + 1);
    for (unsigned i = 0; i < pieces; i++) append(buffer, kTextPieces[below(COUNT(kTextPieces))]);
}

static char g_rows[ROWS][MAX_TEXT];

/* A pattern: random pieces, or a piece of a stored row (so that patterns match something), wrapped in
 * wildcards, with its case changed or a character replaced by a wildcard now and then. */
static void random_pattern(char *buffer) {
    buffer[0] = 0;
    if (below(2)) {
        const char *row = g_rows[below(ROWS)];
        size_t length = strlen(row);
        size_t start = length ? below((unsigned)length) : 0;
        size_t take = length - start ? 1 + below((unsigned)(length - start)) : 0;
        if (take > 12) take = 3 + below(10);
        if (below(2)) append(buffer, below(2) ? "%" : "*");
        size_t used = strlen(buffer);
        memcpy(buffer + used, row + start, take); /* may cut a UTF-8 sequence: worth trying too */
        buffer[used + take] = 0;
        if (below(2)) append(buffer, below(2) ? "%" : "*");
    } else {
        unsigned pieces = below(7);
        for (unsigned i = 0; i < pieces; i++)
            append(buffer, below(3) ? kTextPieces[below(COUNT(kTextPieces))] : kWildPieces[below(COUNT(kWildPieces))]);
    }
    for (char *c = buffer; *c; c++) {
        unsigned roll = below(40);
        if (roll == 0 && *c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
        else if (roll == 1 && *c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
        else if (roll == 2 && (unsigned char)*c < 0x80) *c = "_%?*"[below(4)];
    }
}

typedef struct Matches {
    int count;
    sqlite3_int64 rowids[MAX_MATCHES];
} Matches;

static void query(const char *sql, const char *pattern, Matches *out) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(g_db, sql, -1, &statement, NULL) != SQLITE_OK) fail_engine(sql);
    sqlite3_bind_text(statement, 1, pattern, -1, SQLITE_STATIC);
    out->count = 0;
    int rc;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW)
        if (out->count < MAX_MATCHES) out->rowids[out->count++] = sqlite3_column_int64(statement, 0);
    if (rc != SQLITE_DONE) {
        fprintf(stderr, "trigram_differential: pattern '%s': ", pattern);
        fail_engine(sql);
    }
    sqlite3_finalize(statement);
}

/* Whether the trigram table answered through its index (FTS5's plan names its index string). */
static int uses_index(const char *table, const char *where, const char *pattern) {
    char sql[256];
    snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN SELECT rowid FROM %s WHERE %s", table, where);
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(g_db, sql, -1, &statement, NULL) != SQLITE_OK) fail_engine(sql);
    sqlite3_bind_text(statement, 1, pattern, -1, SQLITE_STATIC);
    int used = 0;
    while (sqlite3_step(statement) == SQLITE_ROW) {
        const char *detail = (const char *)sqlite3_column_text(statement, 3);
        /* "VIRTUAL TABLE INDEX 0:L0" / ":G0": FTS5's idxStr, L for LIKE and G for GLOB. */
        if (detail && (strstr(detail, ":L") || strstr(detail, ":G"))) used = 1;
    }
    sqlite3_finalize(statement);
    return used;
}

static void print_matches(const char *label, const Matches *m) {
    fprintf(stderr, "  %s (%d):", label, m->count);
    for (int i = 0; i < m->count; i++) fprintf(stderr, " %" PRId64, (int64_t)m->rowids[i]);
    fprintf(stderr, "\n");
}

static unsigned long g_queries, g_indexed, g_matched_rows, g_nonempty;

/* One condition (the pattern is ?1) on every trigram table against the plain table; exits on the first
 * disagreement. */
static void compare(const char *where, const char *pattern, uint64_t seed) {
    char sql[256];
    Matches expected, actual;
    snprintf(sql, sizeof sql, "SELECT id FROM plain WHERE %s ORDER BY id", where);
    query(sql, pattern, &expected);
    for (size_t t = 0; t < TABLE_COUNT; t++) {
        snprintf(sql, sizeof sql, "SELECT rowid FROM %s WHERE %s ORDER BY rowid", kTables[t][0], where);
        query(sql, pattern, &actual);
        g_queries++;
        if (actual.count != expected.count ||
            memcmp(actual.rowids, expected.rowids, sizeof actual.rowids[0] * (size_t)actual.count) != 0) {
            fprintf(stderr, "trigram_differential: DIFFERENT ROWS (seed %" PRIu64 "): %s WHERE %s, ?1 = '%s'\n",
                    seed, kTables[t][0], where, pattern);
            print_matches("plain table", &expected);
            print_matches(kTables[t][0], &actual);
            exit(1);
        }
        if (t == 0) g_indexed += (unsigned long)uses_index(kTables[t][0], where, pattern);
    }
    g_matched_rows += (unsigned long)expected.count;
    g_nonempty += expected.count > 0;
}

int main(int argc, char **argv) {
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    unsigned long patterns = argc > 2 ? strtoul(argv[2], NULL, 10) : 200;
    g_state = seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL;
    if (g_state == 0) g_state = 1;

    sqlite3_config(SQLITE_CONFIG_LOOKASIDE, 0, 0);
    sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
    if (sqlite3_open(":memory:", &g_db) != SQLITE_OK) fail_engine("open");

    /* The report's three statements, on their own database state: an over-read here is a sanitizer abort. */
    exec("CREATE VIRTUAL TABLE f USING fts5(body, tokenize = 'trigram');"
         "INSERT INTO f VALUES ('the quick brown fox');"
         "SELECT rowid FROM f WHERE body LIKE '%quick%';"
         "DROP TABLE f;");

    char sql[512];
    exec("CREATE TABLE plain(id INTEGER PRIMARY KEY, body TEXT)");
    for (size_t t = 0; t < TABLE_COUNT; t++) {
        snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE %s USING %s", kTables[t][0], kTables[t][1]);
        exec(sql);
    }
    exec("BEGIN");
    for (int i = 0; i < ROWS; i++) {
        if (i == 0) strcpy(g_rows[i], "the quick brown fox");
        else random_text(g_rows[i], 10);
        int null_row = i > 0 && below(25) == 0;
        const char *tables[TABLE_COUNT + 1];
        tables[0] = "plain";
        for (size_t t = 0; t < TABLE_COUNT; t++) tables[t + 1] = kTables[t][0];
        for (size_t t = 0; t <= TABLE_COUNT; t++) {
            sqlite3_stmt *insert;
            snprintf(sql, sizeof sql, "INSERT INTO %s(%s, body) VALUES (?1, ?2)", tables[t], t ? "rowid" : "id");
            if (sqlite3_prepare_v2(g_db, sql, -1, &insert, NULL) != SQLITE_OK) fail_engine(sql);
            sqlite3_bind_int(insert, 1, i + 1);
            if (null_row) sqlite3_bind_null(insert, 2);
            else sqlite3_bind_text(insert, 2, g_rows[i], -1, SQLITE_STATIC);
            if (sqlite3_step(insert) != SQLITE_DONE) fail_engine(sql);
            sqlite3_finalize(insert);
        }
    }
    exec("COMMIT");

    static const char *const kFixed[] = {"%quick%", "%QUICK%", "*quick*", "the%", "%fox", "qu_ck", "[tq]*", "*[^x]ox",
                                         "%", "", "_", "%%%", "[", "%[", "*[", "*[^", "a%", "%a"};
    char pattern[MAX_TEXT];
    for (unsigned long n = 0; n < patterns + COUNT(kFixed); n++) {
        if (n < COUNT(kFixed)) strcpy(pattern, kFixed[n]);
        else random_pattern(pattern);
        compare("body LIKE ?1", pattern, seed);
        compare("body GLOB ?1", pattern, seed);
        compare("body LIKE ?1 ESCAPE '\\'", pattern, seed); /* the 3-argument like(): never the index */
        /* Both at once: FTS5 may answer one constraint and SQLite filter by the other. */
        compare("body LIKE ?1 AND body GLOB ?1", pattern, seed);
    }
    printf("trigram_differential: seed %" PRIu64 ": %d rows, %lu patterns (%zu fixed), %lu queries on %zu trigram "
           "tables agreed with the plain table (%lu answered through the trigram index; %lu pattern/operator "
           "pairs matched rows, %lu rows in all)\n",
           seed, ROWS, patterns + COUNT(kFixed), COUNT(kFixed), g_queries, TABLE_COUNT, g_indexed, g_nonempty,
           g_matched_rows);
    fflush(stdout); /* the counts before any verdict below */
    sqlite3_close(g_db);
    /* The minimums (see the header): what keeps an agreement from being trivial. */
    unsigned long total = patterns + COUNT(kFixed);
    unsigned long min_indexed = 2 * total, min_nonempty = total / 2;
    int shallow = 0;
    if (g_indexed < min_indexed) {
        fprintf(stderr, "trigram_differential: TOO FEW INDEXED (seed %" PRIu64 "): %lu pattern/operator pairs "
                "answered through the trigram index, expected at least %lu (2 per pattern, %lu patterns): the "
                "trigram tables may be answering without their index, so agreement proves nothing\n",
                seed, g_indexed, min_indexed, total);
        shallow = 1;
    }
    if (g_nonempty < min_nonempty) {
        fprintf(stderr, "trigram_differential: TOO FEW MATCHES (seed %" PRIu64 "): %lu pattern/operator pairs "
                "matched rows, expected at least %lu (1 per 2 patterns, %lu patterns): empty results agree "
                "trivially\n",
                seed, g_nonempty, min_nonempty, total);
        shallow = 1;
    }
    return shallow ? 1 : 0;
}
