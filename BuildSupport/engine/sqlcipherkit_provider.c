// SQLCipherKit's crypto provider for SQLCipher: OpenSSL's libcrypto, with the per-page work of SQLCipher's
// reference provider (src/crypto_openssl.c) minus its per-page set-up. SQLCipherKit's own code (this file), not
// SQLCipher's.
//
// How it gets in: build-sqlcipher.sh appends this file to the generated amalgamation (SQLCipher's documented
// route, `make sqlite3.c EXTRA_SRC=…`), so it compiles inside sqlite3.c after SQLCipher's own declarations
// (sqlcipher_provider, SQLITE_OK, …), and the pin's -DSQLCIPHER_CRYPTO_CUSTOM=sqlcipherkit_openssl_setup makes it
// the provider sqlcipher_extra_init registers. Upstream's test suite and the fuzzer run on it the same way.
//
// Why: the reference provider is, by its own header, "intentionally non-optimized": for every page it fetches
// HMAC from OpenSSL's provider store, allocates and frees an EVP_MAC_CTX and an EVP_CIPHER_CTX, and keys both
// (BENCHMARKS.md: 1.27x the crypto floor in instructions). This one computes the HMAC with libcrypto's SHA
// functions on its own stack, and fetches AES-256-CBC once per codec context and runs it through the serving
// OpenSSL provider's own functions on one context kept there, so a page costs the cryptography itself plus the
// two keyings: no allocation, no lookup (1.07x the floor).
//
// What it keeps of SQLCipher's key shielding: the codec unmasks a key only around each hmac/cipher call, and so
// no key, key schedule or keyed hash state outlives a call here either. The HMAC (RFC 2104) keeps its key pads,
// hash state and inner digest on the stack and wipes them with OPENSSL_cleanse before returning; the cipher
// context is keyed for the page and re-keyed with zeros before returning, which overwrites its AES key schedule
// (KeyHygieneTests scans the memory of a process with such connections open for the key's bytes). What stays
// between calls: the algorithm object and a cipher context keyed with zeros.
//
// When it takes the fast paths, and when not (fallbacks that stay correct, at the reference provider's speed):
// AES-256-CBC goes through the serving provider's functions directly only when OpenSSL's own `default` provider
// serves it (openssl.cnf decides which provider does) and FIPS default properties are off; otherwise through EVP
// on a kept EVP_CIPHER_CTX, re-keyed with zeros the same way. The HMAC goes through EVP_MAC (in the provider that
// serves HMAC: the FIPS module under FIPS properties) when FIPS default properties are on, and always when the
// headers lack the low-level SHA API (OPENSSL_NO_DEPRECATED_3_0); otherwise by hand as above. Tests: the
// differential test runs compiled as is, with -DOPENSSL_NO_DEPRECATED_3_0, and with -DSQLCIPHERKIT_PROVIDER_EVP
// (a test-only flag taking both EVP paths).
#if defined(SQLITE_HAS_CODEC) && defined(SQLCIPHER_CRYPTO_CUSTOM)
// The SHA functions below are deprecated in OpenSSL 3 (see sqlcipherkit_sha_ctx): declared without a warning.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/core_dispatch.h> /* amalgamator: dontcache */
#include <openssl/core_names.h> /* amalgamator: dontcache */
#include <openssl/crypto.h> /* amalgamator: dontcache */
#include <openssl/err.h> /* amalgamator: dontcache */
#include <openssl/evp.h> /* amalgamator: dontcache */
#include <openssl/objects.h> /* amalgamator: dontcache */
#include <openssl/params.h> /* amalgamator: dontcache */
#include <openssl/provider.h> /* amalgamator: dontcache */
#include <openssl/rand.h> /* amalgamator: dontcache */
#include <openssl/sha.h> /* amalgamator: dontcache */
#include <string.h> /* amalgamator: dontcache */

// SHA-512's block; SHA-1's and SHA-256's are 64 bytes.
#define SQLCIPHERKIT_MAX_BLOCK 128
#define SQLCIPHERKIT_MAX_DIGEST 64
// AES-256's key and CBC's IV (one block).
#define SQLCIPHERKIT_AES_KEY 32
#define SQLCIPHERKIT_AES_BLOCK 16

// AES-256-CBC as the OpenSSL provider that serves it implements it, called through that provider's dispatch
// table (OpenSSL's public provider interface, <openssl/core_dispatch.h>). EVP_CipherInit_ex2 in OpenSSL 3.0 asks
// the provider for the key and IV lengths through parameter lists on every call (about 2,000 instructions a
// page, more than setting the AES key itself); the functions below are the ones EVP calls after that.
typedef struct sqlcipherkit_provider_ctx {
    EVP_CIPHER *cipher;                                // fetched once; holds the provider (and its functions)
    void *aes;                                         // the direct path: the provider's AES-256-CBC context,
                                                       // padding off; keyed with zeros between calls
    EVP_CIPHER_CTX *evp;                               // the EVP path (see sqlcipherkit_direct_allowed): an EVP
                                                       // context, padding off; keyed with zeros between calls
    EVP_MAC *mac;                                      // HMAC through EVP (FIPS properties on, or no low-level
                                                       // SHA API); NULL: the HMAC by hand below
    OSSL_FUNC_cipher_encrypt_init_fn *encrypt_init;
    OSSL_FUNC_cipher_decrypt_init_fn *decrypt_init;
    OSSL_FUNC_cipher_update_fn *update;
    OSSL_FUNC_cipher_final_fn *final;
    OSSL_FUNC_cipher_freectx_fn *freectx;
    int failed;                                        // a cipher, HMAC or random call failed: every later one
                                                       // on this context fails too (sqlcipherkit_fail)
} sqlcipherkit_provider_ctx;

// Fault injection, for the tests only (Tests/CryptoProvider/faults.c compiles this file with
// -DSQLCIPHERKIT_PROVIDER_FAULTS; the engine never is, and verify-symbols.sh refuses an archive that defines
// sqlcipherkit_fault_arm). sqlcipherkit_fault_arm(kind, n) makes the n-th call of that kind from then on fail as
// OpenSSL failing would: the AES fetch in ctx_init, a cipher update or final, the zero re-keying after a page,
// RAND_bytes, or an HMAC.
enum {
    SQLCIPHERKIT_FAULT_NONE, SQLCIPHERKIT_FAULT_FETCH, SQLCIPHERKIT_FAULT_UPDATE, SQLCIPHERKIT_FAULT_FINAL,
    SQLCIPHERKIT_FAULT_REKEY, SQLCIPHERKIT_FAULT_RANDOM, SQLCIPHERKIT_FAULT_HMAC
};
#if defined(SQLCIPHERKIT_PROVIDER_FAULTS)
static int sqlcipherkit_fault_kind;
static long sqlcipherkit_fault_countdown, sqlcipherkit_fault_hits;
void sqlcipherkit_fault_arm(int kind, long n) {
    sqlcipherkit_fault_kind = kind;
    sqlcipherkit_fault_countdown = n;
}
long sqlcipherkit_fault_hit_count(void) { return sqlcipherkit_fault_hits; }
static int sqlcipherkit_fault(int kind) {
    if (kind != sqlcipherkit_fault_kind || sqlcipherkit_fault_countdown <= 0 || --sqlcipherkit_fault_countdown > 0)
        return 0;
    sqlcipherkit_fault_hits++;
    return 1;
}
#define SQLCIPHERKIT_FAULT(kind) sqlcipherkit_fault(SQLCIPHERKIT_FAULT_##kind)
#else
#define SQLCIPHERKIT_FAULT(kind) 0
#endif

static const unsigned char sqlcipherkit_zero_key[EVP_MAX_KEY_LENGTH];

// Logs and clears libcrypto's error queue (through SQLCipher's log, off unless PRAGMA cipher_log asks for it).
static void sqlcipherkit_log_errors(const char *where) {
    unsigned long err;
    char text[256];
    while ((err = ERR_get_error()) != 0) {
        ERR_error_string_n(err, text, sizeof text); // not ERR_error_string's shared static buffer
        sqlcipher_log(SQLCIPHER_LOG_ERROR, SQLCIPHER_LOG_PROVIDER, "%s: OpenSSL error %lx: %s", where, err, text);
    }
}

static const char *sqlcipherkit_get_provider_name(void *ctx) {
    (void)ctx;
    // The crypto library's name, as SQLCipher's providers name theirs; PRAGMA cipher_provider_version gives
    // OpenSSL's version.
    return "openssl";
}

static const char *sqlcipherkit_get_provider_version(void *ctx) {
    (void)ctx;
    return OpenSSL_version(OPENSSL_VERSION);
}

static int sqlcipherkit_add_random(void *ctx, const void *buffer, int length) {
    (void)ctx;
    RAND_add(buffer, length, 0);
    return SQLITE_OK;
}

// Fails closed: once a cipher, HMAC or random call fails on a codec's context, every later one does, until the
// context is freed (the database closed). SQLCipher itself puts the pager into a permanent error on the first
// failure (sqlite3Codec); this keeps the provider from ever serving that codec again either, whatever SQLite does
// with its pager afterwards. Logs libcrypto's errors and returns SQLITE_ERROR.
static int sqlcipherkit_fail(sqlcipherkit_provider_ctx *p, const char *where) {
    if (p != NULL) p->failed = 1;
    sqlcipherkit_log_errors(where);
    return SQLITE_ERROR;
}

// OpenSSL 3's RAND_bytes is thread-safe, so unlike the reference provider (written for OpenSSL 1.0 too) this
// takes no SQLCipher mutex around it (upstream's SQLCIPHER_OPENSSL_NO_MUTEX_RAND does the same).
static int sqlcipherkit_random(void *ctx, void *buffer, int length) {
    sqlcipherkit_provider_ctx *p = ctx;
    if ((p != NULL && p->failed) || SQLCIPHERKIT_FAULT(RANDOM) || RAND_bytes((unsigned char *)buffer, length) != 1)
        return sqlcipherkit_fail(p, "sqlcipherkit_random");
    return SQLITE_OK;
}

// SHA-1, SHA-256 or SHA-512 on a context of the caller's (on its stack): libcrypto's SHA functions, not EVP.
// OpenSSL 3.0's EVP_DigestInit_ex2 frees and allocates its provider context on every call (three times a
// page for an HMAC), and the EVP context would keep the last state; these work in place, allocate nothing, and
// leave nothing behind that the caller does not wipe. (Deprecated as an API in OpenSSL 3 in favour of EVP, not
// removed; the same assembly compresses the blocks either way.)
#if !defined(OPENSSL_NO_DEPRECATED_3_0)
#define SQLCIPHERKIT_HMAC_BY_HAND 1
typedef union sqlcipherkit_sha_ctx {
    SHA_CTX sha1;
    SHA256_CTX sha256;
    SHA512_CTX sha512;
} sqlcipherkit_sha_ctx;

static int sqlcipherkit_sha_block_size(int algorithm) {
    switch (algorithm) {
    case SQLCIPHER_HMAC_SHA1: return SHA_CBLOCK;
    case SQLCIPHER_HMAC_SHA256: return SHA256_CBLOCK;
    case SQLCIPHER_HMAC_SHA512: return SHA512_CBLOCK;
    default: return 0;
    }
}

static int sqlcipherkit_sha_init(int algorithm, sqlcipherkit_sha_ctx *c) {
    switch (algorithm) {
    case SQLCIPHER_HMAC_SHA1: return SHA1_Init(&c->sha1);
    case SQLCIPHER_HMAC_SHA256: return SHA256_Init(&c->sha256);
    case SQLCIPHER_HMAC_SHA512: return SHA512_Init(&c->sha512);
    default: return 0;
    }
}

static int sqlcipherkit_sha_update(int algorithm, sqlcipherkit_sha_ctx *c, const void *data, size_t length) {
    switch (algorithm) {
    case SQLCIPHER_HMAC_SHA1: return SHA1_Update(&c->sha1, data, length);
    case SQLCIPHER_HMAC_SHA256: return SHA256_Update(&c->sha256, data, length);
    case SQLCIPHER_HMAC_SHA512: return SHA512_Update(&c->sha512, data, length);
    default: return 0;
    }
}


// The digest's length: the HMAC's, which SQLCipher reserves on every page.
static int sqlcipherkit_sha_digest_size(int algorithm);

// Writes the digest into `out` (room for SQLCIPHERKIT_MAX_DIGEST bytes) and returns its length, 0 on failure.
static int sqlcipherkit_sha_final(int algorithm, sqlcipherkit_sha_ctx *c, unsigned char *out) {
    int ok;
    switch (algorithm) {
    case SQLCIPHER_HMAC_SHA1: ok = SHA1_Final(out, &c->sha1); break;
    case SQLCIPHER_HMAC_SHA256: ok = SHA256_Final(out, &c->sha256); break;
    case SQLCIPHER_HMAC_SHA512: ok = SHA512_Final(out, &c->sha512); break;
    default: ok = 0;
    }
    return ok ? sqlcipherkit_sha_digest_size(algorithm) : 0;
}

#endif

// The digest's length: the HMAC's, which SQLCipher reserves on every page.
static int sqlcipherkit_sha_digest_size(int algorithm) {
    switch (algorithm) {
    case SQLCIPHER_HMAC_SHA1: return 20;
    case SQLCIPHER_HMAC_SHA256: return 32;
    case SQLCIPHER_HMAC_SHA512: return 64;
    default: return 0;
    }
}

// HMAC(key, in || in2) through EVP_MAC, in the provider that serves HMAC (the FIPS module under FIPS properties):
// the reference provider's way. The EVP_MAC_CTX (key pads and hash state) is freed, and so cleansed, before returning.
static int sqlcipherkit_hmac_evp(EVP_MAC *mac, int algorithm, const unsigned char *key, int key_sz,
                                 const unsigned char *in, int in_sz, const unsigned char *in2, int in2_sz,
                                 unsigned char *out) {
    const char *digest = algorithm == SQLCIPHER_HMAC_SHA1 ? "SHA1"
                         : algorithm == SQLCIPHER_HMAC_SHA256 ? "SHA256"
                         : algorithm == SQLCIPHER_HMAC_SHA512 ? "SHA512" : NULL;
    OSSL_PARAM params[2];
    size_t out_sz = 0;
    EVP_MAC_CTX *c;
    int ok;
    if (digest == NULL || (c = EVP_MAC_CTX_new(mac)) == NULL) return 0;
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)digest, 0);
    params[1] = OSSL_PARAM_construct_end();
    ok = EVP_MAC_init(c, key, (size_t)key_sz, params) && EVP_MAC_update(c, in, (size_t)in_sz)
         && (in2 == NULL || EVP_MAC_update(c, in2, (size_t)in2_sz))
         && EVP_MAC_final(c, out, &out_sz, SQLCIPHERKIT_MAX_DIGEST)
         && out_sz == (size_t)sqlcipherkit_sha_digest_size(algorithm);
    EVP_MAC_CTX_free(c);
    return ok;
}

#if defined(SQLCIPHERKIT_HMAC_BY_HAND)
// HMAC(key, in || in2) per RFC 2104, by hand over the low-level SHA API (arguments checked by the caller). The key
// pads, the hash state (keyed midstates included) and the inner digest live on this stack frame and are wiped
// before returning.
static int sqlcipherkit_hmac_by_hand(int algorithm, const unsigned char *hmac_key, int key_sz,
                                     const unsigned char *in, int in_sz, const unsigned char *in2, int in2_sz,
                                     unsigned char *out) {
    unsigned char pad[SQLCIPHERKIT_MAX_BLOCK], inner[SQLCIPHERKIT_MAX_DIGEST], hashed_key[SQLCIPHERKIT_MAX_DIGEST];
    sqlcipherkit_sha_ctx sha;
    const unsigned char *key = hmac_key;
    int key_length = key_sz, block = sqlcipherkit_sha_block_size(algorithm), inner_sz = 0, ok = 0, i;
    if (block == 0) return SQLITE_ERROR;

    // A key longer than the block is hashed first (RFC 2104); SQLCipher's keys (32 bytes) never are.
    if (key_length > block) {
        if (!sqlcipherkit_sha_init(algorithm, &sha)
            || !sqlcipherkit_sha_update(algorithm, &sha, key, (size_t)key_length)
            || (key_length = sqlcipherkit_sha_final(algorithm, &sha, hashed_key)) == 0) goto done;
        key = hashed_key;
    }

    // Inner hash: H((key ^ ipad) || in || in2).
    memset(pad, 0x36, (size_t)block);
    for (i = 0; i < key_length; i++) pad[i] ^= key[i];
    if (!sqlcipherkit_sha_init(algorithm, &sha) || !sqlcipherkit_sha_update(algorithm, &sha, pad, (size_t)block)
        || !sqlcipherkit_sha_update(algorithm, &sha, in, (size_t)in_sz)
        || (in2 != NULL && !sqlcipherkit_sha_update(algorithm, &sha, in2, (size_t)in2_sz))
        || (inner_sz = sqlcipherkit_sha_final(algorithm, &sha, inner)) == 0) goto done;

    // Outer hash: H((key ^ opad) || inner).
    memset(pad, 0x5c, (size_t)block);
    for (i = 0; i < key_length; i++) pad[i] ^= key[i];
    if (!sqlcipherkit_sha_init(algorithm, &sha) || !sqlcipherkit_sha_update(algorithm, &sha, pad, (size_t)block)
        || !sqlcipherkit_sha_update(algorithm, &sha, inner, (size_t)inner_sz)
        || sqlcipherkit_sha_final(algorithm, &sha, out) == 0) goto done;
    ok = 1;

done:
    OPENSSL_cleanse(pad, sizeof pad);
    OPENSSL_cleanse(inner, sizeof inner);
    OPENSSL_cleanse(hashed_key, sizeof hashed_key);
    OPENSSL_cleanse(&sha, sizeof sha);
    return ok ? SQLITE_OK : SQLITE_ERROR;
}
#endif

// HMAC(key, in || in2): through EVP_MAC when ctx_init fetched it (sqlcipherkit_hmac_through_evp), else by hand.
static int sqlcipherkit_hmac(void *ctx, int algorithm, const unsigned char *hmac_key, int key_sz,
                             const unsigned char *in, int in_sz, const unsigned char *in2, int in2_sz,
                             unsigned char *out) {
    sqlcipherkit_provider_ctx *p = ctx;
    static const unsigned char no_key[1];
    int ok;
    if (in == NULL || in_sz < 0 || key_sz < 0 || (key_sz > 0 && hmac_key == NULL) || (in2 != NULL && in2_sz < 0)
        || sqlcipherkit_sha_digest_size(algorithm) == 0) return SQLITE_ERROR;
    if ((p != NULL && p->failed) || SQLCIPHERKIT_FAULT(HMAC)) return sqlcipherkit_fail(p, "sqlcipherkit_hmac");
    if (p != NULL && p->mac != NULL) {
        ok = sqlcipherkit_hmac_evp(p->mac, algorithm, key_sz > 0 ? hmac_key : no_key, key_sz, in, in_sz, in2, in2_sz,
                                   out);
    } else {
#if defined(SQLCIPHERKIT_HMAC_BY_HAND)
        ok = sqlcipherkit_hmac_by_hand(algorithm, hmac_key, key_sz, in, in_sz, in2, in2_sz, out) == SQLITE_OK;
#else
        ok = 0; // without the low-level SHA API ctx_init always fetches the EVP HMAC
#endif
    }
    return ok ? SQLITE_OK : sqlcipherkit_fail(p, "sqlcipherkit_hmac");
}

// PBKDF2 runs once per key derivation (opening, rekeying): libcrypto's own, as in the reference provider.
static int sqlcipherkit_kdf(void *ctx, int algorithm, const unsigned char *pass, int pass_sz,
                            const unsigned char *salt, int salt_sz, int workfactor, int key_sz, unsigned char *key) {
    const EVP_MD *md;
    (void)ctx;
    switch (algorithm) {
    case SQLCIPHER_PBKDF2_HMAC_SHA1: md = EVP_sha1(); break;
    case SQLCIPHER_PBKDF2_HMAC_SHA256: md = EVP_sha256(); break;
    case SQLCIPHER_PBKDF2_HMAC_SHA512: md = EVP_sha512(); break;
    default: return SQLITE_ERROR;
    }
    if (!PKCS5_PBKDF2_HMAC((const char *)pass, pass_sz, salt, salt_sz, workfactor, md, key_sz, key)) {
        sqlcipherkit_log_errors("sqlcipherkit_kdf");
        return SQLITE_ERROR;
    }
    return SQLITE_OK;
}

static const unsigned char sqlcipherkit_zero_iv[SQLCIPHERKIT_AES_BLOCK];

// AES-256-CBC through EVP, on the EVP context kept for the codec: the path when the direct one is not safe to take
// (sqlcipherkit_direct_allowed). Re-keyed with zeros before returning, as the direct path; a context that cannot
// be is freed (EVP cleanses it) and the codec context fails every page until it is opened again.
static int sqlcipherkit_cipher_evp(sqlcipherkit_provider_ctx *p, int mode, const unsigned char *key, int key_sz,
                                   const unsigned char *iv, const unsigned char *in, int in_sz, unsigned char *out) {
    int update_sz = 0, final_sz = 0, ok;
    if (key == NULL || iv == NULL || key_sz != SQLCIPHERKIT_AES_KEY || in_sz < 0
        || in_sz % SQLCIPHERKIT_AES_BLOCK != 0) return SQLITE_ERROR;
    ok = EVP_CipherInit_ex2(p->evp, NULL, key, iv, mode == SQLCIPHER_ENCRYPT ? 1 : 0, NULL)
         && !SQLCIPHERKIT_FAULT(UPDATE) && EVP_CipherUpdate(p->evp, out, &update_sz, in, in_sz)
         && !SQLCIPHERKIT_FAULT(FINAL) && EVP_CipherFinal_ex(p->evp, out + update_sz, &final_sz)
         && update_sz + final_sz == in_sz;
    if (SQLCIPHERKIT_FAULT(REKEY)
        || !EVP_CipherInit_ex2(p->evp, NULL, sqlcipherkit_zero_key, sqlcipherkit_zero_iv, 1, NULL)) {
        EVP_CIPHER_CTX_free(p->evp);
        p->evp = NULL;
        ok = 0;
    }
    return ok ? SQLITE_OK : sqlcipherkit_fail(p, "sqlcipherkit_cipher_evp");
}

// AES-256-CBC without padding over whole blocks, on the context kept for the codec.
static int sqlcipherkit_cipher(void *ctx, int mode, const unsigned char *key, int key_sz, const unsigned char *iv,
                               const unsigned char *in, int in_sz, unsigned char *out) {
    sqlcipherkit_provider_ctx *p = ctx;
    size_t update_sz = 0, final_sz = 0;
    int ok;
    if (p == NULL || p->failed) return sqlcipherkit_fail(p, "sqlcipherkit_cipher");
    if (p->evp != NULL) return sqlcipherkit_cipher_evp(p, mode, key, key_sz, iv, in, in_sz, out);
    if (p->aes == NULL || key == NULL || iv == NULL || key_sz != SQLCIPHERKIT_AES_KEY
        || in_sz < 0 || in_sz % SQLCIPHERKIT_AES_BLOCK != 0) return sqlcipherkit_fail(p, "sqlcipherkit_cipher");
    ok = (mode == SQLCIPHER_ENCRYPT
              ? p->encrypt_init(p->aes, key, SQLCIPHERKIT_AES_KEY, iv, SQLCIPHERKIT_AES_BLOCK, NULL)
              : p->decrypt_init(p->aes, key, SQLCIPHERKIT_AES_KEY, iv, SQLCIPHERKIT_AES_BLOCK, NULL))
        && !SQLCIPHERKIT_FAULT(UPDATE) && p->update(p->aes, out, &update_sz, (size_t)in_sz, in, (size_t)in_sz)
        && update_sz <= (size_t)in_sz
        && !SQLCIPHERKIT_FAULT(FINAL) && p->final(p->aes, out + update_sz, &final_sz, (size_t)in_sz - update_sz)
        && update_sz + final_sz == (size_t)in_sz;
    // Overwrite the key schedule before the key goes back under SQLCipher's shield (the encryption direction:
    // its schedule is the cheaper one to compute).
    if (SQLCIPHERKIT_FAULT(REKEY)
        || !p->encrypt_init(p->aes, sqlcipherkit_zero_key, SQLCIPHERKIT_AES_KEY, NULL, 0, NULL)) {
        // A context that cannot be re-keyed still holds the schedule: free it (the provider cleanses it) rather
        // than keep it; the codec context then fails every page until it is opened again.
        p->freectx(p->aes);
        p->aes = NULL;
        ok = 0;
    }
    return ok ? SQLITE_OK : sqlcipherkit_fail(p, "sqlcipherkit_cipher");
}

static const char *sqlcipherkit_get_cipher(void *ctx) {
    (void)ctx;
    return OBJ_nid2sn(EVP_CIPHER_nid(EVP_aes_256_cbc()));
}

static int sqlcipherkit_get_key_sz(void *ctx) { (void)ctx; return SQLCIPHERKIT_AES_KEY; }
static int sqlcipherkit_get_iv_sz(void *ctx) { (void)ctx; return SQLCIPHERKIT_AES_BLOCK; }
static int sqlcipherkit_get_block_sz(void *ctx) { (void)ctx; return SQLCIPHERKIT_AES_BLOCK; }
static int sqlcipherkit_get_hmac_sz(void *ctx, int algorithm) {
    (void)ctx;
    return sqlcipherkit_sha_digest_size(algorithm);
}

static int sqlcipherkit_ctx_free(void **ctx) {
    sqlcipherkit_provider_ctx *p = ctx ? *ctx : NULL;
    if (p == NULL) return SQLITE_OK;
    if (p->aes != NULL) p->freectx(p->aes); // the provider cleanses what it held
    EVP_CIPHER_CTX_free(p->evp);           // so does EVP
    EVP_MAC_free(p->mac);
    EVP_CIPHER_free(p->cipher);
    OPENSSL_clear_free(p, sizeof *p);
    *ctx = NULL;
    return SQLITE_OK;
}

// Whether `name` is one of the colon-separated names in `names` (OSSL_ALGORITHM's algorithm_names).
static int sqlcipherkit_names_contain(const char *names, const char *name) {
    size_t length = strlen(name);
    while (names != NULL && *names != '\0') {
        const char *end = strchr(names, ':');
        size_t size = end ? (size_t)(end - names) : strlen(names);
        if (size == length && OPENSSL_strncasecmp(names, name, length) == 0) return 1;
        names = end ? end + 1 : NULL;
    }
    return 0;
}

// Finds AES-256-CBC's functions in the dispatch table of the provider that serves p->cipher and makes a context
// with padding off.
static int sqlcipherkit_aes_setup(sqlcipherkit_provider_ctx *p) {
    const OSSL_PROVIDER *provider = EVP_CIPHER_get0_provider(p->cipher);
    const OSSL_ALGORITHM *algorithms;
    const OSSL_DISPATCH *function = NULL;
    OSSL_FUNC_cipher_newctx_fn *newctx = NULL;
    OSSL_FUNC_cipher_set_ctx_params_fn *set_ctx_params = NULL;
    unsigned int padding = 0;
    OSSL_PARAM params[2];
    int no_store = 0, i;
    if (provider == NULL) return 0;
    algorithms = OSSL_PROVIDER_query_operation(provider, OSSL_OP_CIPHER, &no_store);
    for (i = 0; algorithms != NULL && algorithms[i].algorithm_names != NULL; i++) {
        if (sqlcipherkit_names_contain(algorithms[i].algorithm_names, "AES-256-CBC")) {
            function = algorithms[i].implementation;
            break;
        }
    }
    for (; function != NULL && function->function_id != 0; function++) {
        switch (function->function_id) {
        case OSSL_FUNC_CIPHER_NEWCTX: newctx = OSSL_FUNC_cipher_newctx(function); break;
        case OSSL_FUNC_CIPHER_ENCRYPT_INIT: p->encrypt_init = OSSL_FUNC_cipher_encrypt_init(function); break;
        case OSSL_FUNC_CIPHER_DECRYPT_INIT: p->decrypt_init = OSSL_FUNC_cipher_decrypt_init(function); break;
        case OSSL_FUNC_CIPHER_UPDATE: p->update = OSSL_FUNC_cipher_update(function); break;
        case OSSL_FUNC_CIPHER_FINAL: p->final = OSSL_FUNC_cipher_final(function); break;
        case OSSL_FUNC_CIPHER_FREECTX: p->freectx = OSSL_FUNC_cipher_freectx(function); break;
        case OSSL_FUNC_CIPHER_SET_CTX_PARAMS: set_ctx_params = OSSL_FUNC_cipher_set_ctx_params(function); break;
        default: break;
        }
    }
    if (algorithms != NULL) OSSL_PROVIDER_unquery_operation(provider, OSSL_OP_CIPHER, algorithms);
    if (newctx == NULL || set_ctx_params == NULL || p->encrypt_init == NULL || p->decrypt_init == NULL
        || p->update == NULL || p->final == NULL || p->freectx == NULL) return 0;
    if ((p->aes = newctx(OSSL_PROVIDER_get0_provider_ctx(provider))) == NULL) return 0;
    params[0] = OSSL_PARAM_construct_uint(OSSL_CIPHER_PARAM_PADDING, &padding);
    params[1] = OSSL_PARAM_construct_end();
    return set_ctx_params(p->aes, params);
}

// Whether AES-256-CBC may be run through the serving provider's functions directly: only when OpenSSL's own
// `default` provider serves it (whose context layout and zero re-keying the key hygiene rests on, and which
// KeyHygieneTests measures) and FIPS default properties are off. Otherwise (another provider chosen by
// openssl.cnf, the FIPS module) the EVP path: correct and slower, whatever the provider. SQLCIPHERKIT_PROVIDER_EVP
// (a compile-time flag, for the tests) takes the EVP paths always.
static int sqlcipherkit_direct_allowed(const EVP_CIPHER *cipher) {
#if defined(SQLCIPHERKIT_PROVIDER_EVP)
    (void)cipher;
    return 0;
#else
    const OSSL_PROVIDER *provider = EVP_CIPHER_get0_provider(cipher);
    return provider != NULL && strcmp(OSSL_PROVIDER_get0_name(provider), "default") == 0
           && !EVP_default_properties_is_fips_enabled(NULL);
#endif
}

// Whether the HMAC goes through EVP_MAC: under FIPS default properties (so that it runs in the FIPS module, as AES
// and PBKDF2 do), when the headers lack the low-level SHA API, and with SQLCIPHERKIT_PROVIDER_EVP.
static int sqlcipherkit_hmac_through_evp(void) {
#if !defined(SQLCIPHERKIT_HMAC_BY_HAND) || defined(SQLCIPHERKIT_PROVIDER_EVP)
    return 1;
#else
    return EVP_default_properties_is_fips_enabled(NULL);
#endif
}

// The EVP path's context: AES-256-CBC keyed with zeros, padding off.
static int sqlcipherkit_evp_setup(sqlcipherkit_provider_ctx *p) {
    return (p->evp = EVP_CIPHER_CTX_new()) != NULL
           && EVP_CipherInit_ex2(p->evp, p->cipher, sqlcipherkit_zero_key, sqlcipherkit_zero_iv, 1, NULL)
           && EVP_CIPHER_CTX_set_padding(p->evp, 0);
}

// The cipher path: direct when allowed and the serving provider's table has what it needs, else EVP.
static int sqlcipherkit_cipher_setup(sqlcipherkit_provider_ctx *p) {
    if (sqlcipherkit_direct_allowed(p->cipher)) {
        if (sqlcipherkit_aes_setup(p)) return 1;
        if (p->aes != NULL) p->freectx(p->aes);
        p->aes = NULL;
    }
    return sqlcipherkit_evp_setup(p);
}

// A context for a codec (a keyed database): AES-256-CBC fetched and set up, and the EVP HMAC when it is used. If
// OpenSSL cannot serve them, SQLITE_ERROR: SQLCipher then fails the keying (sqlite3_key_v2: the open of that
// encrypted database), and nothing else.
//
// SQLCipher's own initialisation (sqlcipher_extra_init, run by sqlite3_initialize before any connection) also
// makes a context, only to draw random bytes from it (the shield mask, its PRNG's seed) and free it at once. That
// one gets no cipher: sqlite3_initialize then needs RAND_bytes only, as with the reference provider (whose
// ctx_init fetches nothing), so a machine whose OpenSSL cannot serve AES still opens plaintext databases (SQLite
// itself, :memory:, the CLI's `inspect`) and fails encrypted opens with an error that says so. sqlcipher_init
// (SQLCipher's, in the same amalgamation) is 0 exactly while that initialisation runs.
// Whether the last codec context's set-up found AES-256-CBC (or the EVP HMAC) unavailable: read by
// sqlcipherkit_provider_unavailable (below) when keying fails.
static volatile int sqlcipherkit_unavailable;

static int sqlcipherkit_ctx_init(void **ctx) {
    sqlcipherkit_provider_ctx *p = OPENSSL_zalloc(sizeof *p);
    if (p == NULL) return SQLITE_NOMEM;
    *ctx = p;
    if (!sqlcipher_init) {
        // Random bytes are all SQLCipher asks of this context; if OpenSSL cannot give them (FIPS default properties
        // without a FIPS module: no DRBG either), fail here, with no context, so that sqlite3_initialize fails
        // cleanly. Were the context returned, sqlcipher_extra_init's error path (in the pinned SQLCipher) would call
        // ctx_free through its provider table after freeing the private heap that table lives in (seen: SIGSEGV).
        unsigned char probe;
        int ok = SQLCIPHERKIT_FAULT(RANDOM) ? 0 : RAND_bytes(&probe, 1) == 1;
        OPENSSL_cleanse(&probe, sizeof probe);
        if (ok) return SQLITE_OK;
        sqlcipherkit_log_errors("sqlcipherkit_ctx_init: RAND_bytes");
        sqlcipherkit_ctx_free(ctx);
        return SQLITE_ERROR;
    }
    p->cipher = SQLCIPHERKIT_FAULT(FETCH) ? NULL : EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL);
    if (p->cipher == NULL || EVP_CIPHER_get_key_length(p->cipher) != SQLCIPHERKIT_AES_KEY
        || EVP_CIPHER_get_iv_length(p->cipher) != SQLCIPHERKIT_AES_BLOCK
        || !sqlcipherkit_cipher_setup(p)
        || (sqlcipherkit_hmac_through_evp() && (p->mac = EVP_MAC_fetch(NULL, "HMAC", NULL)) == NULL)) {
        sqlcipher_log(SQLCIPHER_LOG_ERROR, SQLCIPHER_LOG_PROVIDER,
                      "sqlcipherkit_ctx_init: AES-256-CBC (or HMAC) is not available from OpenSSL's providers");
        sqlcipherkit_log_errors("sqlcipherkit_ctx_init");
        sqlcipherkit_ctx_free(ctx);
        sqlcipherkit_unavailable = 1;
        return SQLITE_ERROR;
    }
    sqlcipherkit_unavailable = 0;
    return SQLITE_OK;
}

// For the Swift layer's errors (Sources/CSQLCipher/shim.h; the reference provider's engine defines both in the
// crypto glue, returning 0). SQLite reports a failed page cipher as whatever the pager makes of it ("file is not
// a database", "database disk image is malformed", "out of memory"): these tell SQLCipherKit that the crypto
// provider failed instead, so the error says that rather than call an intact file corrupt or the key wrong.

// 1 when the crypto provider has failed on a codec of connection `db` (any schema): the connection stays unusable
// (sqlcipherkit_fail) until closed; the file holds what the last successful commit wrote.
int sqlcipherkit_provider_failed(void *connection) {
    sqlite3 *db = connection;
    int i, failed = 0;
    if (db == NULL) return 0;
    sqlite3_mutex_enter(db->mutex);
    for (i = 0; i < db->nDb && !failed; i++) {
        Btree *bt = db->aDb[i].pBt;
        codec_ctx *codec = bt != NULL ? (codec_ctx *)sqlcipherPagerGetCodec(sqlite3BtreePager(bt)) : NULL;
        sqlcipherkit_provider_ctx *p = codec != NULL ? codec->provider_ctx : NULL;
        failed = p != NULL && p->failed;
    }
    sqlite3_mutex_leave(db->mutex);
    return failed;
}

// 1 when encrypted opens cannot work for want of OpenSSL: SQLCipher's own initialisation failed (no random bytes:
// sqlite3_initialize failed once, and SQLite, which counts itself initialised after that first call, opens plaintext
// databases while SQLCipher refuses every keying with that error), or the last encrypted open (keying) found
// AES-256-CBC, or the HMAC through EVP, unavailable from OpenSSL's providers (openssl.cnf, FIPS properties without
// a FIPS module…). SQLCipher fails the keying with a bare SQLITE_ERROR in both cases. Asked after a keying failed.
int sqlcipherkit_provider_unavailable(void) { return !sqlcipher_init || sqlcipherkit_unavailable; }

static int sqlcipherkit_fips_status(void *ctx) { (void)ctx; return 0; }

// Named by -DSQLCIPHER_CRYPTO_CUSTOM in Vendor/sqlcipher.pin; sqlcipher_extra_init calls it and registers the
// provider it fills.
int sqlcipherkit_openssl_setup(sqlcipher_provider *p) {
    memset(p, 0, sizeof *p);
    p->get_provider_name = sqlcipherkit_get_provider_name;
    p->add_random = sqlcipherkit_add_random;
    p->random = sqlcipherkit_random;
    p->hmac = sqlcipherkit_hmac;
    p->kdf = sqlcipherkit_kdf;
    p->cipher = sqlcipherkit_cipher;
    p->get_cipher = sqlcipherkit_get_cipher;
    p->get_key_sz = sqlcipherkit_get_key_sz;
    p->get_iv_sz = sqlcipherkit_get_iv_sz;
    p->get_block_sz = sqlcipherkit_get_block_sz;
    p->get_hmac_sz = sqlcipherkit_get_hmac_sz;
    p->ctx_init = sqlcipherkit_ctx_init;
    p->ctx_free = sqlcipherkit_ctx_free;
    p->fips_status = sqlcipherkit_fips_status;
    p->get_provider_version = sqlcipherkit_get_provider_version;
    return SQLITE_OK;
}
#endif
