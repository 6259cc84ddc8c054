#!/usr/bin/env python3
# The test command's blocking-waits check (issue 49; MIT, The SQLCipherKit authors).
#
# Swift Testing runs every test body, sync or async, on Swift's cooperative pool, which has one thread per core (two
# here). A test that waits synchronously (a child process, a semaphore, a sleep) holds one of them, and an async test
# whose continuation needs a thread waits behind it: on a loaded machine, async tests hit their time limits while
# doing nothing. So the test command runs the suites that hold async tests in a `swift test` of their own (the
# ASYNC_SUITES line of Tests/run-all.sh), and this check keeps that true:
#   A. every async test is in a suite that ASYNC_SUITES lists;
#   B. no test function of a listed suite calls a known blocking wait, except on a line that says why the wait
#      does not run on the cooperative pool: a trailing comment `// off the pool: REASON` (the body of a
#      DatabasePool read or write, which runs on the library's worker threads, say); and no listed suite is
#      without an async test (a sync suite there only takes threads from the async ones);
#   C. no test uses Swift Testing's `.timeLimit`, whose clock starts when the test is scheduled (a test queued behind
#      others' synchronous work runs out of time before it runs), but `.hangGuard(LIMIT, hang: "WHAT")`
#      (Tests/ProcessTestSupport/HangGuard.swift), whose clock starts with the body and which names the hang.
# It prints one "ok: NAME" or "FAIL: NAME: REASON" line per check, as Tests/Support/checks.sh's parts do, and runs
# its own controls first (--self-test is implied): planted inputs that each rule must catch.
import os
import re
import sys
import tempfile

BLOCKING = re.compile(r"\b(waitUntilExit|DispatchSemaphore|Thread\.sleep|usleep|(?<!Task\.)sleep|readLine|runProcess|"
                      r"HelperProcess|CLI\.run|waitForExit|barrierWrite)\s*\(|\.wait\(\s*(timeout:[^)]*)?\)")
OFF_POOL = re.compile(r"//\s*off the pool:\s*\S")
TEST_ATTRIBUTE = re.compile(r"^\s*@Test\b")
TIME_LIMIT = re.compile(r"\.timeLimit\(")
HANG_GUARD = re.compile(r"\.hangGuard\(")
NAMED_HANG = re.compile(r'\.hangGuard\(\s*[^,()]+(?:\([^()]*\))?\s*,\s*hang:\s*"[^"\s]')
FUNC = re.compile(r"\bfunc\s+(\w+)\s*(?:<[^>]*>)?\s*\((.*?)\)\s*(async)?", re.S)
TYPE = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s*)*(?:public\s+|final\s+)*(?:struct|class|extension|enum)\s+(\w+)")


def async_suites(run_all):
    text = open(run_all, encoding="utf-8").read()
    match = re.search(r"^ASYNC_SUITES='([^']*)'", text, re.M)
    if not match:
        return None
    return [name for name in match.group(1).split("|") if name]


def tests_in(path):
    """(type, function, is_async, body lines as (number, text)) for every @Test function of a Swift file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found = []
    current_type = None
    index = 0
    while index < len(lines):
        # Top-level types only (a test's nested enums and helpers are not its suite).
        type_match = TYPE.match(lines[index]) if not lines[index][:1].isspace() else None
        if type_match and not lines[index].lstrip().startswith("//"):
            current_type = type_match.group(1)
        if TEST_ATTRIBUTE.match(lines[index]):
            # The signature: from the attribute to the body's opening brace.
            start = index
            while index < len(lines) and "func " not in lines[index]:
                index += 1
            signature = ""
            while index < len(lines):
                signature += lines[index] + "\n"
                if "{" in lines[index]:
                    break
                index += 1
            function = FUNC.search(signature)
            if not function:
                index = start + 1
                continue
            is_async = bool(re.search(r"\)\s*async\b", signature))
            # The body: to the brace that closes the one that opened it.
            depth = 0
            body = []
            opened = False
            while index < len(lines):
                text = lines[index]
                code = re.sub(r"//.*", "", re.sub(r'"(?:[^"\\]|\\.)*"', '""', text))
                for character in code:
                    if character == "{":
                        depth += 1
                        opened = True
                    elif character == "}":
                        depth -= 1
                body.append((index + 1, text))
                if opened and depth == 0:
                    break
                index += 1
            found.append((current_type, function.group(1), is_async, body))
        index += 1
    return found


def swift_files(root):
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [name for name in subfolders if not name.startswith(".build") and name not in
                         ("CallgrindGate", "Fuzz", "FluentDriver")]
        for name in files:
            if name.endswith(".swift"):
                yield os.path.join(folder, name)


def check(tests_root, listed):
    """The failures (strings) for the Swift files under tests_root against the ASYNC_SUITES list."""
    failures = []
    listed_seen = {name: False for name in listed}
    for path in sorted(swift_files(tests_root)):
        relative = os.path.relpath(path, tests_root)
        for suite, function, is_async, body in tests_in(path):
            in_listed = suite in listed
            if is_async:
                if in_listed:
                    listed_seen[suite] = True
                else:
                    failures.append(f"{relative}: {suite}.{function} is async, and {suite} is not in ASYNC_SUITES "
                                    "(Tests/run-all.sh): it would run beside suites that wait synchronously")
            if in_listed:
                for number, text in body:
                    code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
                    if BLOCKING.search(re.sub(r"//.*", "", code)) and not OFF_POOL.search(text):
                        failures.append(f"{relative}:{number}: {suite}.{function} waits synchronously "
                                        f"({text.strip()}): in the async suites' run this holds a cooperative "
                                        "thread; await instead, or say why it runs off the pool (// off the pool: …)")
        code = re.sub(r"^\s*//.*$", "", open(path, encoding="utf-8").read(), flags=re.M)
        for match in TIME_LIMIT.finditer(code):
            number = code.count("\n", 0, match.start()) + 1
            failures.append(f"{relative}:{number}: .timeLimit starts its clock when the test is scheduled, so it "
                            "fires for a test queued behind others; use .hangGuard(LIMIT, hang: \"WHAT IT CATCHES\")")
        for match in HANG_GUARD.finditer(code):
            if not NAMED_HANG.match(code, match.start()):
                number = code.count("\n", 0, match.start()) + 1
                failures.append(f"{relative}:{number}: a .hangGuard without the hang it guards (hang: \"…\")")
    for suite, seen in listed_seen.items():
        if not seen:
            failures.append(f"ASYNC_SUITES lists {suite}, which has no async test here: a sync suite in the async "
                            "suites' run only takes their threads")
    return failures


def self_test():
    """Planted inputs each rule must catch, and a clean one it must pass: the check's own controls."""
    results = []
    cases = {
        "a planted waitUntilExit in an async suite's test body": ("""
@Suite("Pool")
struct PoolTests {
    @Test("waits")
    func waits() async throws {
        let process = Process()
        process.waitUntilExit()
    }
}
""", ["PoolTests"], True),
        "an async test in a suite ASYNC_SUITES does not list": ("""
@Suite("Other")
struct OtherTests {
    @Test("awaits")
    func awaits() async throws { try await Task.sleep(for: .milliseconds(1)) }
}
""", ["PoolTests"], True),
        "a sync suite listed in ASYNC_SUITES": ("""
@Suite("Sync")
struct SyncTests {
    @Test("plain")
    func plain() throws {}
}
""", ["SyncTests"], True),
        "a planted .timeLimit": ("""
@Suite("Slow", .timeLimit(.minutes(5)))
struct SlowTests {
    @Test("plain")
    func plain() throws {}
}
""", [], True),
        "a .hangGuard that does not name its hang": ("""
@Suite("Slow", .hangGuard(.minutes(5), hang: ""))
struct SlowTests {
    @Test("plain")
    func plain() throws {}
}
""", [], True),
        "a clean async suite, with a wait that says why it is off the pool": ("""
@Suite("Pool", .hangGuard(.minutes(2),
                          hang: "a read whose caller is never resumed"))
struct PoolTests {
    @Test("reads")
    func reads() async throws {
        try await pool.read { _ in
            usleep(2000) // off the pool: a pool read's body runs on the library's worker thread
        }
    }
}
""", ["PoolTests"], False),
    }
    for name, (source, listed, must_fail) in cases.items():
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "Planted.swift"), "w", encoding="utf-8") as planted:
                planted.write(source)
            failures = check(folder, listed)
        if bool(failures) == must_fail:
            results.append(f"ok: control: {name} {'is caught' if must_fail else 'passes'}")
        else:
            results.append(f"FAIL: control: {name}: the check {'missed it' if must_fail else 'refused it'}"
                           f" ({failures})")
    return results


def main():
    repository = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    lines = self_test()
    listed = async_suites(os.path.join(repository, "Tests", "run-all.sh"))
    if listed is None:
        lines.append("FAIL: ASYNC_SUITES: no ASYNC_SUITES='…' line in Tests/run-all.sh")
    else:
        failures = check(os.path.join(repository, "Tests"), listed)
        lines += [f"FAIL: blocking waits: {failure}" for failure in failures]
        if not failures:
            lines.append(f"ok: blocking waits: every async test is in ASYNC_SUITES ({len(listed)} suites), and none "
                         "of their test functions waits synchronously on the cooperative pool; every time limit is a "
                         ".hangGuard that names its hang")
    print("\n".join(lines))
    return 1 if any(line.startswith("FAIL") for line in lines) else 0


if __name__ == "__main__":
    sys.exit(main())
