import Foundation
import ProcessTestSupport
import SQLCipherKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `sqlcipherkit shell` (issue 44 item 7) driven as a person drives it, through a pseudo-terminal, and as a
/// script drives it, through a pipe; and the output rules it shares with `query` (item 5: every JSON column,
/// write errors). Synchronous tests in a serialized suite: the pseudo-terminal waits block a thread, never the
/// cooperative pool.
@Suite("sqlcipherkit shell", .serialized,
       .hangGuard(.minutes(5), hang: "a shell that never answers on its terminal or never exits"))
struct ShellTests {
    static let passphrase = "shell-passphrase-\(UUID().uuidString)"
    /// Typed in the session inside a refused `PRAGMA key`: must reach neither the history nor the database.
    static let typedKey = "typed-key-\(UUID().uuidString)"
    /// Typed in URI keys that no spelling of the line shows: without "key" in it, so that only the rule's other
    /// words (`vacuum`, `attach`) can keep such a line out of the history.
    static let typedSecret = "typed-secret-\(UUID().uuidString)"

    static let prompt = "\nsqlcipherkit> "
    static let continuation = "\n   ...> "

    /// The environment of a shell run: this process's own, the key in K, the history in `history`.
    static func environment(history: String) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(["K": passphrase, "SQLCIPHERKIT_HISTORY": history]) { $1 }
    }

    /// What the terminal shows for a one-line result `text`: the line, then the next prompt.
    static func result(_ text: String) -> String { "\r\n" + text + "\r" + prompt }

    /// Types `line` and Enter, then waits for `expected` (default: the next prompt).
    func enter(_ line: String, on terminal: PseudoTerminalProcess, expecting expected: String = ShellTests.prompt,
               sourceLocation: SourceLocation = #_sourceLocation) {
        terminal.send(line + "\r")
        #expect(terminal.waitFor(expected), "after \(line), no \(expected.debugDescription) in:\n\(terminal.recent)",
                sourceLocation: sourceLocation)
    }

    @Test("a session at a terminal: create, insert, .tables, .schema, .mode json, a multi-line statement, Ctrl-C, history, .quit")
    func terminalSession() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("s.db"), history = folder.file("history")
        let terminal = try PseudoTerminalProcess(CLI.executable, ["shell", db, "--create", "--key-env", "K"],
                                                 environment: Self.environment(history: history))
        #expect(terminal.waitFor(Self.prompt), "no prompt: \(terminal.transcript)")

        enter("CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT);", on: terminal)
        enter("INSERT INTO note(body) VALUES ('first'), ('second');", on: terminal)
        enter(".tables", on: terminal, expecting: Self.result("note"))
        enter(".schema", on: terminal, expecting: Self.result("CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT);"))

        // A statement over three lines: the continuation prompt, then the table as typed.
        enter("CREATE TABLE multi(", on: terminal, expecting: Self.continuation)
        enter("  a INTEGER,", on: terminal, expecting: Self.continuation)
        enter("  b TEXT);", on: terminal)
        enter(".schema multi", on: terminal, expecting: "CREATE TABLE multi(\r\n  a INTEGER,\r\n  b TEXT);\r" + Self.prompt)

        // JSON keeps both columns named a, in order.
        enter(".mode json", on: terminal)
        enter("SELECT 2 AS b, 1 AS a, 3 AS a;", on: terminal, expecting: Self.result(#"[{"b":2,"a":1,"a:1":3}]"#))

        // The guard refuses a key in SQL; the shell says so and goes on.
        enter("PRAGMA key = '\(Self.typedKey)';", on: terminal, expecting: "refused")
        #expect(terminal.waitFor(Self.prompt))
        #expect(!terminal.transcript.contains(Self.passphrase), "the shell printed the key")
        // A URI key that no spelling of the line shows (percent-escaped, built by an expression): refused, and, like
        // the line above, never kept in the history (checked below with the typed key).
        let copy = folder.file("copy.db")
        enter("VACUUM INTO 'file:\(copy)?%6Bey=\(Self.typedSecret)';", on: terminal, expecting: "refused")
        enter("VACUUM INTO 'file:\(copy)?k' || 'ey=\(Self.typedSecret)';", on: terminal, expecting: "refused")
        #expect(!FileManager.default.fileExists(atPath: copy))

        // Ctrl-C during a statement that never ends: "interrupted", and the shell still answers.
        enter(".mode csv", on: terminal)
        enter(".headers off", on: terminal)
        terminal.send("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;\r")
        #expect(terminal.waitFor("FROM c;\u{1B}[K\r\n"), "the long query was not entered: \(terminal.recent)")
        var interrupted = false
        // The statement must be running (the terminal back in its own mode) for Ctrl-C to be a signal: a few
        // tries, each bounded.
        for _ in 0..<3 where !interrupted {
            Thread.sleep(forTimeInterval: 0.5)
            terminal.send("\u{03}")
            interrupted = terminal.waitFor("interrupted", timeout: 10)
        }
        #expect(interrupted, "Ctrl-C did not interrupt the statement: \(terminal.recent)")
        #expect(terminal.waitFor(Self.prompt))
        enter("SELECT 42;", on: terminal, expecting: Self.result("42"))

        // Up recalls the last line; Enter runs it again.
        terminal.send("\u{1B}[A")
        #expect(terminal.waitFor("sqlcipherkit> SELECT 42;"), "Up did not recall the line: \(terminal.recent)")
        enter("", on: terminal, expecting: Self.result("42"))

        // Ctrl-C at the prompt drops a statement being continued: the next one runs alone.
        enter("SELECT 1 +", on: terminal, expecting: Self.continuation)
        terminal.send("2 +\u{03}")
        #expect(terminal.waitFor("^C\r" + Self.prompt), "Ctrl-C did not give a new prompt: \(terminal.recent)")
        enter("SELECT 7;", on: terminal, expecting: Self.result("7"))

        // Line editing: Left, Backspace, Ctrl-A, Ctrl-E, Ctrl-U.
        terminal.send("garbage\u{15}SELCT 8\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[DE\u{05};\u{01}\u{1B}[C\u{7F}S\r")
        #expect(terminal.waitFor(Self.result("8")), "the edited line did not run as SELECT 8: \(terminal.recent)")

        // A line holding the passphrase itself (pasted by mistake) runs, but is not kept.
        enter("SELECT length('\(Self.passphrase)');", on: terminal, expecting: Self.result("\(Self.passphrase.count)"))

        enter(".quit", on: terminal, expecting: "\r\n")
        #expect(terminal.waitForExit() == 0, "the shell did not end with status 0: \(terminal.transcript)")

        // The history: private, holding the session's lines but no key material.
        var status = stat()
        #expect(lstat(history, &status) == 0 && status.st_mode & 0o777 == 0o600, "history mode \(status.st_mode)")
        let kept = try String(contentsOfFile: history, encoding: .utf8)
        #expect(kept.contains("SELECT 42;\n") && kept.contains("CREATE TABLE multi(\n  a INTEGER,\n  b TEXT);\n")
                    && kept.contains(".tables\n"), "history:\n\(kept)")
        #expect(!kept.contains(Self.passphrase), "the history holds the passphrase:\n\(kept)")
        #expect(!kept.lowercased().contains("pragma key") && !kept.contains(Self.typedKey),
                "the history holds the refused PRAGMA key line:\n\(kept)")
        #expect(!kept.contains(Self.typedSecret), "the history holds a refused VACUUM INTO a keyed URI:\n\(kept)")
        #expect(!kept.contains("SELECT 1 +"), "the history holds the cancelled statement:\n\(kept)")

        // What was written is in the database, under the key (the refused PRAGMA key changed nothing).
        let read = try CLI.run(["query", db, "SELECT count(*) FROM note", "--key-env", "K", "--format", "csv"],
                               environment: ["K": Self.passphrase])
        #expect(read.status == 0 && read.stdout.contains("\n2\n"), "\(read)")
    }

    @Test("SIGTERM at the prompt ends the shell with status 1 and puts the terminal's settings back")
    func terminationRestoresTerminal() throws {
        let folder = try TemporaryDirectory()
        let terminal = try PseudoTerminalProcess(CLI.executable,
                                                 ["shell", folder.file("t.db"), "--create", "--key-env", "K"],
                                                 environment: Self.environment(history: folder.file("history")))
        #expect(terminal.waitFor(Self.prompt), "no prompt: \(terminal.transcript)")
        terminal.send("SELECT 'half typed")
        #expect(terminal.waitFor("half typed"))
        // Raw mode while the line is read: no echo by the terminal itself, no line buffering.
        #expect(terminal.attributes().c_lflag & tcflag_t(ICANON | ECHO) == 0, "the editor is not in raw mode")
        kill(terminal.pid, SIGTERM)
        #expect(terminal.waitForExit() == 1, "\(terminal.transcript)")
        #expect(terminal.transcript.contains("ended by SIGTERM"), "\(terminal.transcript)")
        let settings = terminal.attributes()
        #expect(settings.c_lflag & tcflag_t(ICANON) != 0 && settings.c_lflag & tcflag_t(ECHO) != 0,
                "the terminal was left in raw mode")
    }

    @Test("a history file that is a symbolic link or open to others is not used, and never written")
    func unsafeHistoryFile() throws {
        let folder = try TemporaryDirectory()
        let target = folder.file("target"), link = folder.file("link"), open = folder.file("open")
        try Data("old line\n".utf8).write(to: URL(fileURLWithPath: target))
        chmod(target, 0o600)
        symlink(target, link)
        try Data().write(to: URL(fileURLWithPath: open))
        chmod(open, 0o644)
        for history in [link, open] {
            let terminal = try PseudoTerminalProcess(CLI.executable,
                                                     ["shell", folder.file("h.db"), "--create", "--key-env", "K"],
                                                     environment: Self.environment(history: history))
            #expect(terminal.waitFor("history is kept in memory only"), "no warning: \(terminal.transcript)")
            #expect(terminal.waitFor(Self.prompt))
            enter("SELECT 'kept in memory';", on: terminal)
            terminal.send("\u{1B}[A")
            #expect(terminal.waitFor("SELECT 'kept in memory';"), "no history in memory: \(terminal.recent)")
            terminal.send("\u{15}\u{04}")
            #expect(terminal.waitForExit() == 0, "\(terminal.transcript)")
        }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "old line\n", "written through the link")
        #expect(try String(contentsOfFile: open, encoding: .utf8).isEmpty, "written to a file others can read")
    }

    @Test("piped SQL: statements, dot commands, a statement without its last ';'; any failure exits 1")
    func pipedScript() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("p.db")
        let script = """
            CREATE TABLE t(x);
            INSERT INTO t VALUES (1), (2),
              (3);
            .mode csv
            .headers off
            SELECT sum(x) FROM t;
            .tables
            SELECT 'last'
            """
        let run = try CLI.run(["shell", db, "--create", "--key-env", "K"], environment: ["K": Self.passphrase],
                              input: Data(script.utf8))
        #expect(run.status == 0 && run.stdout == "6\nt\nlast\n", "\(run)")
        #expect(!run.output.contains(Self.passphrase))

        // A failure in the middle: the rest runs, the status says it failed; --bail stops there.
        let failing = "SELECT nosuchfunction();\n.nosuchcommand\nSELECT 'after';\n"
        let goesOn = try CLI.run(["shell", db, "--key-env", "K"], environment: ["K": Self.passphrase],
                                 input: Data(failing.utf8))
        #expect(goesOn.status == 1 && goesOn.stdout.contains("after"), "\(goesOn)")
        #expect(goesOn.stderr.contains("unknown command .nosuchcommand: enter .help"), "\(goesOn)")
        let bails = try CLI.run(["shell", db, "--key-env", "K", "--bail"], environment: ["K": Self.passphrase],
                                input: Data(failing.utf8))
        #expect(bails.status == 1 && !bails.stdout.contains("after"), "\(bails)")

        // A new database left without a change is still a database (not a 0-byte file the next run would take
        // for a truncated one), and it is bound to its key.
        let fresh = folder.file("fresh.db")
        let quit = try CLI.run(["shell", fresh, "--create", "--key-env", "K"], environment: ["K": Self.passphrase],
                               input: Data(".quit\n".utf8))
        #expect(quit.status == 0, "\(quit)")
        let wrongKey = try CLI.run(["shell", fresh, "--key-env", "K"], environment: ["K": "another-key"],
                                   input: Data("SELECT 1;\n".utf8))
        #expect(wrongKey.status == 3, "a fresh database opened with another key: \(wrongKey)")

        // The key cannot come from standard input: that is where the SQL comes from.
        let keyOnStdin = try CLI.run(["shell", db, "--key-stdin"], input: Data(Self.passphrase.utf8))
        #expect(keyOnStdin.status == 64 && keyOnStdin.stderr.contains("--key-env"), "\(keyOnStdin)")
    }

    @Test("dot commands in a script: .indexes, .mode line, .read, .timer, .backup (encrypted, same key), .check, .info, .help")
    func dotCommands() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("d.db"), copy = folder.file("copy.db"), sql = folder.file("more.sql")
        try Data("INSERT INTO t VALUES (2, 'two');\n.mode line\nSELECT * FROM t WHERE id = 2;\n".utf8)
            .write(to: URL(fileURLWithPath: sql))
        let script = """
            CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT);
            CREATE INDEX t_name ON t(name);
            INSERT INTO t VALUES (1, 'one');
            .indexes t
            .read \(sql)
            .timer on
            SELECT count(*) AS n FROM t;
            .timer off
            .backup \(copy)
            .backup \(copy)
            .check
            .info
            .help
            """
        let run = try CLI.run(["shell", db, "--create", "--key-env", "K"], environment: ["K": Self.passphrase],
                              input: Data(script.utf8))
        #expect(run.status == 1, "the second .backup to the same file must fail: \(run)")
        #expect(run.stderr.contains("already exists"), "\(run)")
        for expected in ["t_name\n", "  id = 2\nname = two\n", "n = 2\nRun Time: real ", "backed up to \(copy)\n",
                         "ok\n", "format: 4", "cipher_status: 1", ".backup FILE"] {
            #expect(run.stdout.contains(expected), "no \(expected.debugDescription) in:\n\(run.stdout)")
        }
        // The copy is encrypted with the same key and holds both rows.
        let read = try CLI.run(["query", copy, "SELECT group_concat(name) FROM t", "--key-env", "K", "--format", "csv"],
                               environment: ["K": Self.passphrase])
        #expect(read.status == 0 && read.stdout.contains("one,two"), "\(read)")
        let plain = try CLI.run(["info", copy])
        #expect(plain.status != 0 || !plain.stdout.contains("format: plain"), "the copy is not encrypted: \(plain)")
    }

    @Test(".output writes rows to a new 0600 file, refuses a symbolic link, and .output stdout comes back")
    func outputToFile() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("o.db"), out = folder.file("rows.csv")
        let target = folder.file("target"), link = folder.file("link")
        try Data("untouched\n".utf8).write(to: URL(fileURLWithPath: target))
        symlink(target, link)
        let script = """
            .mode csv
            .output \(out)
            SELECT 'to the file';
            .output stdout
            SELECT 'to stdout';
            .output \(link)
            SELECT 'after the refusal';
            """
        let run = try CLI.run(["shell", db, "--create", "--key-env", "K"], environment: ["K": Self.passphrase],
                              input: Data(script.utf8))
        #expect(run.status == 1, "the refused link must count as a failure: \(run)")
        #expect(run.stderr.contains("symbolic link"), "\(run)")
        #expect(run.stdout.contains("to stdout") && run.stdout.contains("after the refusal")
                    && !run.stdout.contains("to the file"), "\(run)")
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "'to the file'\nto the file\n")
        var status = stat()
        #expect(stat(out, &status) == 0 && status.st_mode & 0o777 == 0o600, "mode \(status.st_mode)")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "untouched\n", "written through the link")
    }

    @Test("query --format json keeps every column in order, repeated names included")
    func jsonKeepsDuplicateColumns() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("j.db")
        let run = try CLI.run(["query", db, "SELECT 2 AS b, 1 AS a, 3 AS a, 'x\"y' AS \"a:1\"", "--create",
                               "--key-env", "K", "--format", "json"], environment: ["K": Self.passphrase])
        #expect(run.status == 0 && run.stdout == #"[{"b":2,"a":1,"a:2":3,"a:1":"x\"y"}]"# + "\n", "\(run)")
        let empty = try CLI.run(["query", db, "SELECT 1 AS a WHERE 0", "--key-env", "K", "--format", "json"],
                                environment: ["K": Self.passphrase])
        #expect(empty.status == 0 && empty.stdout == "[]\n", "\(empty)")
    }

    @Test("query > /dev/full fails and names the full disk")
    func queryToFullDisk() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("f.db")
        let created = try CLI.run(["query", db, "CREATE TABLE t(x)", "--create", "--key-env", "K"],
                                  environment: ["K": Self.passphrase])
        #expect(created.status == 0, "\(created)")
        for command in ["query", "shell"] {
            let sql = command == "query" ? "'SELECT 1'" : ""
            let line = "printf 'SELECT 1;\\n' | \"$0\" \(command) \"$1\" \(sql) --key-env K > /dev/full"
            let run = try runProcess("/bin/sh", ["-c", line, CLI.executable, db],
                                     environment: ProcessInfo.processInfo.environment.merging(["K": Self.passphrase]) { $1 })
            #expect(run.status == 1 && run.stderr.contains("No space left on device"), "\(command): \(run)")
        }
    }
}
