#!/usr/bin/env python3
"""The documents' code examples, compiled, and the version they name (the `docs` part of Tests/run-all.sh; issue 48).

Needs ./build-sqlcipher.sh's dist/SQLCipherKit (the test command builds it first) and Vendor/build/pin.json.

1. Versions. Every `.package(url: "…/NAME", from: "X.Y.Z")` line for one of SQLCipherKit's packages (NAME
   SQLCipherKit, SQLCipherKit-openssl-inside, FluentSQLCipherDriver or SQLCipherKitObservability, `.git` or not) in every Markdown document
   git lists (tracked or new, as check-links.py finds them: the README, both DocC catalogues, the Examples'
   READMEs) and in the READMEs the build generated under dist/SQLCipherKit/swiftpm/ must name the version the
   build wrote (`sqlcipherKitVersion` in pin.json: Engine.sqlcipherKitVersion, the one line that defines it). A
   document that names another version fails: "1.0.0 in the docs, 0.1.0 in the packages" cannot come back.
2. Swift examples. The ```swift blocks of the documents in COMPILED are compiled by `swiftc` as the README's
   swiftc route does (`-I dist/Modules -I dist/include -L dist/lib -lSQLCipherKit`), into an executable:
   - an article (`program`): its blocks in order are one program, as a reader pastes them one after another
     into a main.swift (Swift 6.3.1 crashed on a block that compiled alone and not after the others: only the
     whole shows it);
   - the README, the systemd example's README and four reference articles (`blocks`): each block is a program of its own (their sections are
     routes or settings, not steps), after the set-up an HTML comment `<!-- example setup: … -->` right before
     it gives (where `db`, `path`, `key` come from; shown by neither GitHub nor DocC, like a snippet's hidden
     lines).
   `import Foundation` and `import SQLCipherKit` are put first, as every app has them (a block may also import
   Glibc or Dispatch, the toolchain's). A block that is a package
   manifest's fragment (`.package(`, `.product(`, `.binaryTarget(`, `.executableTarget(`, `dependencies:`) is not
   Swift to compile on its own: its versions are checked above, and the test that follows the route builds it
   (ReleasePackageTests, Tests/Examples). A block that imports a module other than SQLCipherKit, Foundation or
   Glibc (GRDB, FluentSQLCipherDriver, Vapor…) is compiled by the part that builds that module, or not at all:
   each is listed, never silently skipped ("skipped: FILE:LINE: needs MODULE"). The driver catalogue's blocks are
   compiled by the apps part, on a package `--driver-package OUT` writes (below).
3. Controls, every run, before the documents: the first compiled article with one method name misspelled must
   fail to compile; a synthetic document naming another version must fail the version check; an unmodified
   article must compile (so a failure of the first is the misspelling's). A control that shows nothing fails
   the run.

Prints "ok: …"/"FAIL: …" lines (one per document checked, per compiled program and per control) and "skipped: …"
lines, then "EXAMPLES: N passed, N failed, N skipped"; exits 1 when anything failed. Standard library only.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DIST = os.path.join(ROOT, "dist", "SQLCipherKit")
PIN = os.path.join(ROOT, "Vendor", "build", "pin.json")
CATALOGUE = "Sources/SQLCipherKit/Documentation.docc"
# The documents whose Swift examples are compiled, and how: every article of the SQLCipherKit catalogue is one
# program, but for the reference articles below and the README, whose blocks are programs of their own (each
# shows one setting or route, with its set-up in an `example setup` comment where it needs one).
COMPILED_MODES = {"README.md": "blocks", f"{CATALOGUE}/Durability.md": "blocks",
                  f"{CATALOGUE}/MigratingAndExporting.md": "blocks", f"{CATALOGUE}/Performance.md": "blocks",
                  f"{CATALOGUE}/PlaintextHeader.md": "blocks", "Examples/systemd/README.md": "blocks"}
OUR_PACKAGES = ("SQLCipherKit", "SQLCipherKit-openssl-inside", "FluentSQLCipherDriver", "SQLCipherKitObservability")
# The documents whose dependency lines a newcomer pastes: each must name at least one (a check that finds none there
# would pass without checking anything), as must every README the build generates (four: both release packages, the
# driver's and the observability bridge's).
MUST_NAME = ("README.md", "Sources/SQLCipherKit/Documentation.docc/LinkingSQLCipherKit.md",
             "Drivers/FluentSQLCipherDriver/Sources/FluentSQLCipherDriver/FluentSQLCipherDriver.docc/"
             "MovingFromFluentSQLiteDriver.md", "Sources/SQLCipherKit/Documentation.docc/Observability.md")
GENERATED_READMES = 4
# Any line that names one of our packages in a `.package(url:` call (a `path:` one has no version): what
# PACKAGE_LINE cannot read (`exact:`, a range, `from:` on the next line) fails rather than going unchecked.
ANY_PACKAGE_CALL = re.compile(r'\.package\(\s*url:.*?"[^"]*/(' + "|".join(re.escape(name) for name in OUR_PACKAGES)
                              + r')(\.git)?/?"', re.IGNORECASE)
PACKAGE_LINE = re.compile(r'\.package\(\s*url:\s*"([^"]*)"\s*,\s*from:\s*"([^"]*)"\s*\)')
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([A-Za-z0-9_+-]*)")
MANIFEST = re.compile(r"^\s*(\.package\(|\.product\(|\.binaryTarget\(|\.executableTarget\(|\.target\(|dependencies:|"
                      r"targets:|// Package\.swift)", re.MULTILINE)
IMPORT = re.compile(r"^\s*import\s+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)
# The modules the swiftc route has: SQLCipherKit (dist/) and the toolchain's own.
AVAILABLE_MODULES = {"SQLCipherKit", "Foundation", "Glibc", "Dispatch"}

results = {"ok": 0, "FAIL": 0, "skipped": 0}


def report(kind, text):
    results[kind] += 1
    print(f"{kind}: {text}", flush=True)


def documents():
    """The Markdown documents git lists (tracked or new, not ignored), relative to ROOT."""
    listed = subprocess.run(["git", "-C", ROOT, "ls-files", "--cached", "--others", "--exclude-standard", "--",
                             "*.md"], capture_output=True, text=True, check=True).stdout.split("\n")
    return sorted(path for path in listed if path and os.path.isfile(os.path.join(ROOT, path)))


def generated_readmes():
    """The READMEs the build wrote into the packages of dist/ (their dependency lines are pasted by users)."""
    folder = os.path.join(DIST, "swiftpm")
    found = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        readme = os.path.join(folder, name, "README.md")
        if os.path.isfile(readme):
            found.append(readme)
    return found


def package_name(url):
    last = url.rstrip("/").rsplit("/", 1)[-1]
    return last[:-4] if last.endswith(".git") else last


def check_versions(path, text, version, label=None, quiet=False):
    """One line for a document naming our packages: ok when every such line names `version` (no line when
    `quiet`, for the control); None when it names none of them."""
    label = label or os.path.relpath(path, ROOT)
    named, wrong = 0, []
    for number, line in enumerate(text.split("\n"), 1):
        parsed = [(url, given) for url, given in PACKAGE_LINE.findall(line) if package_name(url) in OUR_PACKAGES]
        if not parsed and ANY_PACKAGE_CALL.search(line):
            wrong.append(f"line {number}: a .package line on our package this check cannot read "
                         f"(one line, url: and from: only): {line.strip()[:120]}")
            continue
        for url, given in parsed:
            named += 1
            if given != version:
                wrong.append(f"line {number}: {package_name(url)} from \"{given}\"")
    if not named and not wrong:
        if label in MUST_NAME or (path != "(planted)" and os.path.basename(path) == "README.md"
                                  and os.path.join(DIST, "swiftpm") in os.path.abspath(path)):
            report("FAIL", f"version: {label}: names no dependency line on our packages, where a newcomer "
                           "copies one (the check would pass without checking)")
            return False
        return None
    if quiet:
        return not wrong
    if wrong:
        report("FAIL", f"version: {label}: {'; '.join(wrong)}, not the built {version} "
                       f"(Engine.sqlcipherKitVersion): write {version}")
        return False
    report("ok", f"version: {label}: {named} dependency line{'s' if named > 1 else ''} on {version}")
    return True


SETUP_OPEN, SETUP_CLOSE = "<!-- example setup:", "-->"


def swift_blocks(text):
    """(first line number, set-up, code) of each ```swift block. The set-up is the code of an HTML comment
    `<!-- example setup: … -->` right before the block (blank lines between allowed): lines a reference article
    leaves out of view (where `db`, `path` and `key` come from), as a snippet's `// snippet.hide` lines are;
    GitHub and DocC show nothing of it."""
    blocks, inside, fence, start, lines, language = [], False, "", 0, [], ""
    setup, pending, collecting = None, None, None
    for number, line in enumerate(text.split("\n"), 1):
        if collecting is not None:
            if SETUP_CLOSE in line:
                collecting.append(line.split(SETUP_CLOSE, 1)[0])
                pending, collecting = "\n".join(collecting), None
            else:
                collecting.append(line)
            continue
        match = FENCE.match(line)
        if not inside and line.strip().startswith(SETUP_OPEN):
            rest = line.strip()[len(SETUP_OPEN):]
            if SETUP_CLOSE in rest:
                pending = rest.split(SETUP_CLOSE, 1)[0]
            else:
                collecting = [rest]
            continue
        if not inside and match:
            inside, fence, start, lines = True, match.group(1), number, []
            language, setup, pending = match.group(2).lower(), pending, None
            continue
        if inside and line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
            inside = False
            if language == "swift":
                blocks.append((start, setup, "\n".join(lines)))
            continue
        if inside:
            lines.append(line)
        elif line.strip():
            pending = None
    return blocks


def compile_program(source, folder, name):
    """Compiles `source` into an executable in `folder`; returns (ok, the compiler's last lines)."""
    main = os.path.join(folder, name + ".swift")
    with open(main, "w", encoding="utf-8") as handle:
        handle.write(source)
    command = ["swiftc", main, "-I", os.path.join(DIST, "Modules"), "-I", os.path.join(DIST, "include"),
               "-L", os.path.join(DIST, "lib"), "-lSQLCipherKit", "-o", os.path.join(folder, name),
               "-module-cache-path", os.path.join(folder, "module-cache")]
    run = subprocess.run(command, capture_output=True, text=True, cwd=folder)
    output = (run.stdout + run.stderr).strip()
    errors = [line for line in output.split("\n") if "error:" in line or "crash" in line.lower()]
    return run.returncode == 0, "; ".join(errors[:3]) or output[-400:]


PRELUDE = "import Foundation\nimport SQLCipherKit\n"


def shown(setup, code):
    """A block's code after the set-up its `example setup` comment gives (none: the code alone)."""
    return f"// (its set-up, not shown)\n{setup.strip()}\n// (as printed)\n{code}" if setup else code


def left_out(code, modules):
    """Why a block is not compiled: "manifest" for a package manifest's fragment, or the modules it imports beyond
    `modules` (sorted); None when it compiles."""
    if MANIFEST.search(code):
        return "manifest"
    return sorted(set(IMPORT.findall(code)) - modules) or None


def programs(path, text):
    """The programs a document's examples make: (label, source) each; and the skipped blocks' lines."""
    relative = os.path.relpath(path, ROOT)
    mode = COMPILED_MODES.get(relative, "program")
    made, skipped, parts = [], [], []
    for start, setup, code in swift_blocks(text):
        where = f"{relative}:{start}"
        code = shown(setup, code)
        reason = left_out(code, AVAILABLE_MODULES)
        if reason == "manifest":
            skipped.append(f"{where}: a package manifest's fragment (its versions checked; its route's test builds it)")
            continue
        if reason:
            skipped.append(f"{where}: needs {', '.join(reason)} (not in dist/SQLCipherKit's swiftc route)")
            continue
        if mode == "blocks":
            made.append((where, PRELUDE + f"// {where}\n" + code + "\n"))
        else:
            parts.append(f"// {where}\n{code}\n")
    if parts:
        made.append((f"{relative} ({len(parts)} block{'s' if len(parts) > 1 else ''}, in order)",
                     PRELUDE + "\n".join(parts)))
    return made, skipped


MISSPELLABLE = re.compile(r"\.(execute|fetchAll|scalar|write|read)\(")


def controls(version, work, articles):
    """The planted failures; returns whether every control showed what it must."""
    good = True
    # A version other than the built one, in a synthetic document.
    other = "0.0.1" if version != "0.0.1" else "0.0.2"
    planted = f'```swift\ndependencies: [.package(url: "https://your.host/SQLCipherKit.git", from: "{other}")]\n```\n'
    outcome = check_versions("(planted)", planted, version, label="control document", quiet=True)
    if outcome is False:
        report("ok", f"control: a document naming SQLCipherKit {other} fails the version check")
    else:
        report("FAIL", f"control: a document naming SQLCipherKit {other} was not caught (outcome {outcome})")
        good = False
    # A misspelled method in the first article that compiles; the article unchanged must compile.
    for path in articles:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        made, _ = programs(path, text)
        if not made or not MISSPELLABLE.search(made[0][1]):
            continue
        label, source = made[0]
        intact, why = compile_program(source, work, "control_intact")
        broken = MISSPELLABLE.sub(lambda m: "." + m.group(1) + "Misspelled(", source, count=1)
        misspelled, misspelled_why = compile_program(broken, work, "control_misspelled")
        if intact and not misspelled and "Misspelled" in misspelled_why:
            report("ok", f"control: {label}: compiles as printed, and fails with one method misspelled "
                         f"({misspelled_why[:160]})")
        else:
            report("FAIL", f"control: {label}: as printed compiled={intact} ({why[:200]}); misspelled "
                           f"compiled={misspelled} ({misspelled_why[:200]})")
            good = False
        return good
    report("FAIL", "control: no compiled article calls execute, fetchAll, scalar, write or read to misspell")
    return False


DRIVER_CATALOGUE = "Drivers/FluentSQLCipherDriver/Sources/FluentSQLCipherDriver/FluentSQLCipherDriver.docc"
DRIVER_PRELUDE = "import Foundation\nimport SQLCipherKit\nimport FluentSQLCipherDriver\nimport Vapor\n"
# Fluent (vapor/fluent: app.databases, req.db) is not in the prelude: a block that needs it must import it, as an
# app's file must.
DRIVER_MODULES = AVAILABLE_MODULES | {"FluentSQLCipherDriver", "Vapor", "Fluent", "FluentKit", "SQLKit",
                                      "SQLCipherSQLKit"}
DRIVER_MISSPELLABLE = re.compile(r"\.(use|execute|asyncShutdown)\(")


def driver_package(out):
    """--driver-package OUT: the driver catalogue's Swift examples as a package for the apps part
    (Tests/Examples/run-app-examples.sh), which builds it beside VaporTodo on the release repositories: one
    executable target per article (its blocks in order, after their `example setup` comments, as one program),
    and `MisspelledControl`, the first article with one method misspelled, which must fail to build. Writes
    OUT/targets (the article targets, one a line) and prints the blocks it leaves out ("skipped: …")."""
    with open(os.path.join(ROOT, "Examples", "VaporTodo", "Package.swift"), encoding="utf-8") as handle:
        todo = handle.read()
    shared = [re.search(r'\.package\(url: "https://github\.com/vapor/' + name + r'", from: "[^"]+"\)', todo)
              for name in ("vapor", "fluent")]
    if not all(shared):
        sys.exit("check-examples.py: Examples/VaporTodo/Package.swift names no vapor or fluent dependency to share")
    targets, sources = [], {}
    for name in sorted(os.listdir(os.path.join(ROOT, DRIVER_CATALOGUE))):
        if not name.endswith(".md"):
            continue
        relative = f"{DRIVER_CATALOGUE}/{name}"
        with open(os.path.join(ROOT, relative), encoding="utf-8") as handle:
            blocks = swift_blocks(handle.read())
        parts = []
        for start, setup, code in blocks:
            where = f"{relative}:{start}"
            code = shown(setup, code)
            reason = left_out(code, DRIVER_MODULES)
            if reason == "manifest":
                print(f"skipped: {where}: a package manifest's fragment (the apps part's manifests use its lines)")
                continue
            if reason:
                print(f"skipped: {where}: needs {', '.join(reason)}")
                continue
            parts.append(f"// {where}\n{code}\n")
        if parts:
            # "Article" after its name: a target may not share a name with one of the graph's (FluentSQLCipherDriver).
            target = name[:-3].replace("-", "") + "Article"
            targets.append(target)
            sources[target] = DRIVER_PRELUDE + "\n".join(parts)
    if not targets:
        sys.exit("check-examples.py: the driver catalogue has no Swift example to compile")
    first = sources[targets[0]]
    if not DRIVER_MISSPELLABLE.search(first):
        sys.exit(f"check-examples.py: {targets[0]} calls none of use, execute, asyncShutdown to misspell")
    sources["MisspelledControl"] = DRIVER_MISSPELLABLE.sub(lambda m: "." + m.group(1) + "Misspelled(", first, count=1)
    products = ('[.product(name: "SQLCipherKit", package: "SQLCipherKit"), '
                '.product(name: "FluentSQLCipherDriver", package: "FluentSQLCipherDriver"), '
                '.product(name: "Vapor", package: "vapor"), .product(name: "Fluent", package: "fluent")]')
    manifest = "\n".join([
        "// swift-tools-version: 6.1",
        "import PackageDescription",
        "",
        "// Generated by Tests/Docs/check-examples.py --driver-package: the driver catalogue's examples.",
        "let package = Package(",
        '    name: "DriverArticles",',
        "    platforms: [.macOS(.v13)],",
        "    dependencies: [",
        '        .package(path: "SQLCipherKit"), // SQLCIPHERKIT_DEPENDENCY',
        '        .package(path: "FluentSQLCipherDriver"), // DRIVER_DEPENDENCY',
        *[f"        {match.group(0)}," for match in shared],
        "    ],",
        "    targets: [",
        *[f'        .executableTarget(name: "{target}", dependencies: {products}),' for target in sources],
        "    ],",
        "    swiftLanguageModes: [.v6]",
        ")",
        "",
    ])
    os.makedirs(out)
    with open(os.path.join(out, "Package.swift"), "w", encoding="utf-8") as handle:
        handle.write(manifest)
    for target, source in sources.items():
        os.makedirs(os.path.join(out, "Sources", target))
        # An article that shows an @main entry point cannot be a main.swift (top-level code).
        file = "Entrypoint.swift" if re.search(r"^\s*@main\b", source, re.MULTILINE) else "main.swift"
        with open(os.path.join(out, "Sources", target, file), "w", encoding="utf-8") as handle:
            handle.write(source)
    with open(os.path.join(out, "targets"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(targets) + "\n")
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--driver-package":
        return driver_package(sys.argv[2])
    try:
        with open(PIN, encoding="utf-8") as handle:
            version = json.load(handle)["sqlcipherKitVersion"]
    except (OSError, KeyError, ValueError) as error:
        print(f"FAIL: {PIN} names no sqlcipherKitVersion ({error}): run ./build-sqlcipher.sh first")
        return 1
    if not os.path.isfile(os.path.join(DIST, "lib", "libSQLCipherKit.a")):
        print(f"FAIL: no {DIST}/lib/libSQLCipherKit.a: run ./build-sqlcipher.sh first")
        return 1
    paths = [os.path.join(ROOT, path) for path in documents()]
    articles = [path for path in paths if os.path.relpath(path, ROOT).startswith(CATALOGUE + "/")]
    compiled = articles + [os.path.join(ROOT, name) for name in COMPILED_MODES
                           if os.path.join(ROOT, name) not in articles]
    work = tempfile.mkdtemp(prefix="check-examples.")
    try:
        controls(version, work, articles)
        generated = generated_readmes()
        if len(generated) < GENERATED_READMES:
            report("FAIL", f"version: {len(generated)} READMEs under {DIST}/swiftpm, not {GENERATED_READMES}: "
                           "the generated packages were not checked (run ./build-sqlcipher.sh)")
        for path in paths + generated:
            with open(path, encoding="utf-8") as handle:
                check_versions(path, handle.read(), version)
        # The Swift blocks of every other document: not compiled here, each listed (the driver's catalogue needs
        # Vapor and the driver, which the driver and apps parts build; not compiled yet).
        for path in paths:
            if path in compiled:
                continue
            with open(path, encoding="utf-8") as handle:
                for start, _, _ in swift_blocks(handle.read()):
                    relative = os.path.relpath(path, ROOT)
                    why = ("needs the driver and Vapor: compiled by the apps part (--driver-package)"
                           if relative.startswith("Drivers/") else "not a user's document: not compiled")
                    report("skipped", f"{relative}:{start}: {why}")
        count = 0
        for path in compiled:
            with open(path, encoding="utf-8") as handle:
                made, skipped = programs(path, handle.read())
            for line in skipped:
                report("skipped", line)
            for label, source in made:
                count += 1
                ok, why = compile_program(source, work, f"example{count}")
                if ok:
                    report("ok", f"compiles: {label}")
                else:
                    report("FAIL", f"compiles: {label}: {why}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"EXAMPLES: {results['ok']} passed, {results['FAIL']} failed, {results['skipped']} skipped")
    return 1 if results["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
