#!/usr/bin/env python3
"""The system calls a systemd unit's SystemCallFilter= lines allow, one name a line, as systemd computes them:
its groups (@name) expanded from `systemd-analyze syscall-filter` (the machine's systemd, not a copy of ours), the
first assignment an allow list unless it starts with `~`, later `~` assignments taken out of it, later plain ones
added. With `RestrictAddressFamilies=none`, `socket` is not in the list and a line `!socket` says it fails with
EAFNOSUPPORT, as systemd makes it (socketpair is not affected); other RestrictAddressFamilies= values are not
emulated. SQLCipherKit's own test tool (CLITests/SystemdExampleTests; unit-filter.c applies the list).

    unit_syscalls.py UNIT-FILE
"""
import subprocess
import sys


def groups():
    """{group: [member, ...]} from systemd-analyze's listing: a group starts at a line `@name` in column 0; its
    members are the indented lines after it (comments skipped), names or other groups."""
    listing = subprocess.run(["systemd-analyze", "syscall-filter"], check=True, capture_output=True,
                             text=True).stdout
    result, current = {}, None
    for line in listing.splitlines():
        if line.startswith("@"):
            current = line.strip()
            result[current] = []
        elif current and line.startswith(" ") and line.strip() and not line.strip().startswith("#"):
            result[current].append(line.strip())
        elif not line.strip():
            current = None
    return result


def expand(names, known, seen=None):
    seen = set() if seen is None else seen
    calls = set()
    for name in names:
        if name.startswith("@"):
            if name not in known:
                sys.exit(f"unit_syscalls.py: systemd-analyze knows no group {name}")
            if name not in seen:
                seen.add(name)
                calls |= expand(known[name], known, seen)
        else:
            calls.add(name)
    return calls


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    assignments, families = [], []
    with open(sys.argv[1], encoding="utf-8") as unit:
        for line in unit:
            if line.startswith("SystemCallFilter="):
                assignments.append(line.split("=", 1)[1].split("#")[0].split())
            elif line.startswith("RestrictAddressFamilies="):
                families = line.split("=", 1)[1].split()
    if not assignments:
        sys.exit("unit_syscalls.py: the unit has no SystemCallFilter=")
    known = groups()
    first = assignments[0]
    if first and first[0].startswith("~"):
        sys.exit("unit_syscalls.py: a deny list (first assignment starting with ~) is not supported")
    allowed = expand(first, known)
    for words in assignments[1:]:
        if words and words[0].startswith("~"):
            allowed -= expand([words[0][1:]] + words[1:], known)
        else:
            allowed |= expand(words, known)
    lines = sorted(allowed)
    if families == ["none"]:
        lines = [name for name in lines if name != "socket"] + ["!socket"]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
