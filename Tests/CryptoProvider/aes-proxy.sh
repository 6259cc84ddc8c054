#!/usr/bin/env bash
# Tests/CryptoProvider/aes-proxy.sh: builds the test-only OpenSSL provider module "aesproxy" (aes_proxy_provider.c
# beside this file: AES-256-CBC only, done by OpenSSL's default provider in a library context of its own) and an
# openssl.cnf that loads it beside the default provider with `default_properties = ?provider=aesproxy`, so that
# aesproxy serves AES-256-CBC to everything fetching it with no property query, and OpenSSL's default provider
# serves the rest. Prints the openssl.cnf's path (for OPENSSL_CONF). Everything under
# Vendor/build/crypto-provider/aesproxy/ (gitignored). With AESPROXY_REPORT set, the module prints
# "aesproxy: N cipher contexts, M updates" to stderr when unloaded.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=$ROOT/Vendor/build/crypto-provider/aesproxy
CC=${CC:-cc}
mkdir -p "$OUT"
"$CC" -shared -fPIC -O1 -Wall -Werror -o "$OUT/aesproxy.so" "$ROOT/Tests/CryptoProvider/aes_proxy_provider.c" -lcrypto \
    >&2 || { echo "aes-proxy.sh: building the aesproxy module failed" >&2; exit 1; }
cat >"$OUT/openssl-aesproxy.cnf" <<CONF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
alg_section = algorithm_sect
[provider_sect]
default = default_sect
aesproxy = aesproxy_sect
[default_sect]
activate = 1
[aesproxy_sect]
module = $OUT/aesproxy.so
activate = 1
[algorithm_sect]
default_properties = ?provider=aesproxy
CONF
echo "$OUT/openssl-aesproxy.cnf"
