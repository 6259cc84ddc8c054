# shellcheck shell=bash
# Licences and notices: each artifact carries the notices of what is inside it (BuildSupport/notices.py), from
# licence texts gathered at build time from the pinned tarball and the system (none is committed).

# Sets LICENSE_* to files (comma-separated) under $BUILD_DIR/licenses/ or on the system, and OPENSSL_VERSION.
collect_licenses() {
    local dir=$BUILD_DIR/licenses member
    rm -rf "$dir"
    mkdir -p "$dir"
    for member in LICENSE.md SQLITE_LICENSE.md; do
        tar -xzOf "$TARBALL" --wildcards "*/$member" >"$dir/$member" 2>/dev/null || rm -f "$dir/$member"
    done
    [ -s "$dir/LICENSE.md" ] || die "the pinned tarball holds no LICENSE.md: SQLCipher's licence cannot be shipped"
    # SQLite's own words, from the generated header's first comment (its blessing, in every release).
    sed -n '1,/\*\//p' "$BUILD_DIR/include/sqlite3.h" >"$dir/sqlite3.h-blessing.txt"
    LICENSE_SQLCIPHER=$dir/LICENSE.md
    LICENSE_SQLITE="$dir/SQLITE_LICENSE.md,$dir/sqlite3.h-blessing.txt"
    LICENSE_OPENSSL=$(find /usr/share/doc -maxdepth 2 -path '*/libssl*/copyright' 2>/dev/null | sort | tr '\n' ',')
    LICENSE_OPENSSL+=/usr/share/common-licenses/Apache-2.0
    LICENSE_SWIFT=$(dirname "$(dirname "$(realpath "$(command -v swiftc)")")")/share/swift/LICENSE.txt
    # The CLI's Foundation carries ICU's code and data: the system's copy of ICU's licence (the same terms).
    LICENSE_ICU=$(find /usr/share/doc -maxdepth 2 -path '*/libicu[0-9]*/copyright' 2>/dev/null | sort | head -n1)
    LICENSE_ARGUMENT_PARSER=$ROOT/.build/checkouts/swift-argument-parser/LICENSE.txt
    OPENSSL_VERSION=$(printf '#include <openssl/opensslv.h>\nOPENSSL_VERSION_STR\n' | "$CC" -E -P -x c - 2>/dev/null \
        | tail -n1 | tr -d '" ')
    [ -n "$OPENSSL_VERSION" ] || die "could not read OpenSSL's version from <openssl/opensslv.h>"
    OPENSSL_VERSION_ARM64=$(arm64_openssl_version)
    [ -n "$OPENSSL_VERSION_ARM64" ] || die "could not read OpenSSL's version from the arm64 <openssl/opensslv.h>"
}

# The Debian package version of libssl-dev for a Debian architecture (amd64, arm64), or "unknown".
openssl_package_version() { dpkg-query -W -f='${Version}' "libssl-dev:$1" 2>/dev/null || echo unknown; }

# OpenSSL's version in words for artifacts that carry both architectures' libcrypto.
openssl_versions() {
    if [ "$OPENSSL_VERSION" = "$OPENSSL_VERSION_ARM64" ]; then
        echo "$OPENSSL_VERSION"
    else
        echo "$OPENSSL_VERSION (x86_64), $OPENSSL_VERSION_ARM64 (aarch64)"
    fi
}

# What an artifact needs of OpenSSL, in one sentence (the notices and the SBOM say the same).
openssl_note() {
    case $1 in
        folded) echo "OpenSSL's libcrypto $(openssl_versions) is folded into this artifact (its symbols local): it needs no OpenSSL at run time, and does not get the system's OpenSSL security updates; rebuild to update it." ;;
        *) echo "This artifact does not contain OpenSSL: it links the system's libcrypto (built against $(openssl_versions); libssl-dev to build, libssl3 at run time), so OpenSSL security updates come with the system." ;;
    esac
}

# notices_for OUT ARTIFACT system|folded COMPONENT..., with components among: sqlcipherkit sqlcipher openssl
# swift parser.
notices_for() {
    local out=$1 artifact=$2 openssl=$3 args=() c
    shift 3
    for c in "$@"; do
        case $c in
            sqlcipherkit) args+=(--component "SQLCipherKit (The SQLCipherKit authors)|MIT|$ROOT/LICENSE") ;;
            sqlcipher) args+=(--component "SQLCipher $PIN_VERSION (Zetetic LLC)|BSD-3-Clause|$LICENSE_SQLCIPHER"
                              --component "SQLite $PIN_SQLITE_VERSION, inside SQLCipher|public domain (blessing)|$LICENSE_SQLITE") ;;
            openssl) args+=(--component "OpenSSL libcrypto $(openssl_versions), folded in|Apache-2.0|$LICENSE_OPENSSL") ;;
            swift) args+=(--component "Swift runtime, standard library and Foundation (swift.org)|Apache-2.0 with Runtime Library Exception|$LICENSE_SWIFT"
                          --component "ICU code and data inside Foundation (Unicode, Inc.)|Unicode / ICU licence|${LICENSE_ICU:-}") ;;
            parser) args+=(--component "swift-argument-parser (Apple Inc.)|Apache-2.0|$LICENSE_ARGUMENT_PARSER") ;;
            *) die "notices_for: unknown component $c" ;;
        esac
    done
    python3 "$ROOT/BuildSupport/notices.py" --out "$out" --artifact "$artifact" --intro "$(openssl_note "$openssl")" \
        "${args[@]}" || die "could not write the notices for $artifact"
}

# A NOTICES file beside each archive and executable, inside the bundle; the project's own licence at the top.
write_notices() {
    local dist=$1
    cp "$ROOT/LICENSE" "$dist/LICENSE"
    notices_for "$dist/lib/libSQLCipherKit.a.NOTICES.txt" lib/libSQLCipherKit.a system sqlcipherkit sqlcipher
    notices_for "$dist/lib/libsqlcipher.a.NOTICES.txt" lib/libsqlcipher.a system sqlcipherkit sqlcipher
    notices_for "$dist/lib/$ARM64_TRIPLE/libsqlcipher.a.NOTICES.txt" "lib/$ARM64_TRIPLE/libsqlcipher.a" system \
        sqlcipherkit sqlcipher
    notices_for "$dist/bin/sqlcipherkit.NOTICES.txt" bin/sqlcipherkit system sqlcipherkit sqlcipher swift parser
    notices_for "$dist/SQLCipherEngine.artifactbundle/THIRD_PARTY_NOTICES.txt" SQLCipherEngine.artifactbundle \
        folded sqlcipherkit sqlcipher openssl
}
