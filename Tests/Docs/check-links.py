#!/usr/bin/env python3
"""The documents' links, checked (the `docs` part of Tests/run-all.sh).

Reads README.md, docs/*.md, BENCHMARKS.md, Vendor/README.md, Examples/*/README.md and Tests/**/README.md (or the
files named on the command line), and checks every relative link in them: inline links `[text](target)`, images,
reference definitions `[name]: target` and `<a href="…">`. A link fails when the file or folder it names does not
exist, or when its `#anchor` names no heading of the Markdown file it points to (GitHub's slugs: lower case,
punctuation but `-` and `_` dropped, spaces to `-`, `-1`, `-2`… for repeats; explicit `<a id="…">`/`name` anchors
count too). Links with a scheme (`https:`, `mailto:`…) are not fetched. Code spans and fenced code blocks are
skipped, as GitHub renders them as text.

Prints "ok: FILE:LINE: TARGET" for each link that resolves and "FAIL: FILE:LINE: TARGET: WHY" for each that does
not, then "LINKS: N passed, N failed"; exits 1 when any failed. Standard library only.
"""
import glob
import os
import re
import sys
import urllib.parse

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_PATTERNS = ["README.md", "docs/*.md", "BENCHMARKS.md", "Vendor/README.md", "Examples/*/README.md",
                    "Tests/**/README.md"]

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HREF = re.compile(r"<a\s[^>]*href=\"([^\"]*)\"", re.IGNORECASE)
HTML_ANCHOR = re.compile(r"<a\s[^>]*(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def unfenced(path):
    """The file's lines outside fenced code blocks, as (line number, text); None for a fence's lines."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    fence = None
    for number, line in enumerate(lines, 1):
        opened = FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            yield number, None
        elif opened:
            fence = opened.group(1)
            yield number, None
        else:
            yield number, line


def text_lines(path):
    """The file's lines outside fenced code blocks, code spans blanked."""
    for number, line in unfenced(path):
        if line is not None:
            yield number, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def slug(heading):
    """GitHub's anchor for a heading's text: its rendered text, lower case, every character but letters, digits,
    spaces, `-` and `_` dropped, spaces to `-`."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # a link's text only
    text = re.sub(r"<[^>]+>", "", text)                          # HTML tags
    text = text.replace("`", "")
    text = text.replace("*", "")
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


_anchors = {}


def anchors(path):
    """Every anchor of the Markdown file at path: its headings' slugs (repeats numbered) and explicit HTML ids."""
    if path in _anchors:
        return _anchors[path]
    found, seen = set(), {}
    previous = None
    for _, line in unfenced(path):
        if line is None:
            previous = None
            continue
        title = None
        match = HEADING.match(line)
        if match:
            title = match.group(2)
        elif previous and SETEXT.match(line) and not HEADING.match(previous) and not previous.startswith(("|", "-", "*")):
            title = previous.strip()
        if title is not None:
            base = slug(title)
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        for anchor in HTML_ANCHOR.findall(line):
            found.add(anchor)
        previous = line if line.strip() else None
    _anchors[path] = found
    return found


def targets(path):
    """Every link target in the file, with its line number."""
    for number, line in text_lines(path):
        for match in INLINE.finditer(line):
            yield number, match.group(1)
        reference = REFERENCE.match(line)
        if reference:
            yield number, reference.group(1)
        for href in HREF.findall(line):
            yield number, href


def check(path, number, target):
    """None when target (a link in path) resolves, else why not."""
    if SCHEME.match(target):
        return None
    address, _, anchor = target.partition("#")
    address = urllib.parse.unquote(address)
    anchor = urllib.parse.unquote(anchor)
    if address:
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), address))
        if not resolved.startswith(ROOT + os.sep) and resolved != ROOT:
            return "points outside the repository"
        if not os.path.exists(resolved):
            return "no such file or folder"
    else:
        resolved = path
    if anchor:
        if os.path.isdir(resolved):
            return "an anchor on a folder"
        if not resolved.endswith(".md"):
            return None   # a line in a source file (#L10) or the like: not checked
        if anchor.lower() not in anchors(resolved):
            return f"no heading or anchor '#{anchor}' in {os.path.relpath(resolved, ROOT)}"
    return None


def main(arguments):
    if arguments:
        files = [os.path.abspath(name) for name in arguments]
    else:
        files = []
        for pattern in DEFAULT_PATTERNS:
            files += sorted(glob.glob(os.path.join(ROOT, pattern), recursive=True))
        files = [name for name in dict.fromkeys(files) if "/.build" not in name]
    passed = failed = 0
    for path in files:
        if not os.path.isfile(path):
            print(f"FAIL: {os.path.relpath(path, ROOT)}: no such document")
            failed += 1
            continue
        shown = os.path.relpath(path, ROOT)
        for number, target in targets(path):
            if SCHEME.match(target):
                continue
            why = check(path, number, target)
            if why is None:
                print(f"ok: {shown}:{number}: {target}")
                passed += 1
            else:
                print(f"FAIL: {shown}:{number}: {target}: {why}")
                failed += 1
    print(f"LINKS: {passed} passed, {failed} failed ({len(files)} documents)")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
