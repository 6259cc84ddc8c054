# shellcheck shell=bash
# The merge (phase "merge into a staged dist/", and `build-sqlcipher.sh merge`): ar x both archives → ld -r
# into one relocatable object → one deterministic archive. Refuses missing or empty archives, duplicate member
# names, members of another architecture and an engine without the codec.

REFUSE="refusing to produce an artifact without the SQLCipher engine or the Swift API (it could write plaintext)"

# The ELF machine name readelf prints for the toolchain's target architecture.
elf_machine_for_arch() {
    case "$1" in
        x86_64) echo "Advanced Micro Devices X86-64" ;;
        aarch64 | arm64) echo "AArch64" ;;
        armv7*) echo "ARM" ;;
        i686 | i386) echo "Intel 80386" ;;
        riscv64) echo "RISC-V" ;;
        powerpc64le | ppc64le) echo "PowerPC64" ;;
        s390x) echo "IBM S/390" ;;
        *) die "unknown target architecture '$1': teach elf_machine_for_arch about it" ;;
    esac
}

target_triple() {
    swiftc -print-target-info | sed -n 's/^ *"triple": "\(.*\)",$/\1/p' | head -n1
}

# Extracts archive $1 into folder $2, refusing duplicate member names (ar x would silently keep one) and
# members built for another architecture than $3 (an ELF machine name).
extract_members() {
    local archive=$1 into=$2 machine=$3 dupes member found
    dupes=$(ar t "$archive" | sort | uniq -d)
    [ -z "$dupes" ] || die "$archive has several members named: $dupes (ar x would lose all but one)"
    mkdir -p "$into"
    (cd "$into" && ar x "$archive")
    for member in "$into"/*; do
        [ -f "$member" ] || continue
        found=$(readelf -h "$member" 2>/dev/null | sed -n 's/^ *Machine: *//p' || true)
        [ "$found" = "$machine" ] \
            || die "$(basename "$archive")($(basename "$member")) is built for '${found:-not ELF}', the target is '$machine'"
    done
}

# What ties the Swift objects to the folder they were built in, dropped from the copies merged into the
# artifact so that two checkouts in different folders give the same bytes (everything else is already
# path-independent: -file-prefix-map, relative module-cache paths):
# - `.swift_modhash`: 16 bytes per object, an MD5 of the LLVM module and the compiler options, absolute paths
#   included, which the compiler reads back only to skip regenerating an unchanged object. Nothing links or
#   runs it.
# - the DWARF debug info: for each clang module it imports (CSQLCipher, SwiftShims, ...), the Swift compiler
#   records the precompiled module's signature (8 bytes, DW_AT_GNU_dwo_id), a hash of the .pcm, whose content
#   holds the checkout's absolute paths (module map, headers); neither -file-prefix-map nor a relative module
#   cache reaches it. The artifact ships without DWARF, as the engine (compiled without -g) always did;
#   symbols stay, so crash reports still name SQLCipherKit's functions.
make_path_independent() {
    local member
    for member in "$1"/*; do
        objcopy --remove-section=.swift_modhash --strip-debug "$member" \
            || die "objcopy could not make $member path-independent"
    done
}

# Stops unless both inputs are non-empty archives.
check_merge_inputs() {
    local engine=$1 swift_lib=$2
    [ -f "$engine" ] || die "engine archive missing: $engine; $REFUSE"
    [ -f "$swift_lib" ] || die "Swift archive missing: $swift_lib; $REFUSE"
    [ -n "$(ar t "$engine" 2>/dev/null)" ] || die "engine archive is empty or not an archive: $engine; $REFUSE"
    [ -n "$(ar t "$swift_lib" 2>/dev/null)" ] || die "Swift archive is empty or not an archive: $swift_lib; $REFUSE"
}

merge_archives() {
    local engine=$1 swift_lib=$2 out=$3 triple machine work objects=()
    check_merge_inputs "$engine" "$swift_lib"
    # Absolute paths: the members are extracted and archived from inside a temporary folder.
    engine=$(realpath "$engine")
    swift_lib=$(realpath "$swift_lib")
    mkdir -p "$(dirname "$out")"
    out=$(realpath "$out")
    triple=$(target_triple)
    [ -n "$triple" ] || die "could not read the target triple from swiftc -print-target-info"
    machine=$(elf_machine_for_arch "${triple%%-*}")
    temp_dir work sqlcipherkit-merge
    extract_members "$engine" "$work/engine" "$machine"
    extract_members "$swift_lib" "$work/swift" "$machine"
    make_path_independent "$work/swift"
    # The merge checks the engine itself, so no caller can merge a plain-SQLite engine by mistake.
    "$ROOT/verify-symbols.sh" "$engine" >"$work/verify.log" 2>&1 || {
        cat "$work/verify.log" >&2
        die "the engine archive $engine lacks SQLCipher's codec; $REFUSE"
    }
    # One relocatable object: linking any symbol of it links all of it, so the engine's sqlite3_* always come
    # with the Swift API and win over a system SQLite.
    mapfile -t objects < <(find "$work/engine" "$work/swift" -type f | LC_ALL=C sort)
    ld -r -o "$work/SQLCipherKit.o" "${objects[@]}" || die "ld -r failed to merge the archives"
    rm -f "$out.part"
    (cd "$work" && ar rcsD "$out.part" SQLCipherKit.o)
    mv "$out.part" "$out"
    note "merged ${#objects[@]} objects for $triple into $out"
}
