import Foundation
import ProcessTestSupport
import SQLCipherKit
import Testing

/// Issue 44's reproductions: files, signals and messages as an operator (and a local attacker) meets them. Each
/// test failed on the code before issue 44, and proves in the same run that it can see what it looks for.
@Suite("sqlcipherkit as an operator meets it (issue 44)", .serialized,
       .hangGuard(.minutes(10), hang: "a command that ignores a signal, or blocks on a planted FIFO"))
struct OperatorTests {
    static let passphrase = CLITests.passphrase
    static let otherPassphrase = CLITests.otherPassphrase
    let environment = ["K": OperatorTests.passphrase, "N": OperatorTests.otherPassphrase]

    /// Runs the CLI, checking that no key was printed.
    func cli(_ arguments: [String], environment extra: [String: String] = [:]) throws -> ProcessResult {
        let result = try CLI.run(arguments, environment: environment.merging(extra) { $1 }, timeout: 300)
        #expect(CLITests.leakedSecrets(in: result).isEmpty, "a key was printed: \(arguments)")
        return result
    }

    /// A database of `rows` rows of 1000 random bytes (and the marker), keyed with K.
    func makeDatabase(_ path: String, rows: Int) throws {
        let sql = "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, b BLOB); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
            + "SELECT x + 1 FROM c WHERE x < \(rows)) INSERT INTO t(v, b) SELECT '\(CLITests.marker)', randomblob(1000) FROM c"
        let made = try cli(["query", path, sql, "--create", "--key-env", "K"])
        #expect(made.status == 0, "\(made)")
    }

    /// Compiles Tests/Support/attacker/swap_attacker.c into `folder`.
    static func attacker(in folder: TemporaryDirectory) throws -> String {
        let binary = folder.file("swap_attacker")
        let compiled = try runProcess("/usr/bin/env", ["cc", "-O2", "-o", binary,
                                                       Repository.path("Tests/Support/attacker/swap_attacker.c")],
                                      mergingStandardError: true, timeout: 120)
        try #require(compiled.status == 0, "cc swap_attacker.c: \(compiled)")
        return binary
    }

    /// Starts `attacker` on `folder` for `seconds` as uid 65534 (as in the issue), and waits until it watches.
    static func startAttacker(_ attacker: String, on folder: String, seconds: Int) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", attacker, folder, "\(seconds)"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // "ready\n" alone: nothing else is printed before the first swap.
        var ready = Data()
        while ready.last != UInt8(ascii: "\n") {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty { break }
            ready += byte
        }
        try #require(String(decoding: ready, as: UTF8.self) == "ready\n", "the attacker did not start")
        return (process, output)
    }

    /// The regular files under `folder` that another user owns and that hold `marker`.
    static func foreignFilesHolding(_ marker: String, under folder: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
        var found: [String] = []
        while let name = walker.nextObject() as? String {
            let path = folder + "/" + name
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid != geteuid(),
                  let bytes = FileManager.default.contents(atPath: path) else { continue }
            if data(bytes, contains: marker) { found.append(name) }
        }
        return found
    }

    @Test("the swap race: another user who can write to OUT's folder never gets OUT or a byte of the plaintext")
    func swapRace() throws {
        try #require(geteuid() == 0, "the attacker runs as another user (uid 65534), which needs root (CI runs as root)")
        let scratch = try TemporaryDirectory()
        let attacker = try Self.attacker(in: scratch)
        chmod(scratch.path, 0o755)
        let source = scratch.file("source.db")
        try makeDatabase(source, rows: 200)
        // The output folder: writable by everyone, not sticky (the issue's group-writable folder).
        let folder = try TemporaryDirectory(in: "/tmp")
        #expect(chmod(folder.path, 0o777) == 0)
        let (process, output) = try Self.startAttacker(attacker, on: folder.path, seconds: 60)
        defer { if process.isRunning { process.terminate() } }

        // Control: a writer that reopens its private folder by name (what SQLite did before the local change
        // proc-fd-path-kept) loses to this attacker: its plaintext lands in the attacker's file.
        var controlLost = false
        for round in 0..<20 where !controlLost {
            let name = folder.file("control-\(round).db.sqlcipherkit-CTRL\(round)")
            #expect(mkdir(name, 0o700) == 0)
            var status = stat()
            for _ in 0..<200 where lstat(name, &status) == 0 && status.st_uid == geteuid() { usleep(5000) }
            let descriptor = open(name + "/database", O_WRONLY | O_CREAT, 0o600)
            if descriptor >= 0 {
                _ = CLITests.marker.withCString { write(descriptor, $0, strlen($0)) }
                close(descriptor)
            }
            controlLost = !Self.foreignFilesHolding(CLITests.marker, under: folder.path).isEmpty
        }
        #expect(controlLost, "control: the attacker never captured a by-name writer's plaintext, so this test could not see the race")
        // Only the real runs' captures count from here on.
        for name in try folder.names() where name.hasPrefix("control-") || name.hasPrefix("stolen-") {
            _ = try? FileManager.default.removeItem(atPath: folder.file(name))
        }

        var completed = 0, refused = 0
        for round in 0..<30 {
            let out = folder.file("out-\(round).db")
            let result = try cli(["decrypt", source, out, "--key-env", "K"])
            var status = stat()
            if result.status == 0 {
                completed += 1
                #expect(lstat(out, &status) == 0 && status.st_uid == geteuid() && status.st_mode & 0o077 == 0,
                        "round \(round): OUT is not this user's 0600 file (uid \(status.st_uid), mode \(String(status.st_mode & 0o777, radix: 8)))")
                #expect(data(try contents(of: out), contains: CLITests.marker), "round \(round): OUT is not the copy")
            } else {
                refused += 1
                #expect(result.stderr.contains("replaced") || result.stderr.contains("someone else"),
                        "round \(round): \(result)")
                #expect(lstat(out, &status) != 0 || status.st_uid == geteuid(), "round \(round): OUT is the attacker's")
            }
        }
        for round in 0..<5 {
            let out = folder.file("backup-\(round).db")
            let result = try cli(["backup", source, out, "--key-env", "K"])
            var status = stat()
            if result.status == 0 {
                #expect(lstat(out, &status) == 0 && status.st_uid == geteuid() && status.st_size > 0, "backup \(round)")
                let opened = try cli(["check", out, "--key-env", "K"])
                #expect(opened.status == 0, "backup \(round): \(opened)")
            }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        // The swaps of the real runs' private folders (the control's were before these lines).
        let swaps = report.split(separator: "\n").filter { $0.hasPrefix("folder out-") || $0.hasPrefix("folder backup-") }
        let captured = Self.foreignFilesHolding(CLITests.marker, under: folder.path)
        print("OPERATOR swap race: \(completed) decrypts completed, \(refused) refused; the attacker swapped "
            + "\(swaps.count) private folders of the real runs; plaintext in the attacker's files: \(captured)")
        #expect(swaps.count >= 10, "the attacker swapped only \(swaps.count) of the runs' private folders: the race was not run")
        #expect(captured.isEmpty, "the attacker holds plaintext: \(captured)")
        #expect(completed > 0, "no decrypt completed under attack")
    }

    @Test("a key file or credential on procfs, or behind a link someone else can replace, is refused")
    func procfsAndLinks() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("k.db")
        try makeDatabase(db, rows: 3)
        let open = folder.file("open"), closed = folder.file("closed")
        for (path, mode) in [(open, mode_t(0o777)), (closed, mode_t(0o700))] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            #expect(chmod(path, mode) == 0)
        }
        let key = folder.file("key")
        try writeFile(key, Self.passphrase)
        #expect(chmod(key, 0o600) == 0)
        #expect(symlink("/proc/self/personality", open + "/personality") == 0)
        #expect(symlink("/proc/self/personality", closed + "/personality") == 0)
        #expect(symlink(key, open + "/key") == 0)
        #expect(symlink(key, closed + "/key") == 0)
        // Control: the same link to the real key, in a folder only this user can write, opens the database.
        let allowed = try cli(["query", db, "SELECT count(*) FROM t", "--key-file", closed + "/key"])
        #expect(allowed.status == 0, "control: \(allowed)")
        let procfs = try cli(["rekey", db, "--key-env", "K", "--new-key-file", closed + "/personality", "--new-raw"])
        #expect(procfs.status == 64 && procfs.stderr.contains("procfs"), "\(procfs)")
        let foreignLink = try cli(["query", db, "SELECT 1", "--key-file", open + "/key"])
        #expect(foreignLink.status == 64 && foreignLink.stderr.contains("symbolic link"), "\(foreignLink)")
        let credential = try cli(["query", db, "SELECT 1", "--key-credential", "personality", "--raw"],
                                 environment: ["CREDENTIALS_DIRECTORY": "/proc/self"])
        #expect(credential.status == 64 && credential.stderr.contains("procfs"), "\(credential)")
        // The database still opens with its own key: the refused rekey changed nothing.
        let still = try cli(["query", db, "SELECT count(*) FROM t", "--key-env", "K"])
        #expect(still.status == 0, "\(still)")
    }

    @Test("a FIFO planted at a leftover's name never blocks a command, and is left alone")
    func plantedFIFO() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("f.db"), out = folder.file("out.db")
        try makeDatabase(db, rows: 3)
        let fifos = [out + ".sqlcipherkit-ABCDEF", out + ".sqlcipherkit-DEADBEEF.tmp", db + ".sqlcipherkit-ABCDEF"]
        for fifo in fifos { #expect(mkfifo(fifo, 0o600) == 0) }
        // Before issue 44 this blocked forever in open(2); the time limit stands for that hang.
        let result = try CLI.run(["decrypt", db, out, "--key-env", "K"], environment: environment, timeout: 60)
        #expect(result.status == 0, "\(result)")
        let info = try CLI.run(["info", db, "--key-env", "K"], environment: environment, timeout: 60)
        #expect(info.status == 0, "\(info)")
        for fifo in fifos {
            var status = stat()
            #expect(lstat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "\(fifo) was touched")
        }
    }

    @Test("a killed run's private folder is removed by the next command on that folder; a live run's stays")
    func leftoversRemovedByAnyCommand() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("l.db")
        try makeDatabase(db, rows: 3)
        // What SIGKILL during `decrypt x.db other.db` leaves: a private folder holding the plaintext copy.
        let leftover = folder.file("other.db.sqlcipherkit-Ab12Cd")
        try FileManager.default.createDirectory(atPath: leftover, withIntermediateDirectories: false)
        try writeFile(leftover + "/.sqlcipherkit-private", "")
        try writeFile(leftover + "/database", "SQLite format 3\0 leftover plaintext")
        try writeFile(leftover + "/database-journal", "journal")
        let live = folder.file("third.db.sqlcipherkit-Zz99Yy")
        try FileManager.default.createDirectory(atPath: live, withIntermediateDirectories: false)
        try writeFile(live + "/.sqlcipherkit-private", "")
        try writeFile(live + "/database", "in progress")
        let held = open(live, O_RDONLY | O_DIRECTORY)
        #expect(held >= 0 && flock(held, LOCK_EX | LOCK_NB) == 0)
        defer { close(held) }
        // Any command on that folder: here `info`, which writes nothing itself.
        let result = try cli(["info", db, "--key-env", "K"])
        #expect(result.status == 0, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: leftover), "the leftover is still there")
        #expect(FileManager.default.fileExists(atPath: live + "/database"), "a live run's folder was removed")
    }

    /// Starts the CLI with `arguments` and returns it, with its standard error collected. Through a small
    /// Python step that gives the interrupting signals their default disposition and unblocks them, as an
    /// operator's shell would: a child inherits ignored and blocked signals (a background job of a script ignores
    /// SIGINT and SIGQUIT), and the CLI rightly leaves an ignored signal ignored (`nohup`).
    func start(_ arguments: [String]) throws -> (Process, PipeCollector) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import os, signal, sys
            for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
                signal.signal(number, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            os.execv(sys.argv[1], sys.argv[1:])
            """, CLI.executable] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return (process, PipeCollector(errors.fileHandleForReading))
    }

    /// Waits (at most 60 s) until `condition` holds while `process` runs; whether it held with the process still
    /// running.
    func wait(for process: Process, until condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning, Date() < deadline, try !condition() { usleep(2000) }
        let held = try condition()
        return process.isRunning && held
    }

    @Test("SIGINT, SIGTERM, SIGHUP and SIGQUIT stop a decrypt: status 130, no temporary file, the source as it was")
    func signalledDecrypt() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("large.db")
        try makeDatabase(db, rows: 40_000)
        let before = try contents(of: db)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
            let (process, errors) = try start(["decrypt", db, folder.file("plain.db"), "--key-env", "K"])
            let midway = try wait(for: process) { try folder.names().contains { $0.contains(".sqlcipherkit-") } }
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            let message = String(decoding: errors.wait(), as: UTF8.self)
            #expect(midway, "signal \(signal): the decrypt was not running mid-way; make the database larger")
            #expect(process.terminationReason == .exit && process.terminationStatus == 130,
                    "signal \(signal): \(process.terminationReason.rawValue) \(process.terminationStatus) \(message)")
            #expect(message.contains("stopped by SIG") && message.contains("was not written"), "\(message)")
            let left = try folder.names()
            #expect(left == ["large.db"], "signal \(signal): left \(left)")
        }
        #expect(try contents(of: db) == before, "the source changed")
    }

    @Test("SIGTERM stops a rekey, which keeps the old key; after SIGKILL, check names the hot journal")
    func signalledRekey() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("rekey.db")
        try makeDatabase(db, rows: 40_000)
        let (process, errors) = try start(["rekey", db, "--key-env", "K", "--new-key-env", "N"])
        // The rekey writes its journal (the old pages) as it goes: it is mid-way once the journal grows.
        let midway = wait(for: process) {
            var status = stat()
            return stat(db + "-journal", &status) == 0 && status.st_size > 1 << 20
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let message = String(decoding: errors.wait(), as: UTF8.self)
        #expect(midway, "the rekey was not running mid-way; make the database larger")
        #expect(process.terminationStatus == 130 && message.contains("keeps its OLD key"), "\(message)")
        let old = try cli(["query", db, "SELECT count(*) FROM t", "--key-env", "K"])
        #expect(old.status == 0 && old.stdout.contains("40000"), "\(old)")
        let new = try cli(["query", db, "SELECT count(*) FROM t", "--key-env", "N"])
        #expect(new.status == 3, "the new key opens the file: \(new)")

        // SIGKILL cannot be caught: a hot journal stays. check and info say so, and how to roll it back.
        #expect(try killRekeyOnceJournalIsHot(db), "the second rekey was not running mid-way")
        for command in ["check", "info"] {
            let result = try cli([command, db, "--key-env", "K"])
            #expect(result.status != 0 && result.stderr.contains("hot journal") && result.stderr.contains("sqlcipherkit query"),
                    "\(command): \(result)")
            #expect(!result.stderr.contains("permissions"), "\(command): \(result)")
        }
        let recovered = try cli(["query", db, "PRAGMA quick_check", "--key-env", "K"])
        #expect(recovered.status == 0 && recovered.stdout.contains("ok"), "\(recovered)")
        let checked = try cli(["check", db, "--key-env", "K"])
        #expect(checked.status == 0, "\(checked)")
    }

    @Test("a rekey on a full disk says the disk is full, and keeps the old key")
    func rekeyOnFullDisk() throws {
        try #require(geteuid() == 0, "this test mounts a small tmpfs, which needs root (CI runs as root)")
        let folder = try TemporaryDirectory()
        let mount = folder.file("small")
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: false)
        let mounted = try runProcess("/bin/mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", mount],
                                     mergingStandardError: true, timeout: 60)
        try #require(mounted.status == 0, "\(mounted)")
        defer { _ = try? runProcess("/bin/umount", [mount], timeout: 60) }
        let db = mount + "/s.db"
        try makeDatabase(db, rows: 1700)
        let result = try cli(["rekey", db, "--key-env", "K", "--new-key-env", "N"])
        #expect(result.status == 1 && result.stderr.contains("the disk is full") && result.stderr.contains("old key")
                && !result.stderr.contains("locked"), "\(result)")
        let old = try cli(["query", db, "SELECT count(*) FROM t", "--key-env", "K"])
        #expect(old.status == 0 && old.stdout.contains("1700"), "\(old)")
    }

    @Test("messages: no key-source value echoed, no key length, keys refused on the command line, plaintext named")
    func messages() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("m.db"), plain = folder.file("plain.db")
        try makeDatabase(db, rows: 3)
        let decrypted = try cli(["decrypt", db, plain, "--key-env", "K"])
        #expect(decrypted.status == 0, "\(decrypted)")
        let secret = "hunter2-\(UUID().uuidString)"
        for arguments in [["--key", secret], ["--password", secret], ["-k", secret], ["--key=\(secret)"]] {
            let result = try cli(["query", db, "SELECT 1"] + arguments)
            #expect(result.status == 64 && result.stderr.contains("keys never go on the command line")
                    && result.stderr.contains("--key-env NAME") && !result.output.contains(secret), "\(arguments): \(result)")
        }
        let newKey = try cli(["rekey", db, "--key-env", "K", "--new-key", secret])
        #expect(newKey.status == 64 && newKey.stderr.contains("--new-key-env NAME") && !newKey.output.contains(secret),
                "\(newKey)")
        for option in ["--key-env", "--key-file", "--key-credential"] {
            let result = try cli(["query", db, "SELECT 1", option, secret],
                                 environment: ["CREDENTIALS_DIRECTORY": folder.path])
            #expect(result.status == 64 && !result.output.contains(secret), "\(option) echoed its value: \(result)")
        }
        // A 28-byte passphrase read as hex: the message must not tell its length.
        let raw = try cli(["query", db, "SELECT 1", "--key-env", "P", "--raw"],
                          environment: ["P": "abcdefghijklmnopqrstuvwxyz12"])
        #expect(raw.status == 64 && !raw.stderr.contains("28") && raw.stderr.contains("leave out --raw"), "\(raw)")
        // Every command's result lines fail it when they cannot be written (before: exit 0, nothing written).
        for command in [["selfcheck"], ["check", db, "--key-env", "K"], ["info", db, "--key-env", "K"]] {
            let full = try runProcess("/bin/sh", ["-c", "exec \"$0\" \"$@\" > /dev/full", CLI.executable] + command,
                                      environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                      timeout: 120)
            #expect(full.status != 0 && full.stderr.contains("No space left on device"), "\(command): \(full)")
        }
        for command in [["query", plain, "SELECT 1"], ["check", plain]] {
            let result = try cli(command + ["--key-env", "K"])
            #expect(result.status == 3 && result.stderr.contains("plaintext SQLite database")
                    && result.stderr.contains("sqlcipherkit encrypt"), "\(command): \(result)")
        }
    }

    @Test("every help example is one pasteable command: no line wrapped in the middle")
    func pasteableHelpExamples() throws {
        for command in ["selfcheck", "check", "encrypt", "decrypt", "rekey", "migrate", "backup", "info", "query"] {
            let help = try cli([command, "--help"], environment: ["COLUMNS": "80"])
            let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let start = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix("Example") },
                                     "\(command): no example")
            let example = lines[(start + 1)...].prefix { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            #expect(!example.isEmpty, "\(command): an empty example")
            var continued = false
            for line in example {
                let text = line.trimmingCharacters(in: .whitespaces)
                #expect(continued || text.hasPrefix("sqlcipherkit ") || text.contains(" sqlcipherkit "),
                        "\(command): this line of the example is a wrapped fragment, not a command: '\(text)'")
                continued = text.hasSuffix("\\")
            }
        }
    }

    // Issue 44's review (an attacker working against the first fixes): each test failed on the code it reviewed.

    @Test("cleanup never empties a folder the library did not make, even one renamed to look like a leftover")
    func cleanupSparesRenamedFolders() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("c.db")
        try makeDatabase(db, rows: 3)
        // The user's own folder, renamed by someone who can write to the parent folder (but not delete in it).
        let renamed = folder.file("notes.sqlcipherkit-Ab12Cd")
        try FileManager.default.createDirectory(atPath: renamed, withIntermediateDirectories: false)
        #expect(chmod(renamed, 0o700) == 0)
        try writeFile(renamed + "/notes.txt", "the user's notes")
        try writeFile(renamed + "/database", "a file of the user's that happens to have this name")
        // An older run's file with journals beside it, one of them a link to a file of the user's.
        let victim = folder.file("victim.txt")
        try writeFile(victim, "keep me")
        let old = folder.file("out.db.sqlcipherkit-DEADBEEF.tmp")
        try writeFile(old, "leftover")
        #expect(symlink(victim, old + "-journal") == 0)
        // Control: a real leftover (a private folder with the library's marker) is removed by the same run.
        let leftover = folder.file("other.db.sqlcipherkit-Zz99Yy")
        try FileManager.default.createDirectory(atPath: leftover, withIntermediateDirectories: false)
        try writeFile(leftover + "/.sqlcipherkit-private", "")
        try writeFile(leftover + "/database", "SQLite format 3\0 leftover plaintext")
        let result = try cli(["info", db, "--key-env", "K"])
        #expect(result.status == 0, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: leftover), "control: the real leftover is still there")
        #expect(FileManager.default.fileExists(atPath: renamed + "/notes.txt")
                && FileManager.default.fileExists(atPath: renamed + "/database"), "the renamed folder was emptied")
        #expect(!FileManager.default.fileExists(atPath: old), "the older run's file is still there")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me", "a linked file was removed")
    }

    /// A database and, beside it, the hot journal a SIGKILL mid-rekey leaves (the old pages, as ciphertext).
    func databaseWithHotJournal(in folder: TemporaryDirectory) throws -> String {
        let db = folder.file("j.db")
        try makeDatabase(db, rows: 40_000)
        try #require(try killRekeyOnceJournalIsHot(db), "the rekey was not killed mid-way with its journal hot")
        return db
    }

    /// Starts a rekey of `db` (K to N) and SIGKILLs it once its journal is hot; whether it was still running then.
    /// Hot only once SQLite has synced the journal's header (its magic) to write pages into the file: before that,
    /// a journal whose header is zero is no journal, and check rightly says ok.
    func killRekeyOnceJournalIsHot(_ db: String) throws -> Bool {
        let (killed, _) = try start(["rekey", db, "--key-env", "K", "--new-key-env", "N"])
        let hot = wait(for: killed) {
            let header = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: db + "-journal")).readData(ofLength: 8))
                ?? Data()
            return header == Data([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7])
        }
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()
        return hot
    }

    @Test("a journal beside the database that another user owns is never played back; the database's own is")
    func foreignJournalRefused() throws {
        try #require(geteuid() == 0, "the journal is given to another user (uid 65534), which needs root (CI runs as root)")
        let folder = try TemporaryDirectory()
        let db = try databaseWithHotJournal(in: folder)
        let before = try contents(of: db)
        // What an attacker plants: the same bytes (SQLCipher's journal is ciphertext: no key is needed to make one),
        // owned by them.
        #expect(chown(db + "-journal", 65534, 65534) == 0)
        let refused = try cli(["query", db, "SELECT count(*) FROM t", "--key-env", "K"])
        #expect(refused.status != 0 && refused.stderr.contains("belongs to uid 65534"), "\(refused)")
        #expect(try contents(of: db) == before, "the foreign journal was played back")
        // Control: the same journal, the database owner's again, rolls back and the database opens.
        #expect(chown(db + "-journal", 0, 0) == 0)
        let recovered = try cli(["query", db, "SELECT count(*) FROM t", "--key-env", "K"])
        #expect(recovered.status == 0 && recovered.stdout.contains("40000"), "control: \(recovered)")
        #expect(try contents(of: db) != before, "control: the database's own journal was not played back")
    }

    @Test("a FIFO planted at the database's journal or log blocks no command")
    func fifoJournal() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("q.db")
        try makeDatabase(db, rows: 3)
        for suffix in ["-journal", "-wal"] {
            #expect(mkfifo(db + suffix, 0o600) == 0)
            // Before: every command hung in open(2) (the time limit stands for that hang).
            for command in [["info", db], ["check", db], ["query", db, "SELECT count(*) FROM t"]] {
                let result = try CLI.run(command + ["--key-env", "K"], environment: environment, timeout: 60)
                #expect(result.status != 0 && result.stderr.contains("not a regular file"), "\(suffix) \(command): \(result)")
            }
            unlink(db + suffix)
        }
        let fine = try cli(["query", db, "SELECT count(*) FROM t", "--key-env", "K"])
        #expect(fine.status == 0, "\(fine)")
    }

    @Test("without /proc, every command stops with a message instead of printing the help and exiting 0")
    func withoutProc() throws {
        try #require(geteuid() == 0, "unmounting /proc in a mount namespace of its own needs root (CI runs as root)")
        let result = try runProcess("/usr/bin/unshare", ["-m", "/bin/sh", "-c", "umount -l /proc && exec \"$0\" \"$@\"",
                                                         CLI.executable, "check", "/nonexistent", "--key-env", "K"],
                                    environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                    timeout: 60)
        #expect(result.status == 1 && result.stderr.contains("/proc is not mounted"), "\(result)")
    }

    @Test("argument errors and key-file errors never repeat what may be a key")
    func noValueRepeated() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("n.db")
        try makeDatabase(db, rows: 3)
        let secret = "Zq9" + String(repeating: "s3cr3t", count: 50)
        let existing = folder.file("exists")
        try writeFile(existing, "x")
        for arguments in [["-k\(secret)"], ["--raw", secret], ["--key-stdin", secret], ["--key-file", secret],
                          ["--key-file", existing + "/" + secret], ["--key-credential", secret]] {
            let result = try cli(["query", db, "SELECT 1"] + arguments, environment: ["CREDENTIALS_DIRECTORY": folder.path])
            #expect(result.status != 0 && !result.output.contains("s3cr3t"), "\(arguments.first ?? ""): \(result)")
        }
    }

    @Test("odd output and database paths: '.', a trailing '/', a name near NAME_MAX")
    func oddPaths() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("o.db")
        try makeDatabase(db, rows: 3)
        for command in [["info", "."], ["check", "."], ["rekey", ".", "--new-key-env", "N"], ["decrypt", db, ".", "--force"],
                        ["decrypt", db, folder.file("sub/"), "--force"]] {
            let result = try cli(command + ["--key-env", "K"])
            // Before: SIGILL (132) in Foundation for '.', and 'sub/' wrote a file named 'sub'.
            #expect(result.status != 0 && result.status < 128, "\(command): \(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file("sub")), "'sub/' wrote a file named sub")
        let long = folder.file(String(repeating: "n", count: 240) + ".db")
        let written = try cli(["decrypt", db, long, "--key-env", "K"])
        #expect(written.status == 0 && FileManager.default.fileExists(atPath: long), "\(written)")
    }
}
