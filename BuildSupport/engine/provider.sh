# shellcheck shell=bash
# SQLCipherKit's crypto provider (sqlcipherkit_provider.c beside this file) for the build that generates SQLCipher's
# amalgamation, build-sqlcipher.sh's engine (BuildSupport/build/engine.sh): it copies PROVIDER_SOURCE into the build
# folder, runs make with EXTRA_SRC=PROVIDER_FILE (SQLCipher's documented way to add a custom provider) and checks the
# result with has_provider. The upstream suites' testfixture (Tests/Upstream/harness.sh) compiles that generated
# amalgamation and selects the provider and its flags here too. Needs ROOT.
PROVIDER_SOURCE=$ROOT/BuildSupport/engine/sqlcipherkit_provider.c
PROVIDER_FILE=$(basename "$PROVIDER_SOURCE")

# Whether the generated sqlite3.c $1 holds the provider (defines its set-up function, which the pin names in
# -DSQLCIPHER_CRYPTO_CUSTOM).
has_provider() { grep -q '^int sqlcipherkit_openssl_setup' "$1"; }

# The crypto provider compiled into the engine (build-sqlcipher.sh --crypto-provider, or
# SQLCIPHERKIT_CRYPTO_PROVIDER): "sqlcipherkit" (the default: the file above, appended to the amalgamation with
# EXTRA_SRC, chosen by the pin's -DSQLCIPHER_CRYPTO_CUSTOM) or "reference" (SQLCipher's own src/crypto_openssl.c,
# chosen with -DSQLCIPHER_CRYPTO_OPENSSL; no EXTRA_SRC). The flags that pick it are the only difference:
# ENGINE_CFLAGS is the pin's PIN_CFLAGS with the -DSQLCIPHER_CRYPTO_CUSTOM=… entry replaced for the reference.
# The same flags compile the crypto glue (sqlcipherkit_crypto.c), whose sqlcipherkit_crypto_provider() then
# names the provider the engine was compiled with, at run time (Engine.selfCheck(), `sqlcipherkit selfcheck`).
CRYPTO_PROVIDERS=(sqlcipherkit reference)

# Sets CRYPTO_PROVIDER and ENGINE_CFLAGS for the provider named $1 (default: sqlcipherkit); dies on another name.
select_crypto_provider() {
    local name=${1:-sqlcipherkit} flag found=no
    case "$name" in
        sqlcipherkit | reference) ;;
        *) printf 'error: unknown crypto provider "%s" (one of: %s)\n' "$name" "${CRYPTO_PROVIDERS[*]}" >&2; exit 64 ;;
    esac
    CRYPTO_PROVIDER=$name
    ENGINE_CFLAGS=()
    for flag in "${PIN_CFLAGS[@]}"; do
        case "$flag" in
            -DSQLCIPHER_CRYPTO_CUSTOM=*)
                found=yes
                if [ "$name" = reference ]; then ENGINE_CFLAGS+=(-DSQLCIPHER_CRYPTO_OPENSSL); else ENGINE_CFLAGS+=("$flag"); fi ;;
            *) ENGINE_CFLAGS+=("$flag") ;;
        esac
    done
    if [ "$found" = no ]; then
        printf 'error: Vendor/sqlcipher.pin has no -DSQLCIPHER_CRYPTO_CUSTOM=… flag to switch providers with\n' >&2
        exit 1
    fi
}

# `make sqlite3.c` arguments that add the provider's source: EXTRA_SRC for SQLCipherKit's, none for the reference.
provider_make_arguments() {
    [ "$CRYPTO_PROVIDER" = reference ] || printf '%s\n' "EXTRA_SRC=$PROVIDER_FILE"
}

# Whether the generated sqlite3.c $1 is what CRYPTO_PROVIDER needs: SQLCipherKit's provider appended, or (for the
# reference) not appended and SQLCipher's own OpenSSL provider present.
amalgamation_has_selected_provider() {
    if [ "$CRYPTO_PROVIDER" = reference ]; then
        ! has_provider "$1" && grep -q '^int sqlcipher_openssl_setup' "$1"
    else
        has_provider "$1"
    fi
}

# A human description of the provider, for MANIFEST.json and the SBOM.
provider_description() {
    if [ "$CRYPTO_PROVIDER" = reference ]; then
        echo "SQLCipher's reference OpenSSL provider (src/crypto_openssl.c, -DSQLCIPHER_CRYPTO_OPENSSL)"
    else
        echo "SQLCipherKit's OpenSSL provider (BuildSupport/engine/$PROVIDER_FILE, -DSQLCIPHER_CRYPTO_CUSTOM)"
    fi
}
