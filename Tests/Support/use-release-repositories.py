#!/usr/bin/env python3
"""Points a consumer example's manifest at the release repositories Tests/Support/release-repositories.sh makes:
its lines marked `// SQLCIPHERKIT_DEPENDENCY` and `// DRIVER_DEPENDENCY` (the path form, for development) become
`.package(url: "file://…", from: "1.0.0")` on those repositories. Exits 1 when a marked line is missing.

    use-release-repositories.py MANIFEST REPOSITORIES   (REPOSITORIES: the folder release-repositories.sh filled)
"""
import json
import os
import sys

MARKERS = {"// SQLCIPHERKIT_DEPENDENCY": "SQLCipherKit", "// DRIVER_DEPENDENCY": "FluentSQLCipherDriver"}


def rewrite(text, repositories):
    lines, found = [], set()
    for line in text.split("\n"):
        for marker, name in MARKERS.items():
            if marker in line:
                url = json.dumps("file://" + os.path.join(repositories, name))
                line = f'        .package(url: {url}, from: "1.0.0"),'
                found.add(marker)
        lines.append(line)
    missing = sorted(set(MARKERS) - found)
    if missing:
        raise SystemExit(f"use-release-repositories.py: no line marked {', '.join(missing)}")
    return "\n".join(lines)


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: use-release-repositories.py MANIFEST REPOSITORIES")
    manifest, repositories = sys.argv[1], os.path.abspath(sys.argv[2])
    with open(manifest, encoding="utf-8") as handle:
        text = handle.read()
    with open(manifest, "w", encoding="utf-8") as handle:
        handle.write(rewrite(text, repositories))


if __name__ == "__main__":
    main()
