#!/usr/bin/env python3
"""SQLCipherKit's local changes to the generated amalgamation: one-line fixes of engine bugs upstream has not
fixed yet, applied by build-sqlcipher.sh's amalgamation phase (BuildSupport/build/local-changes.sh).

    local_changes.py apply --source sqlite3.c --sqlite-version V [--changes DIR] [--entry ENTRY]...
    local_changes.py json [--changes DIR] [--entry ENTRY]...

ENTRY is one element of the pin's PIN_LOCAL_CHANGES: "NAME|SQLITE VERSIONS (space-separated)|REASON".
DIR/NAME.change holds the change: `function:` (the function the line is in), `match:` (the whole line, as the
generated source has it, indentation included) and `replace:` (its replacement; several `replace:` lines, in
order, replace the one line with several); `#` lines are comments.

`apply` stops (exit status 1, a message naming the change) unless, for every entry, the pin's SQLite version is
one the entry lists and the line is found exactly once, inside the named function: a bump decides again for
every change, and one that upstream has fixed (line gone) is dropped from the pin. It then appends
`sqlcipherkit_local_changes()`, which returns the applied names (space-separated; "" for none), so that the
engine itself says which changes it carries (Engine.selfCheck() reads it).
`json` prints the entries as a JSON list of {name, sqliteVersions, reason, function, match, replace} for
pin.json, MANIFEST.json and the SBOM (DIR from --changes, default BuildSupport/engine/local-changes).
"""
import argparse
import json
import os
import re
import sys

DEFAULT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "engine", "local-changes")
NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def fail(message):
    sys.exit(f"local_changes.py: {message}")


def parse_entry(entry):
    parts = entry.split("|", 2)
    if len(parts) != 3 or not NAME.match(parts[0]) or not parts[1].split() or not parts[2].strip():
        fail(f"PIN_LOCAL_CHANGES entry {entry!r} is not NAME|SQLITE VERSIONS|REASON (name: a-z, 0-9, -)")
    return {"name": parts[0], "sqliteVersions": parts[1].split(), "reason": parts[2].strip()}


def read_change(directory, name):
    path = os.path.join(directory, name + ".change")
    if not os.path.isfile(path):
        fail(f"{name}: no change file {path}")
    fields = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle.read().split("\n"), 1):
            if not line or line.startswith("#"):
                continue
            key, sep, value = line.partition(": ")
            if not sep or key not in ("function", "match", "replace") or (key in fields and key != "replace"):
                fail(f"{path}:{number}: expected one 'function: ', one 'match: ' and 'replace: ' lines")
            fields[key] = fields[key] + "\n" + value if key in fields else value
    missing = [key for key in ("function", "match", "replace") if key not in fields]
    if missing:
        fail(f"{path}: no {', '.join(missing)}")
    if fields["match"] == fields["replace"]:
        fail(f"{path}: the replacement is the line it replaces")
    return fields


def describe(entries, directory):
    return [dict(entry, **read_change(directory, entry["name"])) for entry in entries]


def enclosing_function(lines, index):
    """The name-bearing line of the definition the line at index is in: the nearest line above it that starts
    in column 0 and is not a brace, comment or preprocessor line (SQLite's style puts the signature there)."""
    for line in reversed(lines[:index]):
        if not line or line[0] in " \t}){#/*":
            continue
        return line
    return ""


def apply(source, version, changes):
    with open(source, encoding="utf-8", errors="surrogateescape") as handle:
        lines = handle.read().split("\n")
    for change in changes:
        name = change["name"]
        if version not in change["sqliteVersions"]:
            fail(f"{name}: the pin's SQLite is {version}, but this local change is recorded for SQLite "
                 f"{' '.join(change['sqliteVersions'])} only. Decide again: if upstream has fixed "
                 f"{change['function']}() in {version}, remove the entry from PIN_LOCAL_CHANGES in "
                 f"Vendor/sqlcipher.pin (and BuildSupport/engine/local-changes/{name}.change); if not, add "
                 f"{version} to the entry and check the line still fixes it.")
        found = [i for i, line in enumerate(lines) if line == change["match"]]
        if len(found) != 1:
            lines_found = ", ".join(str(i + 1) for i in found)
            where = "not found" if not found else f"found {len(found)} times (lines {lines_found})"
            fail(f"{name}: the line it changes is {where} in the generated {os.path.basename(source)} (SQLite "
                 f"{version}):\n    {change['match']}\nUpstream may have fixed or rewritten "
                 f"{change['function']}(): read it, then drop the entry from PIN_LOCAL_CHANGES in "
                 f"Vendor/sqlcipher.pin if the bug is gone, or update BuildSupport/engine/local-changes/{name}.change.")
        signature = enclosing_function(lines, found[0])
        if not re.search(r"\b" + re.escape(change["function"]) + r"\s*\(", signature):
            fail(f"{name}: line {found[0] + 1} is not inside {change['function']}() (it follows {signature!r})")
        lines[found[0]] = change["replace"]
    names = " ".join(change["name"] for change in changes)
    lines[-1:] = [
        "/* SQLCipherKit: the local changes applied to this generated source (Vendor/sqlcipher.pin, */",
        "/* PIN_LOCAL_CHANGES; BuildSupport/local_changes.py). Engine.selfCheck() reads them. */",
        f'const char *sqlcipherkit_local_changes(void){{ return "{names}"; }}',
        lines[-1],
    ]
    partial = source + ".part"
    with open(partial, "w", encoding="utf-8", errors="surrogateescape") as handle:
        handle.write("\n".join(lines))
    os.replace(partial, source)
    for change in changes:
        replacement = change["replace"].strip().split("\n")
        more = f" (+{len(replacement) - 1} lines)" if len(replacement) > 1 else ""
        print(f"local change {change['name']}: {change['function']}(): {replacement[0]}{more}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["apply", "json"])
    parser.add_argument("--source")
    parser.add_argument("--sqlite-version")
    parser.add_argument("--changes", default=DEFAULT_DIR)
    parser.add_argument("--entry", action="append", default=[], dest="entries")
    args = parser.parse_args()
    entries = [parse_entry(entry) for entry in args.entries]
    names = [entry["name"] for entry in entries]
    if len(set(names)) != len(names):
        fail(f"PIN_LOCAL_CHANGES names a change twice: {' '.join(names)}")
    changes = describe(entries, args.changes)
    if args.action == "json":
        json.dump(changes, sys.stdout, ensure_ascii=False)
        print()
        return
    if not args.source or not args.sqlite_version:
        fail("apply needs --source FILE and --sqlite-version VERSION")
    apply(args.source, args.sqlite_version, changes)


if __name__ == "__main__":
    main()
