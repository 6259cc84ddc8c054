#!/usr/bin/env python3
"""The documents' links, checked (the `docs` part of Tests/run-all.sh).

Reads every Markdown document and DocC article of the repository (or the files named on the command line): the
`*.md`, `*.markdown` and `*.tutorial` files git lists, tracked or new (`git ls-files --cached --others
--exclude-standard`), so a document added anywhere is checked without being named here. Left out is only what git
ignores, which is not ours: SwiftPM's build folders (`.build*/`, with the dependencies' checkouts and their
documents), `Vendor/cache/` and `Vendor/build/` (SQLCipher's tarball and its unpacked sources) and `dist/` (the
generated release packages, whose catalogues are copies of the ones checked here).

In every document it checks every relative link: inline links `[text](target)`, images, reference definitions
`[name]: target` and `<a href="…">`. A link fails when the file or folder it names does not exist, or when its
`#anchor` names no heading of the Markdown file it points to (GitHub's slugs: lower case, punctuation but `-` and
`_` dropped, spaces to `-`, `-1`, `-2`… for repeats; explicit `<a id="…">`/`name` anchors count too). Links with
a scheme (`https:`, `mailto:`…) are not fetched. Code spans and fenced code blocks are skipped, as GitHub renders
them as text.

In a DocC article (a file inside a `*.docc` catalogue) it also checks DocC's own link forms, as far as a Markdown
checker can without the symbol graph (`check-docc.sh` runs `docc convert`, which resolves every symbol link in
full, overloads included):
- `<doc:Name>` and `[text](<doc:Name>)`: Name (its last path component) must be an article of the same catalogue,
  and a `#Fragment` a heading of that article (compared as GitHub's slugs, ignoring case);
- ``` ``Symbol/member(_:)`` ``` symbol links: every component's name (before its `(` or `-` disambiguation) must be
  declared in the catalogue's module (the Swift sources of the target folder holding the catalogue), the module's
  own name allowed first;
- `@Snippet(path:)`: the snippet's file under the package's `Snippets/`; `@Image`/`@Video(source:)`: a resource of
  that name in the catalogue.
A `<doc:>` link in a document outside a catalogue fails: GitHub shows it as a dead link.

Before the repository's documents, it runs its controls (none when files are named on the command line): in a
temporary copy of the FluentSQLCipherDriver target folder (its sources and catalogue), made a git repository of its
own so that the documents are found as above, it plants a synthetic article and a README with a dead relative link,
a dead anchor, a dead `<doc:>`, a dead `<doc:>` fragment, two dead symbol links and a `<doc:>` outside a catalogue,
each beside a live one. Each dead one must give a FAIL and each live one pass; a control that shows nothing (the
planted line not checked at all, or checked as passing) fails the run.

Prints "ok: FILE:LINE: TARGET" for each link that resolves and "FAIL: FILE:LINE: TARGET: WHY" for each that does
not, "ok: control: …" or "FAIL: control: …" for each control, then
"LINKS: N passed, N failed (N documents); controls: N passed, N failed"; exits 1 when anything failed.
Standard library only (and git).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOCUMENT_PATTERNS = ["*.md", "*.markdown", "*.tutorial"]

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HREF = re.compile(r"<a\s[^>]*href=\"([^\"]*)\"", re.IGNORECASE)
HTML_ANCHOR = re.compile(r"<a\s[^>]*(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
DOC_LINK = re.compile(r"<(doc:[^>\s]*)>")
DIRECTIVE = re.compile(r"@(Snippet|Image|Video)\s*\(([^)]*)\)")
DIRECTIVE_ARGUMENT = re.compile(r"\b(path|source)\s*:\s*\"([^\"]*)\"")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DECLARATION = re.compile(r"\b(?:func|var|let|case|struct|class|enum|protocol|typealias|actor|associatedtype|macro)"
                         r"\s+`?([A-Za-z_][A-Za-z0-9_]*)")
CASE_LIST = re.compile(r"\bcase\s+([^:{}\n]*)")
SPECIAL_MEMBERS = re.compile(r"\b(init|deinit|subscript)\s*[(?!<{]")


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


def blank_code_spans(line):
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


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


def catalogue_of(path, root):
    """The DocC catalogue (the nearest folder named *.docc) holding path, or None."""
    folder = os.path.dirname(path)
    while folder.startswith(root + os.sep):
        if folder.endswith(".docc"):
            return folder
        folder = os.path.dirname(folder)
    return None


def catalogue_articles(catalogue):
    """The catalogue's articles and tutorials, by name (the file's name without its extension)."""
    found = {}
    for folder, _, names in os.walk(catalogue):
        for name in names:
            if name.endswith((".md", ".tutorial")):
                found.setdefault(os.path.splitext(name)[0], os.path.join(folder, name))
    return found


_declared = {}


def declared_names(module_folder):
    """Every name the Swift sources under module_folder declare (types, members, enum cases, init/subscript), with
    comments removed: enough to tell a symbol link's components from names that are declared nowhere."""
    if module_folder in _declared:
        return _declared[module_folder]
    names = set()
    for folder, subfolders, files in os.walk(module_folder):
        subfolders[:] = [name for name in subfolders if not name.endswith(".docc")]
        for name in files:
            if not name.endswith(".swift"):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                text = handle.read()
            text = re.sub(r"/\*.*?\*/", " ", text, flags=re.DOTALL)
            text = re.sub(r"//[^\n]*", " ", text)
            names.update(DECLARATION.findall(text))
            names.update(SPECIAL_MEMBERS.findall(text))
            for cases in CASE_LIST.findall(text):           # case a, b(Int), c = 3
                depth, item = 0, ""
                for character in cases + ",":
                    if character in "([":
                        depth += 1
                    elif character in ")]":
                        depth -= 1
                    elif character == "," and depth == 0:
                        match = IDENTIFIER.match(item.strip())
                        if match:
                            names.add(match.group(0))
                        item = ""
                        continue
                    item += character
    _declared[module_folder] = names
    return names


def package_root(folder, root):
    """The nearest folder at or above folder with a Package.swift, within root."""
    while folder.startswith(root):
        if os.path.isfile(os.path.join(folder, "Package.swift")):
            return folder
        if folder == root:
            break
        folder = os.path.dirname(folder)
    return None


def targets(path, in_catalogue):
    """Every link target in the file, with its line number and kind: "link" (a Markdown or HTML link; "doc:…" for
    a DocC link in either form), and in a catalogue also "symbol" (``…``) and "directive" (@Snippet and the like)."""
    for number, raw in unfenced(path):
        if raw is None:
            continue
        line = blank_code_spans(raw)
        rest = line
        for match in INLINE.finditer(line):
            yield number, "link", match.group(1)
            rest = rest[:match.start()] + " " * (match.end() - match.start()) + rest[match.end():]
        reference = REFERENCE.match(line)
        if reference:
            yield number, "link", reference.group(1)
        for href in HREF.findall(line):
            yield number, "link", href
        for match in DOC_LINK.finditer(rest):
            yield number, "link", match.group(1)
        if in_catalogue:
            for span in CODE_SPAN.finditer(raw):
                if span.group(1) == "``":
                    yield number, "symbol", span.group(0)[2:-2]
            for match in DIRECTIVE.finditer(line):
                yield number, "directive", match.group(0)


def shown_target(kind, target):
    if kind == "symbol":
        return f"``{target}``"
    if target.startswith("doc:"):
        return f"<{target}>"
    return target


def check_doc_link(path, target, catalogue, root):
    """None when the DocC link target ("doc:Name#Fragment") names an article of path's catalogue, else why not."""
    if catalogue is None:
        return "a DocC link outside a .docc catalogue (GitHub shows it as a dead link)"
    name, _, fragment = target[len("doc:"):].partition("#")
    name = urllib.parse.unquote(name).rstrip("/").split("/")[-1]
    article = catalogue_articles(catalogue).get(name)
    if article is None:
        return f"no article '{name}' in {os.path.relpath(catalogue, root)}"
    if fragment and slug(urllib.parse.unquote(fragment).replace("-", " ")) not in anchors(article):
        return f"no heading '#{fragment}' in {os.path.relpath(article, root)}"
    return None


def check_symbol(target, catalogue, root):
    """None when every component of the symbol link target is declared in the catalogue's module, else why not."""
    module_folder = os.path.dirname(catalogue)
    module = os.path.basename(module_folder)
    components, depth, current = [], 0, ""
    for character in target:                      # split on / outside parentheses (an operator may hold one)
        if character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
        if character == "/" and depth == 0:
            components.append(current)
            current = ""
        else:
            current += character
    components.append(current)
    if components and components[0] == module:
        components = components[1:]
    names = declared_names(module_folder)
    for component in components:
        match = IDENTIFIER.match(component)
        if match is None:
            continue                              # an operator: docc resolves it
        if match.group(0) not in names:
            return (f"no declaration named '{match.group(0)}' in module {module} "
                    f"({os.path.relpath(module_folder, root)})")
    return None


def check_directive(path, target, catalogue, root):
    """None when the @Snippet's file or the @Image/@Video's resource exists, else why not."""
    argument = DIRECTIVE_ARGUMENT.search(target)
    if argument is None:
        return "no path: or source: argument"
    value = argument.group(2)
    if target.startswith("@Snippet"):
        package = package_root(os.path.dirname(catalogue), root)
        parts = value.split("/")
        wanted = os.path.join(package or root, *parts[1:]) + ".swift"
        return None if os.path.isfile(wanted) else f"no snippet {os.path.relpath(wanted, root)}"
    pattern = re.compile(re.escape(value) + r"([@~.]|$)")
    for _, _, names in os.walk(catalogue):
        if any(pattern.match(name) for name in names):
            return None
    return f"no resource '{value}' in {os.path.relpath(catalogue, root)}"


def check_link(path, target, root):
    """None when target (a relative link in path) resolves, else why not."""
    address, _, anchor = target.partition("#")
    address = urllib.parse.unquote(address)
    anchor = urllib.parse.unquote(anchor)
    if address:
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), address))
        if not resolved.startswith(root + os.sep) and resolved != root:
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
            return f"no heading or anchor '#{anchor}' in {os.path.relpath(resolved, root)}"
    return None


def check_document(path, root):
    """Every checked target of the document at path: (line number, target as shown, None or why it fails)."""
    catalogue = catalogue_of(path, root)
    results = []
    for number, kind, target in targets(path, catalogue is not None):
        if kind == "symbol":
            why = check_symbol(target, catalogue, root)
        elif kind == "directive":
            why = check_directive(path, target, catalogue, root)
        elif target.startswith("doc:"):
            why = check_doc_link(path, target, catalogue, root)
        elif SCHEME.match(target):
            continue
        else:
            why = check_link(path, target, root)
        results.append((number, shown_target(kind, target), why))
    return results


def documents(root):
    """The repository's documents, as git lists them (tracked, or new and not ignored); None if git cannot."""
    listing = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                              "--", *DOCUMENT_PATTERNS], capture_output=True, check=False)
    if listing.returncode != 0:
        return None
    names = sorted({name for name in listing.stdout.decode("utf-8").split("\0") if name})
    # (A tracked file deleted in the working tree is not a document any more.)
    return [os.path.join(root, name) for name in names if os.path.isfile(os.path.join(root, name))]


# The controls: a synthetic article, Swift file and README planted in a temporary copy of the driver's target folder.
CONTROL_TARGET = "Drivers/FluentSQLCipherDriver/Sources/FluentSQLCipherDriver"
CONTROL_CATALOGUE = CONTROL_TARGET + "/FluentSQLCipherDriver.docc"
CONTROL_SWIFT = """// A synthetic declaration for the docs check's controls (never in the repository).
public struct PlantedControlThing {
    public func plantedMember() {}
}
"""
CONTROL_ARTICLE = """# Planted control

A synthetic article the docs check writes into a temporary copy of the catalogue, never into the repository.

## Planted links

- [a live relative link](PlantedTarget.md)
- [a dead relative link](NoSuchPlantedFile.md)
- [a live anchor](#planted-links)
- [a dead anchor](#no-such-planted-heading)
- <doc:PlantedTarget>
- <doc:NoSuchPlantedArticle>
- [a dead DocC link in Markdown's form](<doc:NoSuchPlantedArticleInMarkdownForm>)
- <doc:PlantedTarget#The-target-heading>
- <doc:PlantedTarget#No-such-planted-fragment>
- ``PlantedControlThing/plantedMember()``
- ``PlantedControlThing/noSuchPlantedMember()``
- ``NoSuchPlantedSymbol``
"""
CONTROL_TARGET_ARTICLE = """# Planted target

The article the planted control article links to.

## The target heading
"""
CONTROL_README = """# Control

- [a live link into the catalogue](%(catalogue)s/PlantedTarget.md#the-target-heading)
- [a dead link](no-such-planted-document.md)
- [a dead anchor](%(catalogue)s/PlantedTarget.md#no-such-planted-heading)
- <doc:PlantedTarget>
""" % {"catalogue": CONTROL_CATALOGUE}
# (document, target as shown, whether it must fail, what the control shows)
CONTROL_EXPECTED = [
    (CONTROL_CATALOGUE + "/PlantedControl.md", "PlantedTarget.md", False, "a live relative link in a .docc article"),
    (CONTROL_CATALOGUE + "/PlantedControl.md", "NoSuchPlantedFile.md", True, "a dead relative link in a .docc article"),
    (CONTROL_CATALOGUE + "/PlantedControl.md", "#planted-links", False, "a live anchor in a .docc article"),
    (CONTROL_CATALOGUE + "/PlantedControl.md", "#no-such-planted-heading", True, "a dead anchor in a .docc article"),
    (CONTROL_CATALOGUE + "/PlantedControl.md", "<doc:PlantedTarget>", False, "a live <doc:> to an article"),
    (CONTROL_CATALOGUE + "/PlantedControl.md", "<doc:NoSuchPlantedArticle>", True,
     "a dead <doc:> (no such article in the catalogue)"),
    (CONTROL_CATALOGUE + "/PlantedControl.md", "<doc:NoSuchPlantedArticleInMarkdownForm>", True,
     "a dead <doc:> in Markdown's link form"),
    (CONTROL_CATALOGUE + "/PlantedControl.md", "<doc:PlantedTarget#The-target-heading>", False,
     "a live <doc:> fragment"),
    (CONTROL_CATALOGUE + "/PlantedControl.md", "<doc:PlantedTarget#No-such-planted-fragment>", True,
     "a dead <doc:> fragment"),
    (CONTROL_CATALOGUE + "/PlantedControl.md", "``PlantedControlThing/plantedMember()``", False, "a live symbol link"),
    (CONTROL_CATALOGUE + "/PlantedControl.md", "``PlantedControlThing/noSuchPlantedMember()``", True,
     "a symbol link to a member declared nowhere"),
    (CONTROL_CATALOGUE + "/PlantedControl.md", "``NoSuchPlantedSymbol``", True, "a symbol link to a type declared nowhere"),
    ("README.md", CONTROL_CATALOGUE + "/PlantedTarget.md#the-target-heading", False,
     "a live link and anchor from a Markdown document into an article"),
    ("README.md", "no-such-planted-document.md", True, "a dead link in a Markdown document"),
    ("README.md", CONTROL_CATALOGUE + "/PlantedTarget.md#no-such-planted-heading", True,
     "a dead anchor in a Markdown document"),
    ("README.md", "<doc:PlantedTarget>", True, "a <doc:> outside a catalogue"),
]


def run_controls():
    """Runs the planted controls; prints one line each and returns (passed, failed)."""
    passed = failed = 0
    work = tempfile.mkdtemp(prefix="sqlcipherkit-docs-controls.")
    try:
        root = os.path.realpath(work)
        shutil.copytree(os.path.join(ROOT, CONTROL_TARGET), os.path.join(root, CONTROL_TARGET),
                        ignore=shutil.ignore_patterns(".build*"))
        for name, text in [(CONTROL_TARGET + "/PlantedControl.swift", CONTROL_SWIFT),
                           (CONTROL_CATALOGUE + "/PlantedControl.md", CONTROL_ARTICLE),
                           (CONTROL_CATALOGUE + "/PlantedTarget.md", CONTROL_TARGET_ARTICLE),
                           ("README.md", CONTROL_README)]:
            with open(os.path.join(root, name), "w", encoding="utf-8") as handle:
                handle.write(text)
        subprocess.run(["git", "init", "-q", root], check=True, capture_output=True)
        found = documents(root)
        results = {}
        for path in found or []:
            for number, target, why in check_document(path, root):
                results.setdefault((os.path.relpath(path, root), target), []).append((number, why))
        for document, target, must_fail, what in CONTROL_EXPECTED:
            seen = results.get((document, target))
            document = os.path.basename(document)
            if not seen:
                print(f"FAIL: control: {what}: {document}: {target} was never checked (the check saw nothing)")
                failed += 1
                continue
            whys = [why for _, why in seen]
            if must_fail and all(why is not None for why in whys):
                why = whys[0].replace(root + os.sep, "")
                print(f"ok: control: {what} fails ({document}:{seen[0][0]}: {target}: {why})")
                passed += 1
            elif not must_fail and all(why is None for why in whys):
                print(f"ok: control: {what} passes ({document}:{seen[0][0]}: {target})")
                passed += 1
            else:
                verdict = "passed" if must_fail else f"failed ({next(w for w in whys if w)})"
                print(f"FAIL: control: {what}: {document}:{seen[0][0]}: {target} {verdict}")
                failed += 1
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"FAIL: control: the controls could not be set up ({error})")
        failed += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return passed, failed


def main(arguments):
    controls_passed = controls_failed = 0
    if arguments:
        files = [os.path.abspath(name) for name in arguments]
    else:
        controls_passed, controls_failed = run_controls()
        files = documents(ROOT)
        if files is None:
            print(f"FAIL: documents: git ls-files failed in {ROOT} (the documents are found through git)")
            return 1
    passed = failed = 0
    for path in files:
        shown = os.path.relpath(path, ROOT)
        if not os.path.isfile(path):
            print(f"FAIL: {shown}: no such document")
            failed += 1
            continue
        for number, target, why in check_document(path, ROOT):
            if why is None:
                print(f"ok: {shown}:{number}: {target}")
                passed += 1
            else:
                print(f"FAIL: {shown}:{number}: {target}: {why}")
                failed += 1
    line = f"LINKS: {passed} passed, {failed} failed ({len(files)} documents)"
    if not arguments:
        line += f"; controls: {controls_passed} passed, {controls_failed} failed"
    print(line)
    return 1 if failed or controls_failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
