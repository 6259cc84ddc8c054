# shellcheck shell=bash
# Step of the "amalgamation" phase: SQLCipherKit's local changes, one-line fixes of engine bugs upstream has not
# fixed yet and one hardening (the export gate), applied to the generated sqlite3.c (never to a committed copy of
# upstream's text). The pin names each one (PIN_LOCAL_CHANGES: name, the SQLite versions it applies to, why);
# its line and replacement are
# BuildSupport/engine/local-changes/NAME.change; BuildSupport/local_changes.py applies them and stops the build
# when the pin's SQLite version is not one an entry lists or its line is not found exactly once, so a bump decides
# again for each change and drops it once upstream has fixed the bug. The engine records what it carries
# (sqlcipherkit_local_changes(), read by Engine.selfCheck()); pin.json, MANIFEST.json and the SBOM list them.
LOCAL_CHANGES_TOOL=$ROOT/BuildSupport/local_changes.py
LOCAL_CHANGES_DIR=$ROOT/BuildSupport/engine/local-changes

# The pin's entries as --entry arguments (none when the pin has no PIN_LOCAL_CHANGES).
local_change_arguments() {
    local entry
    LOCAL_CHANGE_ARGS=()
    for entry in ${PIN_LOCAL_CHANGES[@]+"${PIN_LOCAL_CHANGES[@]}"}; do LOCAL_CHANGE_ARGS+=(--entry "$entry"); done
}

# What decides the changes' outcome, for the amalgamation's stamp: the entries, the change files, the tool.
local_changes_stamp() {
    local file
    printf '%s\n' ${PIN_LOCAL_CHANGES[@]+"${PIN_LOCAL_CHANGES[@]}"} "$(sha256_of "$LOCAL_CHANGES_TOOL")"
    for file in "$LOCAL_CHANGES_DIR"/*.change; do
        [ -f "$file" ] && printf '%s %s\n' "${file##*/}" "$(sha256_of "$file")"
    done
    return 0
}

# Applies the pin's local changes to the generated sqlite3.c $1, or stops the build saying which one and why.
apply_local_changes() {
    local_change_arguments
    python3 "$LOCAL_CHANGES_TOOL" apply --source "$1" --sqlite-version "$PIN_SQLITE_VERSION" \
        --changes "$LOCAL_CHANGES_DIR" ${LOCAL_CHANGE_ARGS[@]+"${LOCAL_CHANGE_ARGS[@]}"} | sed 's/^/    /' \
        || die "a local change in Vendor/sqlcipher.pin (PIN_LOCAL_CHANGES) does not apply to SQLite" \
            "$PIN_SQLITE_VERSION (see above)"
    grep -q '^const char \*sqlcipherkit_local_changes(void)' "$1" \
        || die "the generated sqlite3.c does not record its local changes (sqlcipherkit_local_changes)"
}

# The pin's local changes as a JSON list ({name, sqliteVersions, reason, function, match, replace}), for
# json_object's KEY:=JSON arguments.
local_changes_json() {
    local_change_arguments
    python3 "$LOCAL_CHANGES_TOOL" json --changes "$LOCAL_CHANGES_DIR" \
        ${LOCAL_CHANGE_ARGS[@]+"${LOCAL_CHANGE_ARGS[@]}"} \
        || die "could not read the local changes of Vendor/sqlcipher.pin (PIN_LOCAL_CHANGES)"
}
