# shellcheck shell=bash
# build-sqlcipher.sh's output and small utilities: phase headers with durations, notes, hashes, JSON files.

# Each phase prints its name when it starts and its duration when the next one starts.
PHASE_NAME=
PHASE_START=0
phase() {
    phase_end
    PHASE_START=$SECONDS
    PHASE_NAME=$1
    printf '==> %s\n' "$1"
}
phase_end() {
    [ -z "$PHASE_NAME" ] || printf '    (%ss)\n' "$((SECONDS - PHASE_START))"
    PHASE_NAME=
}
note() { printf '    %s\n' "$*"; }

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# A hash of everything that decides an output, so unchanged inputs skip the work.
stamp_of() { printf '%s\n' "$@" | sha256sum | cut -d' ' -f1; }

# Structured files (JSON) are written by a tool made for them: BuildSupport/json_object.py KEY=VALUE ...
json_object() { python3 "$ROOT/BuildSupport/json_object.py" "$@" || die "could not write $1"; }

# The first line of the C compiler's and of Swift's version (the manifest and the SBOM record them).
cc_version() { "$CC" --version | head -n1; }
swift_version_line() { swift --version 2>/dev/null | head -n1; }
