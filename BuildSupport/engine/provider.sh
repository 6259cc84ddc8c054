# shellcheck shell=bash
# SQLCipherKit's crypto provider (sqlcipherkit_provider.c beside this file) for the two builds that generate
# SQLCipher's amalgamation: build-sqlcipher.sh's engine (BuildSupport/build/engine.sh) and the upstream suite's
# testfixture (Tests/Upstream/run-upstream.sh). Both copy PROVIDER_SOURCE into the build folder, run make with
# EXTRA_SRC=PROVIDER_FILE (SQLCipher's documented way to add a custom provider) and check the result with
# has_provider. Needs ROOT.
PROVIDER_SOURCE=$ROOT/BuildSupport/engine/sqlcipherkit_provider.c
PROVIDER_FILE=$(basename "$PROVIDER_SOURCE")

# Whether the generated sqlite3.c $1 holds the provider (defines its set-up function, which the pin names in
# -DSQLCIPHER_CRYPTO_CUSTOM).
has_provider() { grep -q '^int sqlcipherkit_openssl_setup' "$1"; }
