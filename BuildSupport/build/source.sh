# shellcheck shell=bash
# Phase "source": the pinned tarball from --source, the cache, or the pin's PIN_SOURCES (apt: entries under
# each mirror of the machine's apt configuration), always SHA-256 checked. Sets TARBALL.

# The base URIs of the machine's Debian mirrors, from apt's own configuration: deb822 *.sources files and
# one-line sources.list files. No host name is written in this repository.
apt_mirror_uris() {
    local list=/etc/apt/sources.list parts=/etc/apt/sources.list.d f
    if command -v apt-config >/dev/null; then
        eval "$(apt-config shell list Dir::Etc::sourcelist/f parts Dir::Etc::sourceparts/d)"
    fi
    {
        for f in "$parts"/*.sources; do
            [ -f "$f" ] || continue
            awk -f "$ROOT/BuildSupport/build/deb822-uris.awk" "$f"
        done
        for f in "$list" "$parts"/*.list; do
            [ -f "$f" ] || continue
            # deb [options] URI suite components...
            sed -E -n 's/^[[:space:]]*deb(-src)?[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+).*/\3/p' "$f"
        done
    } | awk '!seen[$0]++'
}

# The addresses PIN_SOURCES names, in order: "apt:PATH" becomes PATH under each mirror of the apt
# configuration; anything else is used as it is.
source_urls() {
    local entry uri
    for entry in "${PIN_SOURCES[@]}"; do
        case "$entry" in
            apt:*) while read -r uri; do
                       [ -n "$uri" ] && echo "${uri%/}/${entry#apt:}"
                   done < <(apt_mirror_uris) ;;
            *) echo "$entry" ;;
        esac
    done
}

download() {
    local url=$1 out=$2
    case "$url" in
        file:*) cp "${url#file:}" "$out" 2>/dev/null ;;
        http://* | https://*)
            if command -v curl >/dev/null; then
                curl -fsSL --retry 2 --connect-timeout 20 -o "$out" "$url"
            elif command -v wget >/dev/null; then
                wget -q -O "$out" "$url"
            else
                die "neither curl nor wget is installed to download $PIN_TARBALL"
            fi
            ;;
        *) return 1 ;;
    esac
}

# Stops the build (deleting the file when $3 is yes) unless $1 has the pinned SHA-256; $2 says where it came from.
verify_tarball() {
    local file=$1 origin=$2 delete=$3 actual what_now
    actual=$(sha256_of "$file")
    [ "$actual" != "$PIN_SHA256" ] || return 0
    if [ "$delete" = yes ]; then
        rm -f "$file"
        what_now="the file was deleted; run the build again to fetch a fresh copy"
    else
        what_now="the file was left in place (it is yours); point --source at a genuine copy"
    fi
    die "SHA-256 mismatch for $PIN_TARBALL ($origin)
  expected: $PIN_SHA256
  actual:   $actual
  $what_now"
}

# What to do when no source answered: said once, in full, because this is where a bump or an old pin fails.
die_no_source() {
    local tried
    tried=$(printf '    %s\n' "$@")
    die "could not obtain $PIN_TARBALL (SQLCipher $PIN_VERSION, SHA-256 $PIN_SHA256).
  Tried, in the order Vendor/sqlcipher.pin gives (PIN_SOURCES):
$tried
  What to do, any one of:
    - get the file from anywhere you trust (a colleague's Vendor/cache/, another mirror, upstream's release
      page) and run: ./build-sqlcipher.sh --source /path/to/$PIN_TARBALL   (the SHA-256 above is checked);
    - if the Debian pool no longer serves this release, bump the pin: see Vendor/README.md;
    - check the apt configuration (./build-sqlcipher.sh mirrors lists what it reads) and the network."
}

# Checks the user's tarball and copies it into the cache (the user's file is never deleted).
use_local_source() {
    local source_file=$1
    [ -f "$source_file" ] || die "--source: no such file: $source_file"
    verify_tarball "$source_file" "local file $source_file" no
    note "source: $source_file (SHA-256 ok)"
    [ "$source_file" -ef "$TARBALL" ] && return
    cp "$source_file" "$TARBALL.part" || die "cannot copy $source_file into the cache $CACHE_DIR"
    verify_tarball "$TARBALL.part" "copy of $source_file" yes
    mv "$TARBALL.part" "$TARBALL" || die "cannot move the tarball into the cache $CACHE_DIR"
}

# Tries each address of source_urls in order; the first that answers must have the pinned SHA-256.
download_source() {
    local url tried=()
    while read -r url; do
        [ -n "$url" ] || continue
        tried+=("$url")
        if download "$url" "$TARBALL.part"; then
            # A copy that answers but differs is refused loudly (deleted), never tried past.
            verify_tarball "$TARBALL.part" "downloaded from $url" yes
            mv "$TARBALL.part" "$TARBALL"
            note "source: downloaded from $url (SHA-256 ok)"
            return
        fi
        rm -f "$TARBALL.part"
    done < <(source_urls)
    [ ${#tried[@]} -gt 0 ] || tried=("(nothing: no Debian mirror in the apt configuration and no plain address in PIN_SOURCES)")
    die_no_source "${tried[@]}"
}

# Sets TARBALL to a verified copy of the pinned source in the cache.
obtain_source() {
    local source_file=$1
    TARBALL=$CACHE_DIR/$PIN_TARBALL
    mkdir -p "$CACHE_DIR"
    if [ -n "$source_file" ]; then
        use_local_source "$source_file"
    elif [ -f "$TARBALL" ]; then
        verify_tarball "$TARBALL" "cached copy $TARBALL" yes
        note "source: cached $TARBALL (SHA-256 ok)"
    else
        download_source
    fi
}
