import Foundation
import ProcessTestSupport
import SQLCipherKit
import Testing

/// The CLI's key sources that SQLCipherKit reads (a checked --key-file, --key-credential, --new-key-credential,
/// --key-command) and the backup command: success, each refusal with its message and exit status 64, and no
/// key in any output or argument.
@Suite("sqlcipherkit key sources and backup",
       .hangGuard(.minutes(5), hang: "a key command or credential read that waits forever"))
struct KeySourceCLITests {
    static let hex = Hex.string((0..<32).map { _ in UInt8.random(in: 0...255) })
    static let newHex = Hex.string((0..<32).map { _ in UInt8.random(in: 0...255) })
    static let secrets = [hex, newHex]

    /// Runs the CLI with exactly `environment` added to this process's, minus CREDENTIALS_DIRECTORY unless
    /// given; checks that no key is among the arguments or in the output.
    func cli(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        for secret in Self.secrets {
            #expect(!arguments.joined(separator: " ").localizedCaseInsensitiveContains(secret), "a key in argv")
        }
        var full = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if environment["CREDENTIALS_DIRECTORY"] == nil { full["CREDENTIALS_DIRECTORY"] = nil }
        let result = try runProcess(CLI.executable, arguments, environment: full, timeout: 120)
        for secret in Self.secrets {
            #expect(!result.output.localizedCaseInsensitiveContains(secret), "a key was printed: \(arguments)")
        }
        return result
    }

    /// A database keyed with ``hex``, and a credentials directory as systemd gives one (0700, each file 0400)
    /// holding `db-key` (``hex``) and `db-key-new` (``newHex``).
    func setUp(_ folder: TemporaryDirectory) throws -> (db: String, credentials: String) {
        let db = folder.file("app.db")
        let create = try cli(["query", db, "CREATE TABLE t(a); INSERT INTO t VALUES (42)", "--create", "--key-env", "K",
                              "--raw"], environment: ["K": Self.hex])
        #expect(create.status == 0, "\(create)")
        let credentials = folder.file("credentials")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        for (name, hex) in [("db-key", Self.hex), ("db-key-new", Self.newHex)] {
            try writeFile(credentials + "/" + name, hex + "\n")
            #expect(chmod(credentials + "/" + name, 0o400) == 0)
        }
        #expect(chmod(credentials, 0o700) == 0)
        return (db, credentials)
    }

    @Test("one rule for a key's line end through every source: one trailing \\n or \\r\\n dropped, nothing else")
    func lineEndRule() throws {
        let folder = try TemporaryDirectory()
        // The bytes a source holds, and the passphrase they must mean.
        let table: [(bytes: String, passphrase: String)] = [
            ("abc", "abc"), ("abc\n", "abc"), ("abc\r\n", "abc"), ("abc\r", "abc\r"), ("abc\n\r", "abc\n\r"),
            ("abc\n\n", "abc\n"), ("abc\r\n\r\n", "abc\r\n"),
        ]
        var mismatches: [String] = []
        for (index, entry) in table.enumerated() {
            let db = folder.file("line-\(index).db")
            let created = try Database(path: db, key: .passphrase(bytes: Array(entry.passphrase.utf8)))
            try created.execute("CREATE TABLE t(a)")
            created.close()
            let file = folder.file("key-\(index).txt")
            try writeFile(file, entry.bytes)
            #expect(chmod(file, 0o600) == 0)
            let credentials = folder.file("credentials-\(index)")
            try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
            #expect(chmod(credentials, 0o700) == 0)
            try writeFile(credentials + "/db-key", entry.bytes)
            #expect(chmod(credentials + "/db-key", 0o400) == 0)
            let sources: [(name: String, arguments: [String], environment: [String: String], input: Data)] = [
                ("file", ["--key-file", file], [:], Data()),
                ("credential", ["--key-credential", "db-key"], ["CREDENTIALS_DIRECTORY": credentials], Data()),
                ("command", ["--key-command", "cat '\(file)'"], [:], Data()),
                ("environment", ["--key-env", "LINE_KEY"], ["LINE_KEY": entry.bytes], Data()),
                ("stdin", ["--key-stdin"], [:], Data(entry.bytes.utf8)),
            ]
            for source in sources {
                var environment = ProcessInfo.processInfo.environment.merging(source.environment) { $1 }
                if source.environment["CREDENTIALS_DIRECTORY"] == nil { environment["CREDENTIALS_DIRECTORY"] = nil }
                let result = try runProcess(CLI.executable, ["check", db] + source.arguments, environment: environment,
                                            input: source.input, timeout: 60)
                if result.status != 0 {
                    mismatches.append("\(source.name) \(entry.bytes.debugDescription): exit \(result.status)")
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
    }

    @Test("--key-credential: a file others can write, another user's, a link, or a writable or relative directory is refused")
    func credentialChecks() throws {
        let folder = try TemporaryDirectory()
        let (db, _) = try setUp(folder)
        /// A credentials directory holding `db-key` (``hex``), prepared by `prepare`; the check's exit status.
        func check(_ label: String, prepare: (String) throws -> Void, directory: ((String) -> String)? = nil)
            throws -> ProcessResult {
            let credentials = folder.file("credentials-\(label)")
            try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
            #expect(chmod(credentials, 0o700) == 0)
            try writeFile(credentials + "/db-key", Self.hex + "\n")
            #expect(chmod(credentials + "/db-key", 0o400) == 0)
            try prepare(credentials)
            return try cli(["check", db, "--key-credential", "db-key", "--raw"],
                           environment: ["CREDENTIALS_DIRECTORY": directory?(credentials) ?? credentials])
        }
        // What systemd gives: 0400, or 0440 (root-owned with an ACL for the service's user).
        #expect(try check("0400") { _ in }.status == 0)
        #expect(try check("0440") { chmod($0 + "/db-key", 0o440) }.status == 0)
        for (label, mode) in [("0660", 0o660), ("0620", 0o620), ("0602", 0o602)] as [(String, mode_t)] {
            let result = try check(label) { chmod($0 + "/db-key", mode) }
            #expect(result.status == 64 && result.stderr.contains("can be written by others"), "\(label): \(result)")
        }
        if geteuid() == 0 {
            let foreign = try check("foreign") { chown($0 + "/db-key", 65534, 65534) }
            #expect(foreign.status == 64 && foreign.stderr.contains("belongs to uid 65534"), "\(foreign)")
        }
        let outside = folder.file("outside-key")
        try writeFile(outside, Self.hex + "\n")
        #expect(chmod(outside, 0o400) == 0)
        let link = try check("link") { credentials in
            unlink(credentials + "/db-key")
            #expect(symlink(outside, credentials + "/db-key") == 0)
        }
        #expect(link.status == 64 && link.stderr.contains("is a symbolic link"), "\(link)")
        let writable = try check("writable") { chmod($0, 0o1777) }
        #expect(writable.status == 64 && writable.stderr.contains("can be written by others"), "\(writable)")
        let relative = try check("relative", prepare: { _ in }, directory: { ($0 as NSString).lastPathComponent })
        #expect(relative.status == 64 && relative.stderr.contains("relative path"), "\(relative)")
    }

    @Test("--key-command: its environment holds no other key variable; SIGTERM to the tool ends the command's whole group")
    func keyCommandEnvironmentAndSignals() throws {
        let folder = try TemporaryDirectory()
        let (db, _) = try setUp(folder)
        let keyFile = folder.file("command-key.txt")
        try writeFile(keyFile, Self.hex + "\n")
        #expect(chmod(keyFile, 0o600) == 0)
        // The command writes its environment down, then prints the key.
        let dump = folder.file("environment.txt")
        let backup = try cli(["backup", db, folder.file("copy.db"), "--raw", "--key-command", "env > '\(dump)'; cat '\(keyFile)'",
                              "--new-key-env", "NEWK", "--new-raw"],
                             environment: ["NEWK": Self.newHex, "UNRELATED_SETTING": "kept"])
        #expect(backup.status == 0, "\(backup)")
        let seen = try String(contentsOfFile: dump, encoding: .utf8)
        #expect(!seen.contains("NEWK=") && !seen.localizedCaseInsensitiveContains(Self.newHex), "the command saw NEWK")
        #expect(seen.contains("UNRELATED_SETTING=kept"), "the command lost the rest of the environment")

        // A key command that never ends (a shell and its child, in a group of their own without a terminal).
        let marker = "31.\(Int.random(in: 100...999))"
        let process = Process()
        // Through a launcher that clears the signal mask the test runner's children inherit (as a shell's would be).
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", CLITests.crashable, folder.path, CLI.executable,
                             "check", db, "--raw", "--key-command", "sleep \(marker); cat '\(keyFile)'"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        func sleeping() throws -> Bool {
            // The sleep itself (its command line starts with it), not the tool or the shell naming it.
            try runProcess("/usr/bin/pgrep", ["-f", "^sleep \(marker)"], timeout: 10).status == 0
        }
        var started = false
        for _ in 0..<50 where !started {
            started = try sleeping()
            if !started { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(started, "the key command never started")
        kill(process.processIdentifier, SIGTERM)
        // Not waitUntilExit first: Foundation sees the end of the process only once every descendant holding its
        // descriptors has ended, so an orphaned command would make the wait last as long as the command.
        Thread.sleep(forTimeInterval: 1)
        let left = try sleeping()
        if left { _ = try? runProcess("/usr/bin/pkill", ["-f", "^sleep \(marker)"], timeout: 10) }
        process.waitUntilExit()
        #expect(!left, "the key command outlived the tool")
    }

    @Test("the prompt puts the terminal's echo back when SIGTERM or Ctrl-C ends the tool while it asks")
    func promptRestoresTerminal() throws {
        let folder = try TemporaryDirectory()
        let (db, _) = try setUp(folder)
        // A pseudo-terminal (Python's pty): wait for the prompt, signal the tool, read the terminal's echo flag.
        let script = """
            import os, pty, signal, sys, termios, time
            pid, fd = pty.fork()
            if pid == 0:
                # The test runner's threads block most signals, and children inherit the mask: a shell's would not.
                signal.pthread_sigmask(signal.SIG_SETMASK, [])
                os.execv(sys.argv[1], [sys.argv[1], "check", sys.argv[2]])
            seen = b""
            deadline = time.time() + 20
            while b"Key for" not in seen and time.time() < deadline:
                try:
                    seen += os.read(fd, 1024)
                except OSError:
                    break
            time.sleep(0.2)
            asking = "silent" if not termios.tcgetattr(fd)[3] & termios.ECHO else "echoing"
            os.kill(pid, getattr(signal, sys.argv[3]))
            _, status = os.waitpid(pid, 0)
            after = "echo" if termios.tcgetattr(fd)[3] & termios.ECHO else "noecho"
            print("prompted" if b"Key for" in seen else "no prompt", asking, after,
                  "signal" if os.WIFSIGNALED(status) and os.WTERMSIG(status) == getattr(signal, sys.argv[3]) else status)
            """
        for name in ["SIGTERM", "SIGINT"] {
            var environment = ProcessInfo.processInfo.environment
            environment["SWIFT_BACKTRACE"] = "enable=no"
            let result = try runProcess("/usr/bin/env", ["python3", "-c", script, CLI.executable, db, name],
                                        environment: environment, timeout: 60)
            // Silent while it asked (the control), echo back after the signal ended it, by that signal.
            #expect(result.stdout.contains("prompted silent echo signal"), "\(name): \(result)")
        }
    }

    @Test("--key-file: a file open to group or others is refused (64) with the chmod that fixes it")
    func keyFilePermissions() throws {
        let folder = try TemporaryDirectory()
        let (db, _) = try setUp(folder)
        let file = folder.file("db.key")
        try writeFile(file, Self.hex + "\n")
        #expect(chmod(file, 0o644) == 0)
        let open = try cli(["check", db, "--key-file", file, "--raw"])
        #expect(open.status == 64, "\(open)")
        #expect(open.stderr.contains("mode 0644") && open.stderr.contains("chmod go-rwx '\(file)'"), "\(open.stderr)")
        #expect(chmod(file, 0o600) == 0)
        let closed = try cli(["check", db, "--key-file", file, "--raw"])
        #expect(closed.status == 0 && closed.stdout == "ok\n", "\(closed)")
    }

    @Test("--key-credential reads $CREDENTIALS_DIRECTORY/NAME; without the variable, the unit line to add (64)")
    func keyCredential() throws {
        let folder = try TemporaryDirectory()
        let (db, credentials) = try setUp(folder)
        let read = try cli(["query", db, "SELECT a FROM t", "--format", "csv", "--key-credential", "db-key", "--raw"],
                           environment: ["CREDENTIALS_DIRECTORY": credentials])
        #expect(read.status == 0 && read.stdout == "a\n42\n", "\(read)")
        let unset = try cli(["check", db, "--key-credential", "db-key", "--raw"])
        #expect(unset.status == 64, "\(unset)")
        #expect(unset.stderr.contains("CREDENTIALS_DIRECTORY is not set")
                && unset.stderr.contains("LoadCredentialEncrypted=NAME:/etc/credstore.encrypted/NAME")
                && !unset.stderr.contains("db-key"), "\(unset)")
        let missing = try cli(["check", db, "--key-credential", "tls-key", "--raw"],
                              environment: ["CREDENTIALS_DIRECTORY": credentials])
        #expect(missing.status == 64 && missing.stderr.contains("(it has: db-key, db-key-new)"), "\(missing)")
        let both = try cli(["check", db, "--key-credential", "db-key", "--key-env", "K"], environment: ["K": Self.hex])
        #expect(both.status == 64 && both.stderr.contains("one way only"), "\(both)")
    }

    @Test("rekey with --key-credential and --new-key-credential, as a rotation in a unit would run it")
    func rotation() throws {
        let folder = try TemporaryDirectory()
        let (db, credentials) = try setUp(folder)
        let environment = ["CREDENTIALS_DIRECTORY": credentials]
        let rekey = try cli(["rekey", db, "--key-credential", "db-key", "--raw", "--new-key-credential", "db-key-new",
                             "--new-raw"], environment: environment)
        #expect(rekey.status == 0, "\(rekey)")
        let old = try cli(["check", db, "--key-credential", "db-key", "--raw"], environment: environment)
        #expect(old.status == 3, "\(old)")
        let new = try cli(["check", db, "--key-credential", "db-key-new", "--raw"], environment: environment)
        #expect(new.status == 0, "\(new)")
    }

    @Test("--key-command: the output is the key; a failing command's stderr shows and it exits 64; a slow one is killed")
    func keyCommand() throws {
        let folder = try TemporaryDirectory()
        let (db, credentials) = try setUp(folder)
        let command = "cat '\(credentials)/db-key'"
        let read = try cli(["query", db, "SELECT a FROM t", "--format", "csv", "--key-command", command, "--raw"])
        #expect(read.status == 0 && read.stdout == "a\n42\n", "\(read)")
        // It printed the key and then failed: refused, and the key is not printed by anyone.
        let failing = try cli(["check", db, "--key-command", "\(command); echo 'vault: token expired' >&2; exit 2",
                               "--raw"])
        #expect(failing.status == 64, "\(failing)")
        #expect(failing.stderr.contains("vault: token expired\n"), "the command's stderr is passed through: \(failing)")
        #expect(failing.stderr.contains("exited with status 2"), "\(failing)")
        let slow = try cli(["check", db, "--key-command", "sleep 30", "--key-command-timeout", "1", "--raw"])
        #expect(slow.status == 64 && slow.stderr.contains("did not finish within 1000 ms"), "\(slow)")
        let zero = try cli(["check", db, "--key-command", command, "--key-command-timeout", "0", "--raw"])
        #expect(zero.status == 64, "\(zero)")
    }

    @Test("backup: same key or --new-key-credential; OUT not replaced without --force; nothing in plaintext")
    func backup() throws {
        let folder = try TemporaryDirectory()
        let (db, credentials) = try setUp(folder)
        let environment = ["CREDENTIALS_DIRECTORY": credentials]
        let copy = folder.file("copy.db")
        let first = try cli(["backup", db, copy, "--key-credential", "db-key", "--raw"], environment: environment)
        #expect(first.status == 0, "\(first)")
        let read = try cli(["query", copy, "SELECT a FROM t", "--format", "csv", "--key-credential", "db-key", "--raw"],
                           environment: environment)
        #expect(read.stdout == "a\n42\n", "\(read)")
        let again = try cli(["backup", db, copy, "--key-credential", "db-key", "--raw", "--new-key-credential",
                             "db-key-new", "--new-raw"], environment: environment)
        #expect(again.status == 1 && again.stderr.contains("already exists: pass --force"), "\(again)")
        let forced = try cli(["backup", db, copy, "--force", "--key-credential", "db-key", "--raw",
                              "--new-key-credential", "db-key-new", "--new-raw"], environment: environment)
        #expect(forced.status == 0, "\(forced)")
        let newKey = try cli(["check", copy, "--key-credential", "db-key-new", "--raw"], environment: environment)
        #expect(newKey.status == 0, "\(newKey)")
        let oldKey = try cli(["check", copy, "--key-credential", "db-key", "--raw"], environment: environment)
        #expect(oldKey.status == 3, "\(oldKey)")
        let itself = try cli(["backup", db, db, "--force", "--key-credential", "db-key", "--raw"], environment: environment)
        #expect(itself.status == 64 && itself.stderr.contains("is the database itself"), "\(itself)")
        let names = try folder.names()
        #expect(names.allSatisfy { !$0.contains(".sqlcipherkit-") }, "\(names)")
        #expect(!data(try contents(of: copy), contains: "SQLite format 3"))
    }
}

/// Whether `haystack` holds the UTF-8 of `needle`.
func data(_ haystack: Data, contains needle: String) -> Bool {
    haystack.range(of: Data(needle.utf8)) != nil
}
