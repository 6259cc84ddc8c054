// A test-only OpenSSL 3 provider module, "aesproxy", serving AES-256-CBC and nothing else: SQLCipherKit's own file,
// built by run-differential.sh and run-matrix.sh into Vendor/build/crypto-provider/ (never shipped).
//
// Why: SQLCipherKit's crypto provider takes its direct AES path only when OpenSSL's own `default` provider serves
// AES-256-CBC; when openssl.cnf has another provider serve it, it must take the EVP path. This machine has no second
// provider with AES (no FIPS module), so this one stands in: loaded through OPENSSL_CONF with
// `default_properties = ?provider=aesproxy`, it is what EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL) returns. It does
// the cipher itself with OpenSSL's default provider in a library context of its own (so the fetch there never comes
// back here), and counts what it served: with AESPROXY_REPORT set it prints "aesproxy: N cipher contexts, M
// updates" to stderr when unloaded, so a test can see that it, and not OpenSSL's default provider, did the work.
#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    EVP_CIPHER_CTX *evp;
    unsigned int padding;
} proxy_ctx;

static OSSL_LIB_CTX *inner;   // a library context of its own: OpenSSL's default provider, no openssl.cnf
static EVP_CIPHER *aes;
static long contexts, updates;

static void *proxy_newctx(void *provctx) {
    (void)provctx;
    if (aes == NULL && (aes = EVP_CIPHER_fetch(inner, "AES-256-CBC", NULL)) == NULL) return NULL;
    proxy_ctx *c = calloc(1, sizeof *c);
    if (c == NULL || (c->evp = EVP_CIPHER_CTX_new()) == NULL) { free(c); return NULL; }
    c->padding = 1;
    contexts++;
    return c;
}

static void proxy_freectx(void *vctx) {
    proxy_ctx *c = vctx;
    if (c == NULL) return;
    EVP_CIPHER_CTX_free(c->evp); // cleanses the key schedule
    free(c);
}

static int proxy_set_ctx_params(void *vctx, const OSSL_PARAM params[]) {
    proxy_ctx *c = vctx;
    const OSSL_PARAM *p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_PADDING);
    if (p != NULL) {
        if (!OSSL_PARAM_get_uint(p, &c->padding)) return 0;
        if (EVP_CIPHER_CTX_get0_cipher(c->evp) != NULL) EVP_CIPHER_CTX_set_padding(c->evp, (int)c->padding);
    }
    return 1;
}

static int proxy_init(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv, size_t ivlen,
                      const OSSL_PARAM params[], int enc) {
    proxy_ctx *c = vctx;
    if ((key != NULL && keylen != 32) || (iv != NULL && ivlen != 16)) return 0;
    const EVP_CIPHER *cipher = EVP_CIPHER_CTX_get0_cipher(c->evp) == NULL ? aes : NULL;
    if (!EVP_CipherInit_ex2(c->evp, cipher, key, iv, enc, NULL)) return 0;
    EVP_CIPHER_CTX_set_padding(c->evp, (int)c->padding);
    return params == NULL || proxy_set_ctx_params(vctx, params);
}

static int proxy_encrypt_init(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                              size_t ivlen, const OSSL_PARAM params[]) {
    return proxy_init(vctx, key, keylen, iv, ivlen, params, 1);
}

static int proxy_decrypt_init(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                              size_t ivlen, const OSSL_PARAM params[]) {
    return proxy_init(vctx, key, keylen, iv, ivlen, params, 0);
}

static int proxy_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize, const unsigned char *in,
                        size_t inl) {
    proxy_ctx *c = vctx;
    int n = 0;
    (void)outsize;
    if (!EVP_CipherUpdate(c->evp, out, &n, in, (int)inl)) return 0;
    *outl = (size_t)n;
    updates++;
    return 1;
}

static int proxy_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize) {
    proxy_ctx *c = vctx;
    int n = 0;
    (void)outsize;
    if (!EVP_CipherFinal_ex(c->evp, out, &n)) return 0;
    *outl = (size_t)n;
    return 1;
}

static int proxy_get_params(OSSL_PARAM params[]) {
    OSSL_PARAM *p;
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_MODE)) != NULL && !OSSL_PARAM_set_uint(p, EVP_CIPH_CBC_MODE))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_KEYLEN)) != NULL && !OSSL_PARAM_set_size_t(p, 32)) return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_IVLEN)) != NULL && !OSSL_PARAM_set_size_t(p, 16)) return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_BLOCK_SIZE)) != NULL && !OSSL_PARAM_set_size_t(p, 16))
        return 0;
    const char *zeros[] = {OSSL_CIPHER_PARAM_AEAD, OSSL_CIPHER_PARAM_CUSTOM_IV, OSSL_CIPHER_PARAM_CTS,
                           OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, OSSL_CIPHER_PARAM_HAS_RAND_KEY};
    for (size_t i = 0; i < sizeof zeros / sizeof *zeros; i++)
        if ((p = OSSL_PARAM_locate(params, zeros[i])) != NULL && !OSSL_PARAM_set_int(p, 0)) return 0;
    return 1;
}

static int proxy_get_ctx_params(void *vctx, OSSL_PARAM params[]) {
    proxy_ctx *c = vctx;
    OSSL_PARAM *p;
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_PADDING)) != NULL && !OSSL_PARAM_set_uint(p, c->padding))
        return 0;
    return proxy_get_params(params);
}

static const OSSL_PARAM *proxy_gettable_params(void *provctx) {
    static const OSSL_PARAM table[] = {
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_MODE, NULL), OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL), OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_BLOCK_SIZE, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_AEAD, NULL), OSSL_PARAM_int(OSSL_CIPHER_PARAM_CUSTOM_IV, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_CTS, NULL), OSSL_PARAM_int(OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_HAS_RAND_KEY, NULL), OSSL_PARAM_END};
    (void)provctx;
    return table;
}

static const OSSL_PARAM *proxy_gettable_ctx_params(void *cctx, void *provctx) {
    static const OSSL_PARAM table[] = {
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL), OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL), OSSL_PARAM_END};
    (void)cctx;
    (void)provctx;
    return table;
}

static const OSSL_PARAM *proxy_settable_ctx_params(void *cctx, void *provctx) {
    static const OSSL_PARAM table[] = {OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL), OSSL_PARAM_END};
    (void)cctx;
    (void)provctx;
    return table;
}

static const OSSL_DISPATCH proxy_aes_functions[] = {
    {OSSL_FUNC_CIPHER_NEWCTX, (void (*)(void))proxy_newctx},
    {OSSL_FUNC_CIPHER_FREECTX, (void (*)(void))proxy_freectx},
    {OSSL_FUNC_CIPHER_ENCRYPT_INIT, (void (*)(void))proxy_encrypt_init},
    {OSSL_FUNC_CIPHER_DECRYPT_INIT, (void (*)(void))proxy_decrypt_init},
    {OSSL_FUNC_CIPHER_UPDATE, (void (*)(void))proxy_update},
    {OSSL_FUNC_CIPHER_FINAL, (void (*)(void))proxy_final},
    {OSSL_FUNC_CIPHER_GET_PARAMS, (void (*)(void))proxy_get_params},
    {OSSL_FUNC_CIPHER_GET_CTX_PARAMS, (void (*)(void))proxy_get_ctx_params},
    {OSSL_FUNC_CIPHER_SET_CTX_PARAMS, (void (*)(void))proxy_set_ctx_params},
    {OSSL_FUNC_CIPHER_GETTABLE_PARAMS, (void (*)(void))proxy_gettable_params},
    {OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, (void (*)(void))proxy_gettable_ctx_params},
    {OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, (void (*)(void))proxy_settable_ctx_params},
    {0, NULL}};

static const OSSL_ALGORITHM proxy_ciphers[] = {
    {"AES-256-CBC:AES256:2.16.840.1.101.3.4.1.42", "provider=aesproxy", proxy_aes_functions, "AES via aesproxy"},
    {NULL, NULL, NULL, NULL}};

static const OSSL_ALGORITHM *proxy_query(void *provctx, int operation_id, int *no_cache) {
    (void)provctx;
    *no_cache = 0;
    return operation_id == OSSL_OP_CIPHER ? proxy_ciphers : NULL;
}

static void proxy_teardown(void *provctx) {
    (void)provctx;
    if (getenv("AESPROXY_REPORT") != NULL)
        fprintf(stderr, "aesproxy: %ld cipher contexts, %ld updates\n", contexts, updates);
    EVP_CIPHER_free(aes);
    aes = NULL;
    OSSL_LIB_CTX_free(inner);
    inner = NULL;
}

static const OSSL_DISPATCH proxy_functions[] = {
    {OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))proxy_query},
    {OSSL_FUNC_PROVIDER_TEARDOWN, (void (*)(void))proxy_teardown},
    {0, NULL}};

int OSSL_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in, const OSSL_DISPATCH **out,
                       void **provctx) {
    (void)handle;
    (void)in;
    if ((inner = OSSL_LIB_CTX_new()) == NULL) return 0;
    *out = proxy_functions;
    *provctx = inner;
    return 1;
}
