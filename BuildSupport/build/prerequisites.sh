# shellcheck shell=bash
# Phase "prerequisites": the tools and system packages the build (and, with --test-tools, the tests) need.
# Installs missing Debian packages when root; otherwise stops naming them.

have_openssl_headers() {
    printf '#include <openssl/evp.h>\n' | "$CC" -E -x c - >/dev/null 2>&1
}

have_tcl_config() {
    compgen -G '/usr/lib/tcl8*/tclConfig.sh' >/dev/null || compgen -G '/usr/lib/*/tcl8*/tclConfig.sh' >/dev/null
}

# Adds the foreign architectures packages named NAME:ARCH need (Debian multiarch: libssl-dev:arm64) to dpkg's
# list, before the apt-get update that then fetches their indexes.
add_foreign_architectures() {
    local package arch
    for package in "$@"; do
        [[ "$package" == *:* ]] || continue
        arch=${package#*:}
        [ "$arch" != "$(dpkg --print-architecture)" ] || continue
        dpkg --print-foreign-architectures | grep -x "$arch" >/dev/null && continue
        note "adding the $arch architecture to dpkg (multiarch) for $package"
        dpkg --add-architecture "$arch" || die "dpkg --add-architecture $arch failed; install by hand: $*"
    done
}

# Installs Debian packages when root, else stops naming them.
install_packages() {
    [ $# -gt 0 ] || return 0
    if [ "$(id -u)" = 0 ] && [ -z "${SQLCIPHERKIT_NO_INSTALL:-}" ] && command -v apt-get >/dev/null; then
        note "installing missing packages: $*"
        export DEBIAN_FRONTEND=noninteractive
        add_foreign_architectures "$@"
        apt-get update -qq >/dev/null || die "apt-get update failed; install these packages by hand: $*"
        apt-get install -y -qq --no-install-recommends "$@" >/dev/null \
            || die "apt-get install failed; install these packages by hand: $*"
    else
        die "missing system packages: $* (install them: sudo apt-get install $*)"
    fi
}

# Prints the Debian packages missing for the build (and, with "yes", for the tests), one a line.
missing_packages() {
    local want_test_tools=$1
    have_openssl_headers || echo libssl-dev
    command -v tclsh >/dev/null || echo tcl
    # The aarch64 engine's cross compiler and arm64 OpenSSL (and its emulation's tools): BuildSupport/build/arm64.sh.
    missing_arm64_packages "$want_test_tools"
    [ "$want_test_tools" = yes ] || return 0
    command -v pkg-config >/dev/null || echo pkg-config
    [ -e /usr/include/sqlite3.h ] || echo libsqlite3-dev
    # The callgrind gate (Tests/PerformanceGateTests) counts instructions under valgrind.
    command -v valgrind >/dev/null || echo valgrind
    # tclConfig.sh: Tests/Upstream/run-upstream.sh builds SQLCipher's testfixture against Tcl.
    have_tcl_config || echo tcl-dev
    # The CLI's temporary-storage test watches the files sqlcipherkit opens (CLITests/TemporaryStorageTests).
    command -v strace >/dev/null || echo strace
    # systemd-analyze verify checks the example unit (CLITests/SystemdExampleTests); no running systemd is needed.
    command -v systemd-analyze >/dev/null || echo systemd
    # The same test runs the unit's Exec lines under its SystemCallFilter= with libseccomp (Tests/Support/seccomp).
    [ -e /usr/include/seccomp.h ] || echo libseccomp-dev
}

check_prerequisites() {
    local want_test_tools=$1 missing=() tool
    mapfile -t missing < <(missing_packages "$want_test_tools")
    install_packages ${missing[@]+"${missing[@]}"}
    have_openssl_headers || die "OpenSSL headers are still missing after installing libssl-dev"
    command -v tclsh >/dev/null || die "tclsh is still missing after installing tcl"
    for tool in "$CC" ar ld nm readelf strip objcopy make tar sha256sum python3 swift swiftc \
        "$ARM64_CC" "${ARM64_TOOLS}ar" "${ARM64_TOOLS}ld" "${ARM64_TOOLS}nm" "${ARM64_TOOLS}objcopy"; do
        command -v "$tool" >/dev/null || die "required tool '$tool' is not on PATH"
    done
    note "C compiler: $(cc_version)"
    note "Swift: $(swift_version_line)"
    note "C cross compiler for $ARM64_TRIPLE: $(arm64_cc_version)"
}
