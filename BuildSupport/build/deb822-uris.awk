# The URIs of the enabled stanzas of a deb822 *.sources file, one a line (build-sqlcipher.sh's mirror list).
# One stanza per blank-line-separated block; stanzas with "Enabled: no" are skipped.
BEGIN { RS = ""; FS = "\n" }
{
    enabled = 1; uris = ""
    for (i = 1; i <= NF; i++) {
        if ($i ~ /^[Ee]nabled:[ \t]*no/) enabled = 0
        if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", $i); uris = uris " " $i }
    }
    if (enabled) { n = split(uris, u, /[ \t]+/); for (j = 1; j <= n; j++) if (u[j] != "") print u[j] }
}
