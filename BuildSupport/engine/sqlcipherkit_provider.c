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
// (BENCHMARKS.md: 1.27x the crypto floor in instructions). This one fetches SHA-1/256/512 and AES-256-CBC once
// per codec context and keeps one digest context and one cipher context there, so a page costs the crypto
// itself plus the two keyings: no allocation, no lookup.
//
// What it keeps of SQLCipher's key shielding: the codec unmasks a key only around each hmac/cipher call, and so
// no key, key schedule or keyed hash state outlives a call here either. The HMAC is computed with the digest
// directly (RFC 2104): its ipad/opad blocks live on the stack and are wiped with OPENSSL_cleanse before
// returning, and the keyed midstates they produce are overwritten by the hashing that follows within the call.
// The cipher context is keyed for the page and re-keyed with zeros before returning, which overwrites its AES
// key schedule. What stays between calls: the algorithm objects and, in the digest context, the last outer
// hash's output and final block (the page's MAC, which SQLCipher writes to the page anyway, and the inner
// digest: neither gives the key).
#if defined(SQLITE_HAS_CODEC) && defined(SQLCIPHER_CRYPTO_CUSTOM)
#include <openssl/crypto.h> /* amalgamator: dontcache */
#include <openssl/err.h> /* amalgamator: dontcache */
#include <openssl/evp.h> /* amalgamator: dontcache */
#include <openssl/objects.h> /* amalgamator: dontcache */
#include <openssl/rand.h> /* amalgamator: dontcache */
#include <string.h> /* amalgamator: dontcache */

// SHA-512's block; SHA-1's and SHA-256's are 64 bytes.
#define SQLCIPHERKIT_MAX_BLOCK 128
#define SQLCIPHERKIT_MAX_DIGEST 64

typedef struct sqlcipherkit_provider_ctx {
    EVP_MD *digests[3];           // fetched on first use, by SQLCIPHER_HMAC_SHA1/256/512 (no key material)
    EVP_MD_CTX *digest_ctx;       // reused for every HMAC; holds no keyed state between calls
    EVP_CIPHER *cipher;           // AES-256-CBC, fetched once
    EVP_CIPHER_CTX *cipher_ctx;   // reused for every page; re-keyed with zeros after each call
    int cipher_ready;             // cipher_ctx has the cipher and padding off
} sqlcipherkit_provider_ctx;

static const char *const sqlcipherkit_digest_names[3] = { "SHA1", "SHA256", "SHA512" };
static const unsigned char sqlcipherkit_zero_key[EVP_MAX_KEY_LENGTH];

static void sqlcipherkit_log_errors(const char *where) {
    unsigned long err;
    while ((err = ERR_get_error()) != 0) {
        sqlcipher_log(SQLCIPHER_LOG_ERROR, SQLCIPHER_LOG_PROVIDER, "%s: OpenSSL error %lx: %s", where, err,
                      ERR_error_string(err, NULL));
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

// OpenSSL 3's RAND_bytes is thread-safe, so unlike the reference provider (written for OpenSSL 1.0 too) this
// takes no SQLCipher mutex around it (upstream's SQLCIPHER_OPENSSL_NO_MUTEX_RAND does the same).
static int sqlcipherkit_random(void *ctx, void *buffer, int length) {
    (void)ctx;
    if (RAND_bytes((unsigned char *)buffer, length) != 1) {
        sqlcipherkit_log_errors("sqlcipherkit_random");
        return SQLITE_ERROR;
    }
    return SQLITE_OK;
}

static EVP_MD *sqlcipherkit_digest(sqlcipherkit_provider_ctx *p, int algorithm) {
    if (algorithm < SQLCIPHER_HMAC_SHA1 || algorithm > SQLCIPHER_HMAC_SHA512) return NULL;
    if (p->digests[algorithm] == NULL) {
        p->digests[algorithm] = EVP_MD_fetch(NULL, sqlcipherkit_digest_names[algorithm], NULL);
        if (p->digests[algorithm] == NULL) sqlcipherkit_log_errors("sqlcipherkit_digest");
    }
    return p->digests[algorithm];
}

// HMAC(key, in || in2) per RFC 2104 through one reused digest context.
static int sqlcipherkit_hmac(void *ctx, int algorithm, const unsigned char *hmac_key, int key_sz,
                             const unsigned char *in, int in_sz, const unsigned char *in2, int in2_sz,
                             unsigned char *out) {
    sqlcipherkit_provider_ctx *p = ctx;
    unsigned char pad[SQLCIPHERKIT_MAX_BLOCK], inner[SQLCIPHERKIT_MAX_DIGEST], hashed_key[SQLCIPHERKIT_MAX_DIGEST];
    unsigned int inner_sz = 0, out_sz = 0;
    const unsigned char *key = hmac_key;
    size_t key_length = key_sz > 0 ? (size_t)key_sz : 0;
    int ok = 0, block, i;
    EVP_MD *md;

    if (p == NULL || in == NULL || in_sz < 0 || (in2 != NULL && in2_sz < 0)
        || (md = sqlcipherkit_digest(p, algorithm)) == NULL) return SQLITE_ERROR;
    block = EVP_MD_get_block_size(md);
    if (block <= 0 || block > SQLCIPHERKIT_MAX_BLOCK || EVP_MD_get_size(md) > SQLCIPHERKIT_MAX_DIGEST) return SQLITE_ERROR;

    // A key longer than the block is hashed first (RFC 2104); SQLCipher's keys (32 bytes) never are.
    if (key_length > (size_t)block) {
        unsigned int hashed_sz = 0;
        if (!EVP_DigestInit_ex2(p->digest_ctx, md, NULL) || !EVP_DigestUpdate(p->digest_ctx, key, key_length)
            || !EVP_DigestFinal_ex(p->digest_ctx, hashed_key, &hashed_sz)) goto done;
        key = hashed_key;
        key_length = hashed_sz;
    }

    // Inner hash: H((key ^ ipad) || in || in2).
    memset(pad, 0x36, (size_t)block);
    for (i = 0; i < (int)key_length; i++) pad[i] ^= key[i];
    if (!EVP_DigestInit_ex2(p->digest_ctx, md, NULL) || !EVP_DigestUpdate(p->digest_ctx, pad, (size_t)block)
        || !EVP_DigestUpdate(p->digest_ctx, in, (size_t)in_sz)
        || (in2 != NULL && !EVP_DigestUpdate(p->digest_ctx, in2, (size_t)in2_sz))
        || !EVP_DigestFinal_ex(p->digest_ctx, inner, &inner_sz)) goto done;

    // Outer hash: H((key ^ opad) || inner).
    memset(pad, 0x5c, (size_t)block);
    for (i = 0; i < (int)key_length; i++) pad[i] ^= key[i];
    if (!EVP_DigestInit_ex2(p->digest_ctx, md, NULL) || !EVP_DigestUpdate(p->digest_ctx, pad, (size_t)block)
        || !EVP_DigestUpdate(p->digest_ctx, inner, inner_sz)
        || !EVP_DigestFinal_ex(p->digest_ctx, out, &out_sz)) goto done;
    ok = 1;

done:
    OPENSSL_cleanse(pad, sizeof pad);
    OPENSSL_cleanse(inner, sizeof inner);
    OPENSSL_cleanse(hashed_key, sizeof hashed_key);
    if (!ok) {
        sqlcipherkit_log_errors("sqlcipherkit_hmac");
        return SQLITE_ERROR;
    }
    return SQLITE_OK;
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

// AES-256-CBC without padding over whole blocks, on the context kept for the codec.
static int sqlcipherkit_cipher(void *ctx, int mode, const unsigned char *key, int key_sz, const unsigned char *iv,
                               const unsigned char *in, int in_sz, unsigned char *out) {
    sqlcipherkit_provider_ctx *p = ctx;
    int update_sz = 0, final_sz = 0, ok;
    if (p == NULL || key_sz != EVP_CIPHER_get_key_length(p->cipher) || in_sz < 0) return SQLITE_ERROR;
    if (!p->cipher_ready) {
        // First use: the cipher and padding off (both kept when later calls set the key, IV and direction).
        if (!EVP_CipherInit_ex2(p->cipher_ctx, p->cipher, NULL, NULL, mode, NULL)
            || !EVP_CIPHER_CTX_set_padding(p->cipher_ctx, 0)) {
            sqlcipherkit_log_errors("sqlcipherkit_cipher");
            return SQLITE_ERROR;
        }
        p->cipher_ready = 1;
    }
    ok = EVP_CipherInit_ex2(p->cipher_ctx, NULL, key, iv, mode, NULL)
        && EVP_CipherUpdate(p->cipher_ctx, out, &update_sz, in, in_sz)
        && EVP_CipherFinal_ex(p->cipher_ctx, out + update_sz, &final_sz)
        && update_sz + final_sz == in_sz;
    // Overwrite the key schedule before the key goes back under SQLCipher's shield (the encryption direction:
    // its schedule is the cheaper one to compute, and the next call sets key and direction anew).
    if (!EVP_CipherInit_ex2(p->cipher_ctx, NULL, sqlcipherkit_zero_key, NULL, SQLCIPHER_ENCRYPT, NULL)) {
        // A context that cannot be re-keyed still holds the schedule: free it rather than keep it.
        EVP_CIPHER_CTX_reset(p->cipher_ctx);
        p->cipher_ready = 0;
        ok = 0;
    }
    if (!ok) {
        sqlcipherkit_log_errors("sqlcipherkit_cipher");
        return SQLITE_ERROR;
    }
    return SQLITE_OK;
}

static const char *sqlcipherkit_get_cipher(void *ctx) {
    (void)ctx;
    return OBJ_nid2sn(EVP_CIPHER_nid(EVP_aes_256_cbc()));
}

static int sqlcipherkit_get_key_sz(void *ctx) { (void)ctx; return EVP_CIPHER_key_length(EVP_aes_256_cbc()); }
static int sqlcipherkit_get_iv_sz(void *ctx) { (void)ctx; return EVP_CIPHER_iv_length(EVP_aes_256_cbc()); }
static int sqlcipherkit_get_block_sz(void *ctx) { (void)ctx; return EVP_CIPHER_block_size(EVP_aes_256_cbc()); }

static int sqlcipherkit_get_hmac_sz(void *ctx, int algorithm) {
    (void)ctx;
    switch (algorithm) {
    case SQLCIPHER_HMAC_SHA1: return EVP_MD_size(EVP_sha1());
    case SQLCIPHER_HMAC_SHA256: return EVP_MD_size(EVP_sha256());
    case SQLCIPHER_HMAC_SHA512: return EVP_MD_size(EVP_sha512());
    default: return 0;
    }
}

static int sqlcipherkit_ctx_free(void **ctx) {
    sqlcipherkit_provider_ctx *p = ctx ? *ctx : NULL;
    int i;
    if (p == NULL) return SQLITE_OK;
    EVP_CIPHER_CTX_free(p->cipher_ctx); // cleanses what it held
    EVP_MD_CTX_free(p->digest_ctx);
    EVP_CIPHER_free(p->cipher);
    for (i = 0; i < 3; i++) EVP_MD_free(p->digests[i]);
    OPENSSL_clear_free(p, sizeof *p);
    *ctx = NULL;
    return SQLITE_OK;
}

static int sqlcipherkit_ctx_init(void **ctx) {
    sqlcipherkit_provider_ctx *p = OPENSSL_zalloc(sizeof *p);
    if (p == NULL) return SQLITE_NOMEM;
    *ctx = p;
    p->cipher = EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL);
    p->cipher_ctx = EVP_CIPHER_CTX_new();
    p->digest_ctx = EVP_MD_CTX_new();
    if (p->cipher == NULL || p->cipher_ctx == NULL || p->digest_ctx == NULL) {
        sqlcipherkit_log_errors("sqlcipherkit_ctx_init");
        sqlcipherkit_ctx_free(ctx);
        return SQLITE_ERROR;
    }
    return SQLITE_OK;
}

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
