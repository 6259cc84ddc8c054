// The crypto floor of SQLCipher 4's default page codec, measured by the benchmark itself: for every page, the
// HMAC-SHA512 that authenticates it and the AES-256-CBC that decrypts it, called through libcrypto (the library
// the engine links) on buffers of SQLCipher's own sizes. Nothing else of the codec is counted, so the encrypted
// runs' extra time per page can be set beside it (BENCHMARKS.md, "Encryption against the crypto floor").
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <string.h>
#include "CRawSQLCipher.h"

// SQLCipher 4 defaults: 4,096-byte pages whose last 80 bytes are the reserve (a 16-byte IV, a 64-byte HMAC).
enum { PAGE = 4096, IV = 16, MAC = 64, DATA = PAGE - IV - MAC };

int rawsqlcipher_crypto_floor(int64_t pages, int contexts_per_page, unsigned char *digest_xor) {
    static unsigned char page[PAGE], plain[PAGE + 32];
    unsigned char cipher_key[32], mac_key[32], mac[MAC];
    for (int i = 0; i < 32; i++) { cipher_key[i] = (unsigned char)(i * 7 + 1); mac_key[i] = (unsigned char)(i * 13 + 5); }
    for (int i = 0; i < PAGE; i++) page[i] = (unsigned char)(i * 31 + 17);
    memset(digest_xor, 0, MAC);

    OSSL_PARAM params[] = { OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA512", 0),
                            OSSL_PARAM_construct_end() };
    EVP_MAC *hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *mac_ctx = NULL;
    EVP_CIPHER_CTX *cipher_ctx = NULL;
    const EVP_CIPHER *aes = EVP_aes_256_cbc();
    int ok = hmac != NULL;
    for (int64_t n = 0; ok && n < pages; n++) {
        // SQLCipher authenticates the encrypted data and the IV, then the page number, little-endian.
        unsigned char number[4] = { (unsigned char)n, (unsigned char)(n >> 8), (unsigned char)(n >> 16),
                                    (unsigned char)(n >> 24) };
        const unsigned char *iv = page + DATA;
        size_t mac_length = 0;
        int out_length = 0, final_length = 0;
        if (contexts_per_page || mac_ctx == NULL) {
            // As SQLCipher calls libcrypto for each page: HMAC fetched, new contexts, both keys set up again.
            EVP_MAC_CTX_free(mac_ctx);
            EVP_CIPHER_CTX_free(cipher_ctx);
            if (contexts_per_page) {
                EVP_MAC_free(hmac);
                hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
            }
            mac_ctx = hmac ? EVP_MAC_CTX_new(hmac) : NULL;
            cipher_ctx = EVP_CIPHER_CTX_new();
            ok = mac_ctx && cipher_ctx && EVP_MAC_init(mac_ctx, mac_key, sizeof mac_key, params)
                && EVP_CipherInit_ex(cipher_ctx, aes, NULL, cipher_key, iv, 0)
                && EVP_CIPHER_CTX_set_padding(cipher_ctx, 0);
        } else {
            // The floor: contexts and key schedules kept, only the HMAC state and the IV set again.
            ok = EVP_MAC_init(mac_ctx, NULL, 0, NULL) && EVP_CipherInit_ex(cipher_ctx, NULL, NULL, NULL, iv, 0);
        }
        ok = ok && EVP_MAC_update(mac_ctx, page, DATA + IV) && EVP_MAC_update(mac_ctx, number, sizeof number)
            && EVP_MAC_final(mac_ctx, mac, &mac_length, sizeof mac)
            && EVP_CipherUpdate(cipher_ctx, plain, &out_length, page, DATA)
            && EVP_CipherFinal_ex(cipher_ctx, plain + out_length, &final_length)
            && mac_length == MAC && out_length + final_length == DATA;
        // Folded into the output, so no call can be left out as unused.
        for (int i = 0; ok && i < MAC; i++) digest_xor[i] ^= mac[i] ^ plain[i * (DATA / MAC)];
    }
    EVP_MAC_CTX_free(mac_ctx);
    EVP_CIPHER_CTX_free(cipher_ctx);
    EVP_MAC_free(hmac);
    return ok ? 0 : 1;
}
