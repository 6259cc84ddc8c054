#!/usr/bin/env python3
"""Points a consumer example's manifest at the release repositories Tests/Support/release-repositories.sh makes,
with the dependency lines the docs give a newcomer (issue 48: the Fluent route, verbatim): the two
`.package(url: "https://your.host/NAME", from: "VERSION")` lines of the driver's article "Adding the driver, and
moving a fluent-sqlite-driver app to it" (MovingFromFluentSQLiteDriver.md), with only their URL filled in
(file://REPOSITORIES/NAME), replace the example's lines marked `// SQLCIPHERKIT_DEPENDENCY` and
`// DRIVER_DEPENDENCY` (the path form, for development); a line marked `// OBSERVABILITY_DEPENDENCY`, where an
example has one, gets the SQLCipherKitObservability line of SQLCipherKit's Observability article the same way. Their `from:` stays the article's (an article naming a
later version than the tag fails to resolve; one naming an earlier version of the same major would resolve, and
the docs part's version check, Tests/Docs/check-examples.py, fails it). Exits 1 when a marked line, or the article's
line for it, is missing.

    use-release-repositories.py MANIFEST REPOSITORIES   (REPOSITORIES: the folder release-repositories.sh filled)
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ARTICLE = os.path.join(ROOT, "Drivers", "FluentSQLCipherDriver", "Sources", "FluentSQLCipherDriver",
                       "FluentSQLCipherDriver.docc", "MovingFromFluentSQLiteDriver.md")
OBSERVABILITY_ARTICLE = os.path.join(ROOT, "Sources", "SQLCipherKit", "Documentation.docc", "Observability.md")
PLACEHOLDER = "https://your.host/"
MARKERS = {"// SQLCIPHERKIT_DEPENDENCY": "SQLCipherKit", "// DRIVER_DEPENDENCY": "FluentSQLCipherDriver",
           "// OBSERVABILITY_DEPENDENCY": "SQLCipherKitObservability"}
# Every example has these two; the observability line only the examples that use the bridge.
REQUIRED = ("// SQLCIPHERKIT_DEPENDENCY", "// DRIVER_DEPENDENCY")
# The document whose line each package gets.
SOURCES = {"SQLCipherKit": ARTICLE, "FluentSQLCipherDriver": ARTICLE,
           "SQLCipherKitObservability": OBSERVABILITY_ARTICLE}


def article_lines():
    """The articles' dependency line for each package, as printed (stripped of its indentation)."""
    lines = {}
    for name in MARKERS.values():
        with open(SOURCES[name], encoding="utf-8") as handle:
            text = handle.read()
        pattern = re.compile(r'^\s*(\.package\(url: "' + re.escape(PLACEHOLDER + name) + r'", from: "[^"]+"\),)\s*$',
                             re.MULTILINE)
        found = pattern.findall(text)
        if len(found) != 1:
            raise SystemExit(f"use-release-repositories.py: {SOURCES[name]} must give {name}'s dependency line once "
                             f'(.package(url: "{PLACEHOLDER}{name}", from: "…"),); found it {len(found)} times')
        lines[name] = found[0]
    return lines


def rewrite(text, repositories, lines):
    result, found = [], set()
    for line in text.split("\n"):
        for marker, name in MARKERS.items():
            if marker in line:
                url = "file://" + os.path.join(repositories, name)
                line = "        " + lines[name].replace(PLACEHOLDER + name, url)
                found.add(marker)
        result.append(line)
    missing = sorted(set(REQUIRED) - found)
    if missing:
        raise SystemExit(f"use-release-repositories.py: no line marked {', '.join(missing)}")
    return "\n".join(result)


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: use-release-repositories.py MANIFEST REPOSITORIES")
    manifest, repositories = sys.argv[1], os.path.abspath(sys.argv[2])
    lines = article_lines()
    with open(manifest, encoding="utf-8") as handle:
        text = handle.read()
    with open(manifest, "w", encoding="utf-8") as handle:
        handle.write(rewrite(text, repositories, lines))


if __name__ == "__main__":
    main()
