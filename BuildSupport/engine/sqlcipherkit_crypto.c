// SQLCipherKit's crypto glue: compiled by build-sqlcipher.sh into the engine archive (libsqlcipher.a) next to
// SQLCipher, with the engine's flags. SQLCipherKit's own code (this file), not SQLCipher's.
//
// DatabasePool derives a passphrase's raw key once with PBKDF2 and keys every connection with it. The Swift
// layer calls these functions, declared in Sources/CSQLCipher/shim.h, rather than libcrypto's own symbols:
// where libcrypto is folded into the archive and its symbols are made local (the self-contained artifact
// bundle), only the sqlite3_* API and these sqlcipherkit_* names stay global, so the Swift layer works the same
// on every variant and never binds to another OpenSSL an application may link.
#include <openssl/evp.h>

int sqlcipherkit_pbkdf2_hmac(const char *pass, int pass_length, const unsigned char *salt, int salt_length,
                             int iterations, const void *digest, int key_length, unsigned char *out) {
    return PKCS5_PBKDF2_HMAC(pass, pass_length, salt, salt_length, iterations, (const EVP_MD *)digest,
                             key_length, out);
}

const void *sqlcipherkit_evp_sha1(void) { return EVP_sha1(); }
const void *sqlcipherkit_evp_sha256(void) { return EVP_sha256(); }
const void *sqlcipherkit_evp_sha512(void) { return EVP_sha512(); }

// The crypto provider the engine was compiled with, by the flags that compiled this file and sqlite3.c together
// (build-sqlcipher.sh --crypto-provider; BuildSupport/engine/provider.sh): "sqlcipherkit" for SQLCipherKit's
// provider (-DSQLCIPHER_CRYPTO_CUSTOM), "reference" for SQLCipher's own OpenSSL provider
// (-DSQLCIPHER_CRYPTO_OPENSSL). PRAGMA cipher_provider names the library ("openssl") for both.
const char *sqlcipherkit_crypto_provider(void) {
#if defined(SQLCIPHER_CRYPTO_CUSTOM)
    return "sqlcipherkit";
#elif defined(SQLCIPHER_CRYPTO_OPENSSL)
    return "reference";
#else
    return "unknown";
#endif
}

// What the Swift layer asks after an error (Sources/CSQLCipher/shim.h): whether the crypto provider failed on a
// connection's codec, or could not serve AES at the last encrypted open. SQLCipherKit's provider defines both
// (sqlcipherkit_provider.c, inside the amalgamation: they read SQLCipher's codec context); SQLCipher's reference
// provider keeps no such state, so with it they say no, and such failures read as SQLite reports them.
#if !defined(SQLCIPHER_CRYPTO_CUSTOM)
int sqlcipherkit_provider_failed(void *db) {
    (void)db;
    return 0;
}
int sqlcipherkit_provider_unavailable(void) { return 0; }
#endif
