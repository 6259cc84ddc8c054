// Differential and known-answer tests of SQLCipherKit's crypto provider (BuildSupport/engine/sqlcipherkit_provider.c)
// against SQLCipher's reference OpenSSL provider (src/crypto_openssl.c), both compiled into this one program.
// SQLCipherKit's own file; run by Tests/CryptoProvider/run-differential.sh (CryptoProviderTests in the test command).
//
// How both get in: run-differential.sh compiles this file with -I pointing at an amalgamation generated from the
// pinned tarball WITHOUT SQLCipherKit's provider (the reference engine's, build-sqlcipher.sh --crypto-provider
// reference) and with both -DSQLCIPHER_CRYPTO_OPENSSL (crypto_openssl.c compiled) and
// -DSQLCIPHER_CRYPTO_CUSTOM=sqlcipherkit_openssl_setup (our provider's guard). The amalgamation is included first,
// then our provider's source as it is in the checkout: both providers' set-up functions fill a sqlcipher_provider
// each, and every call below goes through those tables, as the codec calls them.
//
//   differential [SEED [SCALE]]   prints the paths SQLCipherKit's provider took, then one line per check ("KAT …", "DIFF …"), then "TOTAL: N checks, M differences";
//                         exit 0 only with 0 differences and 0 known-answer failures.
#include "sqlite3.c"
#include "sqlcipherkit_provider.c"
#include "known_answers.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static sqlcipher_provider ref, ours;
static void *ref_ctx, *ours_ctx;
static long checks, differences;

static uint64_t rng_state;
static uint64_t next_random(void) { // SplitMix64
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static int random_below(int n) { return n <= 0 ? 0 : (int)(next_random() % (uint64_t)n); }
static void random_bytes(unsigned char *out, int n) {
    for (int i = 0; i < n; i++) out[i] = (unsigned char)next_random();
}
// A length in [0, max]: half small (the codec's sizes: keys, salts, pages), half anywhere up to max.
static int random_length(int max) {
    return random_below(2) ? random_below(max < 300 ? max + 1 : 301) : random_below(max + 1);
}

static int from_hex(const char *hex, unsigned char *out, int room) {
    int n = (int)strlen(hex) / 2;
    if (n > room) { fprintf(stderr, "vector too long\n"); exit(2); }
    for (int i = 0; i < n; i++) {
        unsigned int byte;
        sscanf(hex + 2 * i, "%2x", &byte);
        out[i] = (unsigned char)byte;
    }
    return n;
}

static void difference(const char *what, long index, const char *detail) {
    differences++;
    if (differences <= 20) printf("DIFFERENCE %s case %ld: %s\n", what, index, detail);
}

static const char *hmac_name(int algorithm) {
    switch (algorithm) {
    case SQLCIPHER_HMAC_SHA1: return "HMAC-SHA1";
    case SQLCIPHER_HMAC_SHA256: return "HMAC-SHA256";
    default: return "HMAC-SHA512";
    }
}
static const char *kdf_name(int algorithm) {
    switch (algorithm) {
    case SQLCIPHER_PBKDF2_HMAC_SHA1: return "PBKDF2-HMAC-SHA1";
    case SQLCIPHER_PBKDF2_HMAC_SHA256: return "PBKDF2-HMAC-SHA256";
    default: return "PBKDF2-HMAC-SHA512";
    }
}

#define DIFF_MAX_INPUT 65536
static unsigned char in[DIFF_MAX_INPUT + 64], out_ref[DIFF_MAX_INPUT + 64], out_ours[DIFF_MAX_INPUT + 64], round_trip[DIFF_MAX_INPUT + 64];

static void known_answers(void) {
    unsigned char key[256], data[256], expected[64], got[64];
    long failures = 0, count = 0;
    for (size_t i = 0; i < sizeof hmac_vectors / sizeof hmac_vectors[0]; i++) {
        const struct hmac_vector *v = &hmac_vectors[i];
        int key_sz = from_hex(v->key, key, sizeof key), data_sz = from_hex(v->data, data, sizeof data);
        int mac_sz = from_hex(v->mac, expected, sizeof expected);
        sqlcipher_provider *providers[2] = {&ours, &ref};
        void *contexts[2] = {ours_ctx, ref_ctx};
        for (int p = 0; p < 2; p++) {
            memset(got, 0, sizeof got);
            count++;
            if (providers[p]->hmac(contexts[p], v->algorithm, key, key_sz, data, data_sz, NULL, 0, got) != SQLITE_OK
                || memcmp(got, expected, (size_t)mac_sz) != 0) {
                failures++;
                printf("KAT FAILED %s (%s provider)\n", v->name, p == 0 ? "sqlcipherkit" : "reference");
            }
        }
        // The same vector split in two inputs (in, in2), as the codec passes page and page number.
        memset(got, 0, sizeof got);
        count++;
        if (ours.hmac(ours_ctx, v->algorithm, key, key_sz, data, data_sz / 2, data + data_sz / 2,
                      data_sz - data_sz / 2, got) != SQLITE_OK || memcmp(got, expected, (size_t)mac_sz) != 0) {
            failures++;
            printf("KAT FAILED %s split in two (sqlcipherkit provider)\n", v->name);
        }
    }
    printf("KAT hmac: %zu RFC 2202/4231 vectors, %ld checks (both providers, and ours split), %ld failures\n",
           sizeof hmac_vectors / sizeof hmac_vectors[0], count, failures);
    checks += count;
    differences += failures;

    count = failures = 0;
    for (size_t i = 0; i < sizeof pbkdf2_vectors / sizeof pbkdf2_vectors[0]; i++) {
        const struct pbkdf2_vector *v = &pbkdf2_vectors[i];
        int pass_sz = from_hex(v->password, key, sizeof key), salt_sz = from_hex(v->salt, data, sizeof data);
        int key_sz = from_hex(v->key, expected, sizeof expected);
        sqlcipher_provider *providers[2] = {&ours, &ref};
        void *contexts[2] = {ours_ctx, ref_ctx};
        for (int p = 0; p < 2; p++) {
            memset(got, 0, sizeof got);
            count++;
            if (providers[p]->kdf(contexts[p], v->algorithm, key, pass_sz, data, salt_sz, v->iterations, key_sz, got)
                    != SQLITE_OK || memcmp(got, expected, (size_t)key_sz) != 0) {
                failures++;
                printf("KAT FAILED %s (%s provider)\n", v->name, p == 0 ? "sqlcipherkit" : "reference");
            }
        }
    }
    printf("KAT pbkdf2: %zu RFC 6070/7914 vectors, %ld checks, %ld failures\n",
           sizeof pbkdf2_vectors / sizeof pbkdf2_vectors[0], count, failures);
    checks += count;
    differences += failures;

    count = failures = 0;
    for (size_t i = 0; i < sizeof aes_vectors / sizeof aes_vectors[0]; i++) {
        const struct aes_vector *v = &aes_vectors[i];
        unsigned char iv[16], plain[64], cipher[64], result[64];
        int key_sz = from_hex(v->key, key, sizeof key);
        from_hex(v->iv, iv, sizeof iv);
        int n = from_hex(v->plaintext, plain, sizeof plain);
        from_hex(v->ciphertext, cipher, sizeof cipher);
        sqlcipher_provider *providers[2] = {&ours, &ref};
        void *contexts[2] = {ours_ctx, ref_ctx};
        for (int p = 0; p < 2; p++) {
            count += 2;
            if (providers[p]->cipher(contexts[p], SQLCIPHER_ENCRYPT, key, key_sz, iv, plain, n, result) != SQLITE_OK
                || memcmp(result, cipher, (size_t)n) != 0) {
                failures++;
                printf("KAT FAILED %s encrypt (%s provider)\n", v->name, p == 0 ? "sqlcipherkit" : "reference");
            }
            if (providers[p]->cipher(contexts[p], SQLCIPHER_DECRYPT, key, key_sz, iv, cipher, n, result) != SQLITE_OK
                || memcmp(result, plain, (size_t)n) != 0) {
                failures++;
                printf("KAT FAILED %s decrypt (%s provider)\n", v->name, p == 0 ? "sqlcipherkit" : "reference");
            }
        }
    }
    printf("KAT aes-256-cbc: %zu SP 800-38A vector, %ld checks (both directions, both providers), %ld failures\n",
           sizeof aes_vectors / sizeof aes_vectors[0], count, failures);
    checks += count;
    differences += failures;
}

static void differential_hmac(int algorithm, int cases) {
    long before = differences;
    int sizes = ref.get_hmac_sz(ref_ctx, algorithm);
    char detail[160];
    if (ours.get_hmac_sz(ours_ctx, algorithm) != sizes) difference(hmac_name(algorithm), -1, "get_hmac_sz differs");
    for (int c = 0; c < cases; c++) {
        unsigned char key[300];
        int key_sz = random_below(301), in_sz = random_length(DIFF_MAX_INPUT), split = random_below(in_sz + 1);
        random_bytes(key, key_sz);
        random_bytes(in, in_sz);
        int second = random_below(3); // 0: one input (in2 NULL); 1: split in two; 2: split, second part empty
        const unsigned char *in2 = second ? in + split : NULL;
        int first_sz = second ? split : in_sz, in2_sz = second == 1 ? in_sz - split : 0;
        if (second == 2) first_sz = in_sz, in2 = in + in_sz;
        memset(out_ref, 0, 64);
        memset(out_ours, 0xA5, 64);
        int rc_ref = ref.hmac(ref_ctx, algorithm, key, key_sz, in, first_sz, in2, in2_sz, out_ref);
        int rc_ours = ours.hmac(ours_ctx, algorithm, key, key_sz, in, first_sz, in2, in2_sz, out_ours);
        checks++;
        if (rc_ref != rc_ours || (rc_ref == SQLITE_OK && memcmp(out_ref, out_ours, (size_t)sizes) != 0)) {
            snprintf(detail, sizeof detail, "key %d bytes, input %d + %d bytes: rc %d/%d, digests %s", key_sz,
                     first_sz, in2_sz, rc_ref, rc_ours, rc_ref == rc_ours ? "differ" : "not compared");
            difference(hmac_name(algorithm), c, detail);
        }
    }
    printf("DIFF hmac %s: %d cases (keys 0-300 bytes, inputs 0-%d bytes, one, two or empty-second inputs), "
           "%ld differences\n", hmac_name(algorithm), cases, DIFF_MAX_INPUT, differences - before);
}

static void differential_kdf(int algorithm, int cases) {
    long before = differences;
    char detail[160];
    for (int c = 0; c < cases; c++) {
        unsigned char pass[300], salt[64];
        int pass_sz = random_below(301), salt_sz = random_below(65), iterations = 1 + random_below(2000);
        int key_sz = 1 + random_below(64);
        random_bytes(pass, pass_sz);
        random_bytes(salt, salt_sz);
        memset(out_ref, 0, 64);
        memset(out_ours, 0xA5, 64);
        int rc_ref = ref.kdf(ref_ctx, algorithm, pass, pass_sz, salt, salt_sz, iterations, key_sz, out_ref);
        int rc_ours = ours.kdf(ours_ctx, algorithm, pass, pass_sz, salt, salt_sz, iterations, key_sz, out_ours);
        checks++;
        if (rc_ref != rc_ours || (rc_ref == SQLITE_OK && memcmp(out_ref, out_ours, (size_t)key_sz) != 0)) {
            snprintf(detail, sizeof detail, "password %d, salt %d bytes, %d iterations, key %d bytes: rc %d/%d",
                     pass_sz, salt_sz, iterations, key_sz, rc_ref, rc_ours);
            difference(kdf_name(algorithm), c, detail);
        }
    }
    printf("DIFF kdf %s: %d cases (passwords 0-300 bytes, salts 0-64, 1-2000 iterations, keys 1-64 bytes), "
           "%ld differences\n", kdf_name(algorithm), cases, differences - before);
}

static void differential_cipher(int cases) {
    long before = differences;
    char detail[160];
    if (ours.get_key_sz(ours_ctx) != ref.get_key_sz(ref_ctx) || ours.get_iv_sz(ours_ctx) != ref.get_iv_sz(ref_ctx)
        || ours.get_block_sz(ours_ctx) != ref.get_block_sz(ref_ctx)
        || strcmp(ours.get_cipher(ours_ctx), ref.get_cipher(ref_ctx)) != 0)
        difference("AES-256-CBC", -1, "key, IV or block size, or cipher name differs");
    for (int c = 0; c < cases; c++) {
        unsigned char key[32], iv[16];
        int mode = random_below(2) ? SQLCIPHER_ENCRYPT : SQLCIPHER_DECRYPT;
        int in_sz = 16 * random_below(DIFF_MAX_INPUT / 16 + 1);
        random_bytes(key, 32);
        random_bytes(iv, 16);
        random_bytes(in, in_sz);
        memset(out_ref, 0, (size_t)in_sz);
        memset(out_ours, 0xA5, (size_t)in_sz);
        int rc_ref = ref.cipher(ref_ctx, mode, key, 32, iv, in, in_sz, out_ref);
        int rc_ours = ours.cipher(ours_ctx, mode, key, 32, iv, in, in_sz, out_ours);
        // And back again through the other provider: what one writes, the other reads.
        int back = mode == SQLCIPHER_ENCRYPT ? SQLCIPHER_DECRYPT : SQLCIPHER_ENCRYPT;
        int rc_back = ref.cipher(ref_ctx, back, key, 32, iv, out_ours, in_sz, round_trip);
        checks += 2;
        if (rc_ref != SQLITE_OK || rc_ours != SQLITE_OK || memcmp(out_ref, out_ours, (size_t)in_sz) != 0) {
            snprintf(detail, sizeof detail, "%s %d bytes: rc %d/%d, outputs differ",
                     mode == SQLCIPHER_ENCRYPT ? "encrypt" : "decrypt", in_sz, rc_ref, rc_ours);
            difference("AES-256-CBC", c, detail);
        }
        if (rc_back != SQLITE_OK || memcmp(round_trip, in, (size_t)in_sz) != 0) {
            snprintf(detail, sizeof detail, "%s %d bytes by ours, the reverse by the reference: not the input",
                     mode == SQLCIPHER_ENCRYPT ? "encrypt" : "decrypt", in_sz);
            difference("AES-256-CBC round trip", c, detail);
        }
    }
    printf("DIFF cipher AES-256-CBC: %d cases (both directions, 0-%d bytes, random keys and IVs; each output "
           "also taken back by the other provider), %ld differences\n", cases, DIFF_MAX_INPUT, differences - before);
}

int main(int argc, char **argv) {
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    int scale = argc > 2 ? atoi(argv[2]) : 1;
    rng_state = seed;
    if (sqlite3_initialize() != SQLITE_OK) { printf("sqlite3_initialize failed\n"); return 2; }
    sqlcipher_openssl_setup(&ref);
    sqlcipherkit_openssl_setup(&ours);
    int ref_rc = ref.ctx_init(&ref_ctx), ours_rc = ours.ctx_init(&ours_ctx);
    if (ref_rc != SQLITE_OK || ours_rc != SQLITE_OK) {
        printf("ctx_init failed: reference provider rc %d, sqlcipherkit provider rc %d\n", ref_rc, ours_rc);
        return 2;
    }
    printf("differential: seed %" PRIu64 ", %s\n", seed, OpenSSL_version(OPENSSL_VERSION));
    {
        // The paths SQLCipherKit's provider chose in ctx_init (its context is this program's to read: the provider's
        // source is included above).
        const sqlcipherkit_provider_ctx *o = ours_ctx;
        const OSSL_PROVIDER *serving = EVP_CIPHER_get0_provider(o->cipher);
        printf("sqlcipherkit provider: AES-256-CBC %s, HMAC %s (AES served by OpenSSL's \"%s\" provider, FIPS default "
               "properties %s)\n", o->aes != NULL ? "direct" : o->evp != NULL ? "through EVP" : "none",
               o->mac != NULL ? "through EVP_MAC" : "by hand", serving ? OSSL_PROVIDER_get0_name(serving) : "?",
               EVP_default_properties_is_fips_enabled(NULL) ? "on" : "off");
    }
    known_answers();
    int algorithms[3] = {SQLCIPHER_HMAC_SHA1, SQLCIPHER_HMAC_SHA256, SQLCIPHER_HMAC_SHA512};
    int kdfs[3] = {SQLCIPHER_PBKDF2_HMAC_SHA1, SQLCIPHER_PBKDF2_HMAC_SHA256, SQLCIPHER_PBKDF2_HMAC_SHA512};
    for (int a = 0; a < 3; a++) differential_hmac(algorithms[a], 1000 * scale);
    for (int a = 0; a < 3; a++) differential_kdf(kdfs[a], 100 * scale);
    differential_cipher(1000 * scale);
    ours.ctx_free(&ours_ctx);
    ref.ctx_free(&ref_ctx);
    printf("TOTAL: %ld checks, %ld differences (seed %" PRIu64 ")\n", checks, differences, seed);
    return differences == 0 ? 0 : 1;
}
