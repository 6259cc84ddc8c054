# shellcheck shell=bash
# Phases "amalgamation" and "engine": sqlite3.c/sqlite3.h generated from the pinned tarball (tclsh), then
# libsqlcipher.a compiled with the pin's flags, path-independent and deterministic, and verified to carry the
# codec. Both are skipped when their stamp (a hash of what decides them) is unchanged. Reads TARBALL.

# Whether the stamp file $1 holds the stamp $2 (the work it stands for was done with the same inputs).
stamp_matches() { [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }

# shellcheck source=../engine/provider.sh
source "$ROOT/BuildSupport/engine/provider.sh"

# Runs SQLCipher's configure and `make sqlite3.c` on the tarball in a temporary folder (its configure and
# Makefile break on paths with spaces), with SQLCipherKit's provider appended the way SQLCipher documents for a
# custom provider (EXTRA_SRC), and copies sqlite3.c (the local changes applied), sqlite3.h and upstream's own
# sqlite3.c (as sqlite3.upstream.c) into $1.
make_amalgamation() {
    local into=$1 log=$1/build.log work top
    temp_dir work sqlcipherkit-amalgamation
    mkdir -p "$work/src" "$work/build"
    tar -xzf "$TARBALL" -C "$work/src"
    top=$(find "$work/src" -mindepth 1 -maxdepth 1 -type d | head -n1)
    [ -x "$top/configure" ] || die "the tarball holds no configure script (in $top)"
    cp "$PROVIDER_SOURCE" "$work/build/"
    # configure only prepares the tclsh generator; the flags that matter are applied when compiling.
    if ! (cd "$work/build" \
        && "$top/configure" "${PIN_CONFIGURE_FLAGS[@]}" CFLAGS="${ENGINE_CFLAGS[*]}" LDFLAGS="-lcrypto" \
        && make sqlite3.c $(provider_make_arguments)) >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        die "generating the amalgamation failed (full log: $log)"
    fi
    [ -s "$work/build/sqlite3.c" ] || die "make sqlite3.c produced no sqlite3.c"
    amalgamation_has_selected_provider "$work/build/sqlite3.c" \
        || die "the generated sqlite3.c does not hold the $CRYPTO_PROVIDER crypto provider as selected (EXTRA_SRC)"
    # Upstream's output as generated, kept beside the changed one: LocalChangesTests applies the pin's changes to
    # it and must get sqlite3.c exactly (never committed, like the rest of Vendor/build).
    cp "$work/build/sqlite3.c" "$into/sqlite3.upstream.c"
    apply_local_changes "$work/build/sqlite3.c"
    cp "$work/build/sqlite3.c" "$work/build/sqlite3.h" "$into/"
}

# Checks that the generated amalgamation in $1 is SQLCipher at the pinned SQLite version.
check_amalgamation() {
    local dir=$1 version
    grep -q "sqlcipher" "$dir/sqlite3.c" || die "the generated sqlite3.c holds no SQLCipher code: wrong source tree?"
    version=$(sed -n 's/^#define SQLITE_VERSION[[:space:]]*"\(.*\)"/\1/p' "$dir/sqlite3.h")
    [ "$version" = "$PIN_SQLITE_VERSION" ] || die "the source is SQLite $version, the pin says $PIN_SQLITE_VERSION"
}

generate_amalgamation() {
    local dir=$BUILD_DIR/amalgamation stamp_file=$BUILD_DIR/amalgamation.stamp stamp
    # SQLCipherKit's provider's source is part of the amalgamation only when it is the one compiled in.
    stamp=$(stamp_of "$PIN_SHA256" "$PIN_TARBALL" "${PIN_CONFIGURE_FLAGS[@]}" "${ENGINE_CFLAGS[@]}" \
        "$([ "$CRYPTO_PROVIDER" = reference ] || sha256_of "$PROVIDER_SOURCE")" "$(local_changes_stamp)" amalgamation-v6)
    if [ -f "$dir/sqlite3.c" ] && [ -f "$BUILD_DIR/include/sqlite3.h" ] && stamp_matches "$stamp_file" "$stamp"; then
        note "up to date (pin unchanged): $dir/sqlite3.c"
        return
    fi
    rm -rf "$dir" "$BUILD_DIR/include" "$stamp_file"
    mkdir -p "$dir" "$BUILD_DIR/include"
    make_amalgamation "$dir"
    check_amalgamation "$dir"
    cp "$dir/sqlite3.h" "$BUILD_DIR/include/sqlite3.h"
    # A fixed timestamp: clang's module hash reads the header's mtime, and the merged archive records that
    # hash, so a regenerated but identical header must look the same.
    touch -d "2000-01-01 00:00:00 UTC" "$BUILD_DIR/include/sqlite3.h" "$dir/sqlite3.c" "$dir/sqlite3.h"
    echo "$stamp" >"$stamp_file"
    note "generated sqlite3.c ($(wc -c <"$dir/sqlite3.c") bytes, SQLite $PIN_SQLITE_VERSION)"
}

# Compiles sqlite3.c and SQLCipherKit's crypto glue (the pool's one-time PBKDF2) with the pin's flags into $1.
# Relative inputs and prefix maps keep build paths out of the objects, so any checkout builds the same.
compile_engine_archive() {
    local lib=$1
    mkdir -p "$BUILD_DIR/obj" "$BUILD_DIR/lib"
    note "$CC -c ${ENGINE_CFLAGS[*]} sqlite3.c (crypto provider: $CRYPTO_PROVIDER)"
    (cd "$BUILD_DIR/amalgamation" && "$CC" -c "${ENGINE_CFLAGS[@]}" \
        -ffile-prefix-map="$BUILD_DIR"=. -ffile-prefix-map="$ROOT"=. \
        -o "$BUILD_DIR/obj/sqlite3.o" sqlite3.c) || die "compiling the engine failed"
    (cd "$ROOT/BuildSupport/engine" && "$CC" -c "${ENGINE_CFLAGS[@]}" -ffile-prefix-map="$ROOT"=. \
        -o "$BUILD_DIR/obj/sqlcipherkit_crypto.o" sqlcipherkit_crypto.c) || die "compiling the crypto glue failed"
    # D: zero timestamps, uids and modes, so two builds give the same bytes.
    ar rcsD "$lib" "$BUILD_DIR/obj/sqlite3.o" "$BUILD_DIR/obj/sqlcipherkit_crypto.o"
}

compile_engine() {
    local lib=$BUILD_DIR/lib/libsqlcipher.a stamp_file=$BUILD_DIR/engine.stamp stamp
    stamp=$(stamp_of "$(cat "$BUILD_DIR/amalgamation.stamp")" "${ENGINE_CFLAGS[@]}" "$(cc_version)" \
        "$(sha256_of "$ROOT/BuildSupport/engine/sqlcipherkit_crypto.c")" engine-v2)
    if [ -s "$lib" ] && stamp_matches "$stamp_file" "$stamp"; then
        note "up to date (pin, flags and compiler unchanged): $lib"
        return
    fi
    rm -f "$stamp_file" "$lib"
    compile_engine_archive "$lib"
    echo "$stamp" >"$stamp_file"
    forget_linked_products
}

# Even an up-to-date engine is checked: nothing ships without the codec.
verify_engine() {
    local lib=$BUILD_DIR/lib/libsqlcipher.a
    "$ROOT/verify-symbols.sh" "$lib" >"$BUILD_DIR/engine-verify.log" 2>&1 || {
        cat "$BUILD_DIR/engine-verify.log" >&2
        die "the engine archive lacks SQLCipher's codec: refusing to build an artifact that would write plaintext"
    }
    check_engine_provider "$lib"
    note "libsqlcipher.a: codec symbols present, crypto provider $CRYPTO_PROVIDER, SHA-256 $(sha256_of "$lib")"
}

# The archive holds the provider CRYPTO_PROVIDER selects, and its glue names that one: SQLCipherKit's set-up
# function defined exactly when it is the one (the reference's always is: crypto_openssl.c is in every
# amalgamation, compiled only under -DSQLCIPHER_CRYPTO_OPENSSL), and sqlcipherkit_crypto_provider defined.
# NM: the nm that reads the archive's machine (the cross one for the aarch64 engine); default nm.
check_engine_provider() {
    local lib=$1 symbols
    symbols=$("${NM:-nm}" -g --defined-only "$lib" 2>/dev/null | awk '{print $NF}')
    grep -qx sqlcipherkit_crypto_provider <<<"$symbols" || die "$lib lacks sqlcipherkit_crypto_provider (the crypto glue)"
    grep -qx sqlcipherkit_provider_failed <<<"$symbols" \
        || die "$lib lacks sqlcipherkit_provider_failed (the provider's or the glue's: SQLCipherKit's errors need it)"
    # Fault injection is for the tests' own builds (Tests/CryptoProvider/faults.c), never an engine that ships.
    ! grep -qx sqlcipherkit_fault_arm <<<"$symbols" \
        || die "$lib was compiled with SQLCIPHERKIT_PROVIDER_FAULTS (test-only fault injection): refusing it"
    if [ "$CRYPTO_PROVIDER" = reference ]; then
        grep -qx sqlcipher_openssl_setup <<<"$symbols" && ! grep -qx sqlcipherkit_openssl_setup <<<"$symbols" \
            || die "$lib was to hold SQLCipher's reference provider, and does not (or holds SQLCipherKit's too)"
    else
        grep -qx sqlcipherkit_openssl_setup <<<"$symbols" \
            || die "$lib was to hold SQLCipherKit's crypto provider, and does not"
    fi
}

# SwiftPM does not track libraries given with -l, so test bundles and executables it linked against an older
# libsqlcipher.a would keep that engine. Removing them makes the next swift build/test link them afresh. Besides
# this package's own build folder, the packages that link the engine through it by path: the benchmarks and the
# callgrind gate's workload (both measure the engine, so a stale link would measure the old one).
forget_linked_products() {
    [ "$BUILD_DIR" = "$ROOT/Vendor/build" ] || return 0
    local folder product
    for folder in "$ROOT/.build" "$ROOT/Benchmarks/.build" "$ROOT/Tests/CallgrindGate/.build"; do
        [ -d "$folder" ] || continue
        while IFS= read -r product; do
            note "engine changed: removing $product so SwiftPM relinks it"
            rm -f "$product"
        done < <(find "$folder" -mindepth 3 -maxdepth 3 -type f -perm -u+x \
            \( -path '*/debug/*' -o -path '*/release/*' \) ! -name '*.so' ! -name '*.a' ! -name '*.o')
    done
}
