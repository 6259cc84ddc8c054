# shellcheck shell=bash
# BuildSupport/common.sh: the shell helpers build-sqlcipher.sh and verify-symbols.sh share (sourced, not run).
# One way to stop with a message (die) and one way to get a temporary folder that is removed however the script
# ends (temp_dir). The sourcing script sets PROGRAM to its own name first.

# Stops the script: "PROGRAM: error: MESSAGE" on stderr, exit status 1.
die() {
    printf '\n%s: error: %s\n' "${PROGRAM:-${0##*/}}" "$*" >&2
    exit 1
}

# Paths removed when the script exits: normally, through die or set -e, or on a signal (bash runs the EXIT
# trap for SIGINT and SIGTERM too).
REMOVE_ON_EXIT=()
remove_on_exit() { REMOVE_ON_EXIT+=("$@"); }
remove_registered_paths() {
    local path
    for path in ${REMOVE_ON_EXIT[@]+"${REMOVE_ON_EXIT[@]}"}; do rm -rf "$path"; done
}
trap remove_registered_paths EXIT

# temp_dir VAR NAME: a fresh folder ${TMPDIR:-/tmp}/NAME.XXXXXX, its path stored in VAR, removed on exit.
# Call it in the script's own shell, not inside $(...) or a ( ) subshell: a subshell's registration (and its
# EXIT trap) would not reach the main shell.
temp_dir() {
    local made
    made=$(mktemp -d "${TMPDIR:-/tmp}/$2.XXXXXX") || die "cannot create a temporary folder in ${TMPDIR:-/tmp}"
    remove_on_exit "$made"
    printf -v "$1" '%s' "$made"
}

# The GNU binutils prefix for objects of ELF machine $1 (readelf's name) built on another machine than this one:
# Debian's cross binutils (binutils-aarch64-linux-gnu comes with gcc-aarch64-linux-gnu). Status 1 for a machine
# without one known here.
binutils_prefix_for_machine() {
    case "$1" in
        AArch64) echo aarch64-linux-gnu- ;;
        "Advanced Micro Devices X86-64") echo x86_64-linux-gnu- ;;
        *) return 1 ;;
    esac
}
