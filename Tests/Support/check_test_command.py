#!/usr/bin/env python3
# The test command's own rules (issue 45, item 3; MIT, The SQLCipherKit authors): nothing counted that did not run,
# and a run that starts from the project's defaults unless it says otherwise.
#
#   A. What a part counts (Tests/run-all.sh --self-test): its counting run on recorded and synthetic logs. Swift
#      Testing's "Test run with N tests" counts skipped tests too, so a part counts the tests that passed; a skipped
#      test that is not an expected, named skip (EXPECTED_SKIPS in run-all.sh) fails its part; a suite skipped whole
#      fails; the one expected skip (the interop suite, when asked for with --narrow and
#      SQLCIPHERKIT_INTEROP_OFFLINE=1) makes the summary say NARROWED.
#   B. The environment. Every variable the sources read (getenv, ProcessInfo's or a Package's environment,
#      Environment.get, os.environ and os.getenv, Tcl's ::env, awk's ENVIRON, and in shell scripts ${NAME…} and
#      $NAME where no script assigns NAME; through the small wrappers and string constants the sources use) is
#      found across Sources, Tests, Drivers, Examples, Benchmarks, BuildSupport, .ci and the top-level scripts.
#      Each must be either the system's own (EXEMPT below, each with its reason) or handled by Tests/run-all.sh:
#      refused when set (the project's own variables), or cleared (a tool's or the system's that the project reads
#      and that changes what a part does or decides), unless --narrow keeps it and the summary says so. That is
#      checked end to end: every variable found is planted in the environment of `Tests/run-all.sh --dry-run`,
#      which must refuse naming each project variable, and must clear every other one (the "environment:" line
#      its dry run prints is what the parts would get).
#   C. NARROWED: `POWERLOSS_CUTS=5 Tests/run-all.sh` refuses; with --narrow, and with --narrow or --only alone,
#      the summary line begins "NARROWED (…)"; the plain command's does not (the control that the check can tell).
#   D. Pipes that end early. Under pipefail, `PRODUCER | grep -q PATTERN` ends grep at its first match; the
#      producer, still writing, dies of SIGPIPE, and the pipeline fails although the pattern was there: a check that
#      saw what it looks for reports it missing, or a detector of warnings sees none (CI, stop 52: a Fluent group
#      that passed was reported missing). Such a grep reads to the end instead (`| grep PATTERN >/dev/null`). The
#      rule holds in every shell script, as a library (harness.sh, checks.sh) runs under its caller's pipefail.
# One "ok: NAME" or "FAIL: NAME: WHY" line per check, as check_blocking_waits.py prints; the scanner's own controls
# run first (planted sources: each planted read must be found, and reported as missing from run-all.sh's sets; a
# variable the script assigns itself, and PATH, must not be).
import collections
import os
import re
import subprocess
import sys
import tempfile

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RUN_ALL = os.path.join(REPOSITORY, "Tests", "run-all.sh")
SCANNED = ("Sources/", "Tests/", "Drivers/", "Examples/", "Benchmarks/", "BuildSupport/", ".ci/")
TOP_LEVEL_SCRIPTS = ("build-sqlcipher.sh", "verify-symbols.sh", "Package.swift")

# The system's own variables, which the project reads but does not define: kept by the test command, and never a
# reason to refuse a run. Each with why it is not the project's to clear.
EXEMPT = {
    "PATH": "where the tools are found; the build and tests need the machine's",
    "HOME": "the user's home (the CLI's default history file, SwiftPM's caches); the machine's",
    "TMPDIR": "the machine's temporary folder; every script and child takes its temporary files there",
    "CI": "the CI runner's flag (any true value); it only makes the interop policy stricter, never narrower",
    "CC": "the machine's C compiler; the build's stamp records its version, so a change rebuilds, and the "
          "checks of the artifact (symbols, downstream links, the self-check) judge what it built",
    "USER": "the login name; the machine's",
    # bash's own, set by the shell in every script.
    "BASH_SOURCE": "bash's own", "PIPESTATUS": "bash's own", "SECONDS": "bash's own", "RANDOM": "bash's own",
    "PWD": "bash's own", "OLDPWD": "bash's own", "LINENO": "bash's own", "FUNCNAME": "bash's own",
    "BASH_REMATCH": "bash's own", "IFS": "bash's own", "OPTARG": "bash's own", "OPTIND": "bash's own",
    "EUID": "bash's own", "UID": "bash's own", "BASHPID": "bash's own", "PPID": "bash's own",
}

NAME = r"[A-Za-z_][A-Za-z0-9_]*"
ENV_NAME = r"[A-Z][A-Z0-9_]*"


# ------------------------------------------------------------------------------------------------ the scan ---

def tracked_files(root):
    """The files to scan: tracked ones under SCANNED and the top-level scripts (git ls-files; a walk without git)."""
    try:
        listed = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True, check=True).stdout
        files = listed.split("\n")
    except (OSError, subprocess.CalledProcessError):
        files = []
        for folder, names, filenames in os.walk(root):
            names[:] = [n for n in names if not n.startswith(".build") and n not in (".git", "build", "cache")]
            files += [os.path.relpath(os.path.join(folder, f), root) for f in filenames]
    # This script's planted sources are data, not reads.
    return sorted(f for f in files if f and f != "Tests/Support/check_test_command.py"
                  and (f.startswith(SCANNED) or f in TOP_LEVEL_SCRIPTS or (f.endswith(".sh") and "/" not in f)))


def is_shell(path, text):
    return path.endswith(".sh") or path.endswith(".pin") or text.startswith("#!/usr/bin/env bash") \
        or text.startswith("#!/bin/bash") or text.startswith("#!/bin/sh")


SOURCE_READS = [
    re.compile(r'\bgetenv\(\s*"(' + ENV_NAME + r')"'),
    re.compile(r'(?<!Self\.)(?<!self\.)\benvironment\[\s*"(' + ENV_NAME + r')"\s*\](?!\s*=[^=])'),
    re.compile(r'\bEnvironment\.get\(\s*"(' + ENV_NAME + r')"'),
    re.compile(r'\bos\.environ(?:\.get)?[\[(]\s*["\'](' + ENV_NAME + r')["\']'),
    re.compile(r'\bos\.getenv\(\s*["\'](' + ENV_NAME + r')["\']'),
    re.compile(r'["\'](' + ENV_NAME + r')["\']\s+(?:not\s+)?in\s+os\.environ'),
    re.compile(r'::env\((' + ENV_NAME + r')\)'),
    re.compile(r'\bENVIRON\[\s*"(' + ENV_NAME + r')"\s*\]'),
]
INDIRECT_READS = [re.compile(r'\bgetenv\(\s*(' + NAME + r')\s*\)'),
                  re.compile(r'(?<!Self\.)(?<!self\.)\benvironment\[\s*(' + NAME + r')\s*\](?!\s*=[^=])'),
                  re.compile(r'\bos\.environ(?:\.get)?[\[(]\s*(' + NAME + r')\s*[\]),]'),
                  re.compile(r'\bos\.getenv\(\s*(' + NAME + r')\s*[),]')]
# A string constant that names a variable: Swift `static let offlineSwitch = "…"`, Python `KEY_VARIABLE = "…"`.
STRING_CONSTANT = re.compile(r'(?:\b(?:let|var)\s+|^)(' + NAME + r')\s*(?::\s*String)?\s*=\s*"(' + ENV_NAME + r')"',
                             re.M)
# A function whose first parameter names the variable it reads (Swift `func value(_ name: String)`, C
# `static int env_on(const char *name)`), found by its body reading getenv(PARAMETER) or environment[PARAMETER].
WRAPPER = re.compile(r'\bfunc\s+(' + NAME + r')\s*\(\s*_\s+(' + NAME + r')\s*:\s*String\s*\)'
                     r'|\b(' + NAME + r')\s*\(\s*const\s+char\s*\*\s*(' + NAME + r')\s*\)\s*\{')


def scan_sources(texts):
    """{name: [FILE:LINE…]} for every variable the Swift, C, Python, Tcl and awk sources in texts read."""
    found = collections.defaultdict(list)
    constants, wrappers = collections.defaultdict(set), set()
    for text in texts.values():
        for match in STRING_CONSTANT.finditer(text):
            constants[match.group(1)].add(match.group(2))
        for match in WRAPPER.finditer(text):
            function, parameter = (match.group(1), match.group(2)) if match.group(1) else (match.group(3),
                                                                                           match.group(4))
            body = text[match.end():match.end() + 400]
            if re.search(r'getenv\(\s*' + parameter + r'\s*\)|environment\[\s*' + parameter + r'\s*\]', body):
                wrappers.add(function)
    wrapper_call = re.compile(r'\b(?:' + "|".join(sorted(wrappers)) + r')\(\s*(?:"(' + ENV_NAME + r')"|(?:Self\.)?('
                              + NAME + r')\s*\))') if wrappers else None
    for path, text in texts.items():
        for number, line in enumerate(text.split("\n"), 1):
            where = f"{path}:{number}"
            for pattern in SOURCE_READS:
                for match in pattern.finditer(line):
                    found[match.group(1)].append(where)
            for pattern in INDIRECT_READS:
                for match in pattern.finditer(line):
                    for name in constants.get(match.group(1), ()):
                        found[name].append(where)
            if wrapper_call:
                for match in wrapper_call.finditer(line):
                    for name in [match.group(1)] if match.group(1) else constants.get(match.group(2), ()):
                        found[name].append(where)
    return found


HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")


def shell_code(text, for_assignments=False):
    """The script, line for line, with comments removed and single-quoted text blanked (it does not expand); a
    line continued with a backslash joined to the next (which is left empty); a here-document's body blanked when
    its delimiter is quoted (no expansion) or when for_assignments (text, not commands)."""
    out, heredoc, pending = [], None, None
    for line in text.split("\n"):
        if heredoc:
            delimiter, expands = heredoc
            if line.strip() == delimiter:
                heredoc = None
                out.append("")
            else:
                out.append(line if expands and not for_assignments else "")
            continue
        kept, index, in_double, outer = [], 0, False, []
        while index < len(line):
            character = line[index]
            if character == "\\" and index + 1 < len(line):
                kept.append(line[index:index + 2])
                index += 2
                continue
            if line.startswith("$(", index):
                # A command substitution quotes afresh, inside double quotes too.
                outer.append(in_double)
                in_double = False
                kept.append("$(")
                index += 2
                continue
            if character == ")" and outer and not in_double:
                in_double = outer.pop()
            elif character == '"':
                in_double = not in_double
            elif character == "'" and not in_double:
                end = line.find("'", index + 1)
                end = len(line) if end < 0 else end
                kept.append("''")
                index = end + 1
                continue
            elif character == "#" and not in_double and (index == 0 or line[index - 1] in " \t;(|&"):
                break
            kept.append(character)
            index += 1
        code = "".join(kept)
        match = HEREDOC.search(code)
        if match:
            heredoc = (match.group(2), not match.group(1))
        if pending is not None:
            out[pending] += " " + code.rstrip("\\")
            out.append("")
            if not code.rstrip().endswith("\\"):
                pending = None
            continue
        out.append(code.rstrip("\\") if code.rstrip().endswith("\\") else code)
        if code.rstrip().endswith("\\"):
            pending = len(out) - 1
    return out


ASSIGNMENT_WORD = re.compile(r'(' + NAME + r')(?:\[[^\]]*\])?\+?=')
DECLARES = re.compile(r'^(?:local|export|declare|readonly|typeset)$')


def skip_word(code, index):
    """The index just after the shell word starting at code[index] (quotes, $(…), ${…}, (…) arrays)."""
    depth, quote = 0, None
    while index < len(code):
        character = code[index]
        if quote:
            if character == "\\":
                index += 2
                continue
            if character == quote:
                quote = None
            elif quote == '"' and code.startswith("$(", index):
                depth += 1
                index += 2
                continue
            elif quote == '"' and character == ")" and depth:
                depth -= 1
            index += 1
            continue
        if character in "\"'":
            quote = character
        elif character == "\\":
            index += 2
            continue
        elif code.startswith("$(", index) or code.startswith("${", index):
            depth += 1
            index += 2
            continue
        elif character == "(":
            depth += 1
        elif character in ")}" and depth:
            depth -= 1
        elif depth == 0 and (character in " \t;&|<>" or character in ")}"):
            return index
        index += 1
    return index


def shell_assignments(lines):
    """The names the script assigns in its own shell: NAME=… at a command's start (not the NAME=value prefix of a
    command, which sets it for that command only), after local/export/declare/readonly, read, for, mapfile,
    printf -v and exec {NAME}>."""
    assigned = set()
    code = "\n".join(lines)
    for match in re.finditer(r'\bfor\s+(' + NAME + r')\s+in\b', code):
        assigned.add(match.group(1))
    for match in re.finditer(r'\bexec\s+\{(' + NAME + r')\}', code):
        assigned.add(match.group(1))
    for match in re.finditer(r'\bprintf\s+-v\s+(' + NAME + r')', code):
        assigned.add(match.group(1))
    for match in re.finditer(r'\b(?:mapfile|readarray)(?:\s+-[a-zA-Z]+(?:\s+\S+)?)*?\s+(' + NAME + r')\s*(?:<|$)',
                             code, re.M):
        assigned.add(match.group(1))
    for match in re.finditer(r'\bread\b((?:\s+-[a-zA-Z]+(?:\s+(?!-)\S+)?)*)((?:\s+' + NAME + r')+)', code):
        assigned.update(match.group(2).split())
    for line in lines:
        index = 0
        at_start = True
        pending = []
        declaring = False
        while index < len(line):
            while index < len(line) and line[index] in " \t":
                index += 1
            if index >= len(line):
                break
            if line[index] in ";&|(){}" or line.startswith(("then", "do", "else", "elif", "if", "while", "until",
                                                            "!"), index) and at_start:
                # A command separator or a keyword that starts a command.
                if line[index] in ";&|(){}":
                    assigned.update(pending)
                    pending, at_start, declaring = [], True, False
                    index += 1
                    continue
                word_end = skip_word(line, index)
                if line[index:word_end] in ("then", "do", "else", "elif", "if", "while", "until", "!"):
                    index = word_end
                    continue
            end = skip_word(line, index)
            if end == index:
                index += 1
                continue
            word = line[index:end]
            match = ASSIGNMENT_WORD.match(word)
            if (at_start or declaring) and match:
                (assigned.add if declaring else pending.append)(match.group(1))
            elif declaring and re.fullmatch(NAME, word):
                assigned.add(word)
            elif at_start and DECLARES.match(word):
                declaring = True
                at_start = False
            elif declaring and word.startswith("-"):
                pass
            else:
                # A command word: the NAME=value words before it were its prefix, for it alone.
                pending, at_start = [], False
            index = end
        assigned.update(pending)
    return assigned


EXPANSION = re.compile(r'\$\{[#!]?(' + ENV_NAME + r')(:?[-=+?])?|\$(' + ENV_NAME + r')\b')


SOURCING = re.compile(r'(?:^|[;&|]\s*|\s)(?:source|\.)\s+"?([^"\s;]+)')


def components(scripts):
    """The scripts grouped by sourcing (a script and those it sources or that source it share their variables):
    {path: frozenset of paths}."""
    by_name = collections.defaultdict(set)
    for path in scripts:
        by_name[os.path.basename(path)].add(path)
    parent = {path: path for path in scripts}

    def root(path):
        while parent[path] != path:
            parent[path] = parent[parent[path]]
            path = parent[path]
        return path

    for path, text in scripts.items():
        for line in shell_code(text, for_assignments=True):
            for match in SOURCING.finditer(line):
                for other in by_name.get(os.path.basename(match.group(1)), ()):
                    parent[root(other)] = root(path)
    groups = collections.defaultdict(set)
    for path in scripts:
        groups[root(path)].add(path)
    return {path: frozenset(groups[root(path)]) for path in scripts}


def scan_shell(scripts):
    """{name: [FILE:LINE…]} for every variable the shell scripts read from their environment: an expansion of a
    name that no script of its group (a script and those it sources or that source it) assigns, and a default for
    one (NAME=${NAME:-…}, ${NAME:=…}) even where it is assigned."""
    found = collections.defaultdict(list)
    # A line NAME=${NAME:-…} gives an input its default: it does not make NAME the script's own.
    self_default = re.compile(r'(?:^|\s)(' + NAME + r')=\$\{\1:?[-=]')
    assigned = {}
    for path, text in scripts.items():
        lines = [line if not self_default.search(line) else self_default.sub(" ", line)
                 for line in shell_code(text, for_assignments=True)]
        assigned[path] = shell_assignments(lines)
    groups = components(scripts)
    for path, text in scripts.items():
        own = set().union(*(assigned[other] for other in groups[path]))
        for number, line in enumerate(shell_code(text), 1):
            for match in EXPANSION.finditer(line):
                name, operator = match.group(1) or match.group(3), match.group(2)
                if name not in own or operator in (":=", "="):
                    found[name].append(f"{path}:{number}")
    return found


def read_texts(root, files=None):
    """{path: text} of the files (default: tracked_files) under root that read as UTF-8 text."""
    texts = {}
    for path in tracked_files(root) if files is None else files:
        try:
            with open(os.path.join(root, path), encoding="utf-8") as source:
                texts[path] = source.read()
        except (UnicodeDecodeError, OSError):
            continue
    return texts


def scan(root, files=None):
    texts, scripts = {}, {}
    for path, text in read_texts(root, files).items():
        if is_shell(path, text) or path == ".ci/run":
            scripts[path] = text
        elif re.search(r'\.(swift|c|h|py|tcl|awk|lua)$', path):
            texts[path] = text
    # The pin is sourced by the scripts: its assignments are theirs.
    pin = os.path.join(root, "Vendor", "sqlcipher.pin")
    if os.path.isfile(pin):
        scripts["Vendor/sqlcipher.pin"] = open(pin, encoding="utf-8").read()
    found = scan_sources(texts)
    for name, places in scan_shell(scripts).items():
        found[name] += places
    return found


# -------------------------------------------------------------------------------------- the test command ---

def project_free_environment():
    """This process's environment without anything the test command would refuse or clear: the base for the
    nested runs (the outer run-all.sh has set SQLCIPHERKIT_REQUIRE_INTEROP, for one)."""
    probe = subprocess.run([RUN_ALL, "--list-variables"], capture_output=True, text=True)
    prefixes, names = [], set()
    for line in probe.stdout.split("\n"):
        if line.startswith("prefixes: "):
            prefixes = line[len("prefixes: "):].split()
        elif line.startswith(("refused: ", "cleared: ")):
            names |= set(line.split(": ", 1)[1].split())
    return {k: v for k, v in os.environ.items() if k not in names and not k.startswith(tuple(prefixes))}


def run_all(arguments, planted, base):
    environment = dict(base)
    environment.update(planted)
    result = subprocess.run([RUN_ALL] + arguments, capture_output=True, text=True, env=environment, timeout=120)
    summary = [line for line in result.stdout.split("\n") if re.match(r"^(NARROWED \(.*\): )?SUMMARY: ", line)]
    kept = next((line[len("environment: "):].split() for line in result.stdout.split("\n")
                 if line.startswith("environment: ")), None)
    return result.returncode, result.stdout + result.stderr, (summary[-1] if summary else ""), kept


def check_handled(found, base, results):
    """Every variable found is exempt, or refused or cleared by run-all.sh: planted all at once, then the ones
    not refused on their own."""
    candidates = sorted(name for name in found if name not in EXEMPT)
    planted = {name: f"planted-by-check-{name.lower()}" for name in candidates}
    status, output, _, _ = run_all(["--dry-run"], planted, base)
    refusal = re.search(r"run-all\.sh: refused: (.*)", output)
    refused = set(refusal.group(1).replace(",", " ").split()) if refusal else set()
    if (status, bool(refusal)) not in ((2, True), (0, False)):
        results.append(f"FAIL: environment: run-all.sh --dry-run with {len(planted)} planted variables exited "
                       f"{status}: {output[-400:]}")
        return [name for name in candidates]
    rest = {name: value for name, value in planted.items() if name not in refused}
    status, output, _, kept = run_all(["--dry-run"], rest, base)
    if status != 0 or kept is None:
        results.append(f"FAIL: environment: run-all.sh --dry-run with the {len(rest)} variables it does not refuse "
                       f"exited {status} without its environment: line: {output[-400:]}")
        return [name for name in candidates]
    missing = [name for name in candidates if name not in refused and name in kept]
    for name in missing:
        results.append(f"FAIL: environment: {name} (read at {', '.join(found[name][:3])}) is neither refused nor "
                       "cleared by Tests/run-all.sh (add it to PROJECT_VARIABLES or CLEARED_VARIABLES there), nor "
                       "exempt as the system's own (EXEMPT in Tests/Support/check_test_command.py)")
    cleared = [name for name in rest if name not in kept]
    if not missing:
        results.append(f"ok: environment: each of the {len(found)} variables the sources read is handled: "
                       f"{len(refused)} refused, {len(cleared)} cleared, "
                       f"{len([n for n in found if n in EXEMPT])} the system's own (exempt)")
    return missing


def check_narrowed(base, results):
    cases = [
        ("POWERLOSS_CUTS=5 Tests/run-all.sh refuses, naming it", ["--dry-run"], {"POWERLOSS_CUTS": "5"},
         lambda status, output, summary, kept: status == 2 and "POWERLOSS_CUTS" in output and not summary),
        ("POWERLOSS_CUTS=5 Tests/run-all.sh --narrow says NARROWED, naming it", ["--narrow", "--dry-run"],
         {"POWERLOSS_CUTS": "5"},
         lambda status, output, summary, kept: status == 0 and summary.startswith("NARROWED (")
         and "POWERLOSS_CUTS=5" in summary and "POWERLOSS_CUTS" in (kept or [])),
        ("--narrow alone says NARROWED", ["--narrow", "--dry-run"], {},
         lambda status, output, summary, kept: status == 0 and summary.startswith("NARROWED (")),
        ("--only docs says NARROWED", ["--only", "docs", "--dry-run"], {},
         lambda status, output, summary, kept: status == 0 and summary.startswith("NARROWED (only: docs")),
        ("SQLCIPHERKIT_INTEROP_OFFLINE=1 refuses without --narrow", ["--dry-run"],
         {"SQLCIPHERKIT_INTEROP_OFFLINE": "1"},
         lambda status, output, summary, kept: status == 2 and "SQLCIPHERKIT_INTEROP_OFFLINE" in output),
        ("a cleared variable (ASAN_OPTIONS) does not reach the parts, and the run is not narrowed", ["--dry-run"],
         {"ASAN_OPTIONS": "detect_leaks=0"},
         lambda status, output, summary, kept: status == 0 and summary.startswith("SUMMARY: ")
         and kept is not None and "ASAN_OPTIONS" not in kept and "SQLCIPHERKIT_REQUIRE_INTEROP" in kept),
        ("kept with --narrow, a cleared variable is named in NARROWED", ["--narrow", "--dry-run"],
         {"ASAN_OPTIONS": "detect_leaks=0"},
         lambda status, output, summary, kept: status == 0 and "ASAN_OPTIONS=detect_leaks=0" in summary
         and "ASAN_OPTIONS" in (kept or [])),
        ("control: the plain command's summary is not NARROWED", ["--dry-run"], {},
         lambda status, output, summary, kept: status == 0 and summary.startswith("SUMMARY: ")),
    ]
    for name, arguments, planted, passes in cases:
        status, output, summary, kept = run_all(arguments, planted, base)
        if passes(status, output, summary, kept):
            results.append(f"ok: narrowed: {name}")
        else:
            results.append(f"FAIL: narrowed: {name}: exit {status}, summary {summary!r}: {output[-300:]!r}")


def check_counting(results):
    """run-all.sh --self-test: its counting on recorded and synthetic logs (its own ok:/FAIL: lines)."""
    result = subprocess.run([RUN_ALL, "--self-test"], capture_output=True, text=True, timeout=120,
                            env=project_free_environment())
    lines = [line for line in result.stdout.split("\n") if line.startswith(("ok: ", "FAIL: "))]
    results += [("ok: counting: " + line[4:]) if line.startswith("ok: ") else ("FAIL: counting: " + line[6:])
                for line in lines]
    if result.returncode != 0 and not any(line.startswith("FAIL: ") for line in lines):
        results.append(f"FAIL: counting: run-all.sh --self-test exited {result.returncode}: {result.stderr[-300:]}")
    if len(lines) < 6:
        results.append(f"FAIL: counting: run-all.sh --self-test printed {len(lines)} checks, at least 6 expected")


# ------------------------------------------------------------------------------- D. pipes that end early ---

PIPEFAIL = re.compile(r'\bset\s+(?:-[A-Za-z]+\s+)*-[A-Za-z]*o\s+pipefail\b|\bset\s+-o\s+pipefail\b'
                      r'|\bset\s+-[A-Za-z]*\s+pipefail\b')
# A pipe (not ||) into grep, and grep's options up to its first operand.
PIPE_INTO_GREP = re.compile(r'(?<![|])\|(?![|])\s*grep((?:\s+-[-A-Za-z0-9=]*)*)')


def early_exits(texts):
    """[FILE:LINE …] of every `| grep -q` (or --quiet, --silent) in a shell script."""
    found = []
    for path, text in sorted(texts.items()):
        if not is_shell(path, text):
            continue
        for number, line in enumerate(shell_code(text), 1):
            for match in PIPE_INTO_GREP.finditer(line):
                options = match.group(1).split()
                if any(o in ("--quiet", "--silent") or (not o.startswith("--") and "q" in o[1:]) for o in options):
                    found.append(f"{path}:{number}")
    return found


def check_early_exits(results):
    texts = read_texts(REPOSITORY)
    scripts = [p for p, t in texts.items() if is_shell(p, t) and any(PIPEFAIL.search(l) for l in shell_code(t))]
    found = early_exits(texts)
    shells = sum(1 for p, t in texts.items() if is_shell(p, t))
    if len(scripts) < 10:
        results.append(f"FAIL: pipes: only {len(scripts)} scripts with pipefail found, at least 10 expected: the scan "
                       "no longer reads the scripts")
    elif found:
        results.append(f"FAIL: pipes: `| grep -q` under pipefail ends the producer with SIGPIPE and fails a "
                       f"pipeline whose pattern was there; read to the end (`| grep … >/dev/null`): {', '.join(found)}")
    else:
        results.append(f"ok: pipes: no `| grep -q` in the {shells} shell scripts ({len(scripts)} set pipefail, the "
                       "others are sourced by them or run alone)")


PLANTED_PIPES = {
    "Tests/Planted/pipes.sh": "#!/usr/bin/env bash\nset -uo pipefail\n"
                              "if ldd x | grep -q libcrypto; then echo found; fi\n"       # line 3: found
                              "printf '%s\\n' a b \\\n    | grep -E -xq b || echo missing\n"  # line 4: found
                              "grep -q ok log || grep -q fail log\n"                    # not a pipe
                              "ldd x | grep libcrypto >/dev/null && echo found\n"        # reads to the end
                              "echo '| grep -q quoted' # | grep -q in a comment\n",
    "Tests/Planted/library.sh": "# sourced by a script that sets pipefail\nldd x | grep --quiet libcrypto\n",
}
PLANTED_EARLY_EXITS = ["Tests/Planted/library.sh:2", "Tests/Planted/pipes.sh:3", "Tests/Planted/pipes.sh:4"]


def self_test_early_exits():
    found = early_exits(PLANTED_PIPES)
    return [f"ok: control: the pipe scan finds exactly the planted `| grep -q` under pipefail (a plain one and an "
            f"option cluster after a continued line, and --quiet in a sourced library) and none in `||`, a grep that "
            f"reads to the end, quoted text or a comment" if found == PLANTED_EARLY_EXITS else
            f"FAIL: control: the pipe scan found {found}, expected exactly {PLANTED_EARLY_EXITS}"]


# ------------------------------------------------------------------------------------------ the controls ---

PLANTED = {
    "Sources/Planted/Knob.swift": 'let knob = ProcessInfo.processInfo.environment["PLANTED_SWIFT_KNOB"]\n'
                                  'let other = getenv("PATH")\n',
    "Sources/Planted/Switch.swift": 'static let offlineSwitch = "PLANTED_SWIFT_SWITCH"\n'
                                    'let on = ProcessInfo.processInfo.environment[offlineSwitch] != nil\n',
    "Tests/Planted/helper.c": 'static int env_on(const char *name) {\n    const char *v = getenv(name);\n'
                              '    return v != 0;\n}\nint f(void) { return env_on("PLANTED_C_KNOB"); }\n',
    "Tests/Planted/tool.py": 'import os\nlimit = os.environ.get("PLANTED_PY_KNOB", "5")\n',
    "Tests/Planted/run.sh": '#!/usr/bin/env bash\nset -u\nCOUNT=${PLANTED_SH_KNOB:-10}\nOWN=1\necho "$OWN $COUNT"\n'
                            'PLANTED_CHILD_ONLY=1 ./child.sh\nfor ITEM in a b; do echo "$ITEM"; done\n',
    "Tests/Planted/child.sh": '#!/usr/bin/env bash\necho "$PLANTED_CHILD_ONLY"\n',
}
PLANTED_READS = {"PLANTED_SWIFT_KNOB", "PLANTED_SWIFT_SWITCH", "PLANTED_C_KNOB", "PLANTED_PY_KNOB",
                 "PLANTED_SH_KNOB", "PLANTED_CHILD_ONLY"}
PLANTED_NOT_READS = {"OWN", "COUNT", "ITEM"}


def self_test(base):
    """The scanner on planted sources: every planted read found, none of the script's own variables; and the
    planted reads, unknown to run-all.sh, each reported as missing from its sets."""
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for path, text in PLANTED.items():
            os.makedirs(os.path.dirname(os.path.join(folder, path)), exist_ok=True)
            with open(os.path.join(folder, path), "w", encoding="utf-8") as planted:
                planted.write(text)
        found = scan(folder, sorted(PLANTED))
    missed = sorted(PLANTED_READS - set(found))
    wrong = sorted(PLANTED_NOT_READS & set(found))
    results.append(f"ok: control: the scan finds each planted read ({len(PLANTED_READS)}: Swift, a Swift constant, a C "
                   "wrapper, Python, a shell default, and a script's read of what another sets for it alone) and none of a script's own variables"
                   if not missed and not wrong and "PATH" in found else
                   f"FAIL: control: the scan missed {missed}, or took a script's own variables for reads: {wrong}")
    planted_found = {name: places for name, places in found.items() if name in PLANTED_READS}
    reported = []
    if planted_found:
        reported = check_handled(planted_found, base, []) or []
    if set(reported) == set(planted_found) and planted_found:
        results.append(f"ok: control: each planted read is reported as missing from run-all.sh's sets "
                       f"({len(reported)})")
    else:
        results.append(f"FAIL: control: of the planted reads {sorted(planted_found)}, the check reported "
                       f"{sorted(reported)} as missing")
    return results


def main():
    base = project_free_environment()
    results = self_test(base) + self_test_early_exits()
    found = scan(REPOSITORY)
    if len(found) < 40:
        results.append(f"FAIL: environment: the scan found {len(found)} variables, at least 40 expected: it no "
                       "longer reads the sources")
    check_handled(found, base, results)
    check_narrowed(base, results)
    check_counting(results)
    check_early_exits(results)
    if "--list" in sys.argv[1:]:
        for name in sorted(found):
            print(f"    {name}: {'exempt (' + EXEMPT[name] + ')' if name in EXEMPT else ''} "
                  f"{', '.join(found[name][:4])}")
    print("\n".join(results))
    return 1 if any(line.startswith("FAIL") for line in results) else 0


if __name__ == "__main__":
    sys.exit(main())
