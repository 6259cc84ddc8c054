import Foundation
import ProcessTestSupport
import SQLCipherKit
import Testing

/// The `sqlcipherkit` contract, by spawning the built executable: commands, exit codes, key sources, no key
/// ever printed.
@Suite("sqlcipherkit command-line tool",
       .hangGuard(.minutes(5), hang: "a command that waits forever (for a key on its terminal, a lock)"))
struct CLITests {
    /// Passphrases and raw keys used below; none may ever appear in any output.
    static let passphrase = "cli-passphrase-\(UUID().uuidString)"
    static let otherPassphrase = "cli-other-\(UUID().uuidString)"
    static let rawHex = String(repeating: "3a7f", count: 16)             // 64 digits
    /// 96 digits: a raw key (32 bytes 0x10, 0x11, …) and then a salt (16 bytes 0xe0, 0xe1, …), each unlike the
    /// other and unlike any repetition, so a swap or a misplaced slice shows.
    static let saltedKeyHex = Hex.string((0..<32).map { UInt8(0x10 + $0) })
    static let saltHex = Hex.string((0..<16).map { UInt8(0xe0 + $0) })
    static let rawSaltHex = saltedKeyHex + saltHex
    static let secrets = [passphrase, otherPassphrase, rawHex, rawSaltHex, saltedKeyHex]

    /// Runs the CLI and checks that no secret appears, in any letter case, in what it printed.
    func cli(_ arguments: [String], environment: [String: String] = [:], input: Data = Data()) throws -> ProcessResult {
        let result = try CLI.run(arguments, environment: environment, input: input)
        #expect(Self.leakedSecrets(in: result).isEmpty, "a key was printed: \(arguments)")
        return result
    }

    /// The indices in ``secrets`` of those that `result` printed, compared without regard to case (hex digits
    /// printed as upper case are the same key).
    static func leakedSecrets(in result: ProcessResult) -> [Int] {
        let printed = (result.stdout + "\n" + result.stderr).lowercased()
        return secrets.indices.filter { printed.contains(secrets[$0].lowercased()) }
    }

    @Test("control: the key-leak scan finds a key printed in upper case")
    func leakScanIgnoresCase() {
        let printed = ProcessResult(status: 0, stdout: "key: \(Self.rawSaltHex.uppercased())\n", stderr: "")
        #expect(Self.leakedSecrets(in: printed).contains(Self.secrets.firstIndex(of: Self.rawSaltHex) ?? -1))
        let passphrase = ProcessResult(status: 0, stdout: "", stderr: Self.passphrase.uppercased())
        #expect(Self.leakedSecrets(in: passphrase) == [0])
    }

    /// In every row ``makeDatabase(_:rows:)`` writes: an encrypted file must not hold it anywhere.
    static let marker = "cli-row-marker-\(UUID().uuidString)"

    /// Creates an encrypted database with a table `t` of `rows` rows (each holding ``marker``), keyed with
    /// `passphrase`.
    func makeDatabase(_ path: String, rows: Int = 3) throws {
        let sql = "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
            + "SELECT x + 1 FROM c WHERE x < \(rows)) INSERT INTO t(v) SELECT '\(Self.marker) ' || x || ' ' || hex(randomblob(64)) FROM c"
        let result = try cli(["query", path, sql, "--create", "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(result.status == 0, "\(result)")
    }

    @Test("issue 43's reproduction through query: VACUUM INTO under SQLCipher 3's settings writes a copy that opens")
    func vacuumIntoUnderEarlierSettings() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("c3.db"), copy = folder.file("c3v.db")
        let environment = ["K": Self.passphrase]
        let created = try cli(["query", "--compat", "3", db, "CREATE TABLE t(x); WITH RECURSIVE n(i) AS (SELECT 1 UNION "
                                + "ALL SELECT i + 1 FROM n WHERE i < 4000) INSERT INTO t SELECT '\(Self.marker)' || "
                                + "randomblob(300) FROM n", "--create", "--key-env", "K"], environment: environment)
        #expect(created.status == 0, "\(created)")
        // Before issue 43: killed by SIGSEGV (the codec wrote 4096 bytes into each 1024-byte page of the copy).
        let vacuumed = try cli(["query", "--compat", "3", db, "PRAGMA cache_size = 3; VACUUM INTO '\(copy)'",
                                "--key-env", "K"], environment: environment)
        #expect(vacuumed.status == 0, "\(vacuumed)")
        let checked = try cli(["check", "--compat", "3", copy, "--key-env", "K"], environment: environment)
        #expect(checked.status == 0, "the copy does not open with the key and settings: \(checked)")
        #expect(!data(try contents(of: copy), contains: Self.marker), "the copy holds the marker in plaintext")
        // A pool reader's way out of its transaction, and the process-wide pragmas: refused (usage error, 64).
        for sql in ["PRAGMA hard_heap_limit = 300000", "PRAGMA temp_store_directory = '\(folder.path)'"] {
            let refused = try cli(["query", "--compat", "3", db, sql, "--key-env", "K"], environment: environment)
            #expect(refused.status != 0 && refused.stderr.contains("refused"), "\(sql): \(refused)")
        }
    }

    @Test("issue 33's reproductions through query: no plaintext file, no key from SQL text, the database opens")
    func smuggledSQLThroughQuery() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("q.db")
        try makeDatabase(db)
        let scripts = [
            "CREATE TABLE zz(x); CREATE TEMP TABLE zz(x); PRAGMA writable_schema=ON; "
                + "UPDATE temp.sqlite_master SET sql='ATTACH ''\(folder.path)/plain.db'' AS p KEY ''''' WHERE name='zz'; "
                + "CREATE TABLE d(a, b DEFAULT (sqlcipher_export('main','temp'))); INSERT INTO d(a) VALUES(1); "
                + "CREATE TABLE p.leak AS SELECT * FROM t",
            "CREATE TEMP TABLE yy(x); PRAGMA writable_schema=ON; UPDATE temp.sqlite_master SET "
                + "sql='ATTACH ''\(folder.path)/keyed.db'' AS k KEY ''some text''' WHERE name='yy'; "
                + "CREATE TABLE e(a, b DEFAULT (sqlcipher_export('main','temp'))); INSERT INTO e(a) VALUES(1)",
            "PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql='CREATE TABLE t(' WHERE name='t'",
        ]
        for script in scripts {
            // The whole script in one run (as the issue ran it), then each statement in a run of its own: a refusal
            // must not hide what the next statement would do.
            for statement in [script] + script.split(separator: ";").map(String.init) {
                _ = try cli(["query", db, statement, "--key-env", "K"], environment: ["K": Self.passphrase])
            }
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0 != "q.db" }
        #expect(files.isEmpty, "\(files)")
        let check = try cli(["check", db, "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(check.status == 0, "\(check)")
        let read = try cli(["query", db, "SELECT count(*) FROM t", "--key-env", "K", "--format", "csv"],
                           environment: ["K": Self.passphrase])
        #expect(read.status == 0 && read.stdout.contains("3"), "\(read)")
    }

    @Test("a key written into SQL text that fails (an earlier statement, an unknown schema, an unresolved KEY, a percent-escaped URI, no parse) is printed by neither query nor shell; control: a failure without a key word is printed with its SQL")
    func failedKeyTextIsNotPrinted() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("k.db")
        try makeDatabase(db)
        let secret = "CLI_SECRET_7f3a"
        let statements = [
            "SELECT * FROM nope; PRAGMA key='\(secret)'",
            "PRAGMA nosuch.key = '\(secret)'",
            "ATTACH 'o.db' AS o KEY \(secret).x",
            "ATTACH 'file:o.db?%6Bey=\(secret)",
            "PRAGMA key='\(secret)",
        ]
        for statement in statements {
            let query = try cli(["query", db, statement, "--key-env", "K"], environment: ["K": Self.passphrase])
            #expect(query.status != 0 && !query.output.contains(secret), "\(query)")
            let shell = try cli(["shell", db, "--key-env", "K"], environment: ["K": Self.passphrase],
                                input: Data((statement + ";\n").utf8))
            #expect(shell.status != 0 && !shell.output.contains(secret), "\(shell)")
        }
        // Control: the same failure without a key word shows its SQL, so the checks above see printed SQL.
        let marker = "cli_marker_7f3a"
        let plain = try cli(["query", db, "SELECT * FROM nope; SELECT '\(marker)'", "--key-env", "K"],
                            environment: ["K": Self.passphrase])
        #expect(plain.status != 0 && plain.output.contains(marker), "\(plain)")
        let shell = try cli(["shell", db, "--key-env", "K"], environment: ["K": Self.passphrase],
                            input: Data("SELECT * FROM nope; SELECT '\(marker)';\n".utf8))
        #expect(shell.status != 0 && shell.output.contains(marker), "\(shell)")
    }

    /// Runs `argv[2...]` in the folder `argv[1]` as a process that can dump core: core size unlimited, no signal
    /// blocked or ignored (the test runner's children inherit a mask that blocks SIGABRT).
    static let crashable = """
        import os, resource, signal, sys
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        signal.signal(signal.SIGABRT, signal.SIG_DFL)
        os.chdir(sys.argv[1])
        os.execv(sys.argv[2], sys.argv[2:])
        """

    @Test("a crash in the middle of a command leaves no key in a core file (the tool is non-dumpable before it reads one)")
    func crashDumpsNoKey() throws {
        let folder = try TemporaryDirectory()
        func cores(in directory: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix("core") }
                .map { directory + "/" + $0 }
        }
        // Control: this machine writes core files where a crashing process stands, and the scan finds a string
        // that was in its memory.
        let control = folder.file("control")
        try FileManager.default.createDirectory(atPath: control, withIntermediateDirectories: true)
        let marker = "core-control-\(UUID().uuidString)"
        _ = try runProcess("/usr/bin/env", ["python3", "-c", Self.crashable, control, "/bin/bash", "-c",
                                            "M=\"$1\"; kill -ABRT $$", "bash", marker], timeout: 60)
        let controlCores = cores(in: control)
        let pattern = (try? String(contentsOfFile: "/proc/sys/kernel/core_pattern", encoding: .utf8)) ?? "?"
        let explanation = "no core holding the marker from a crashed shell (kernel.core_pattern: \(pattern)): "
            + "this machine cannot show the test failing"
        #expect(controlCores.contains { (try? contents(of: $0))?.range(of: Data(marker.utf8)) != nil },
                Comment(rawValue: explanation))

        // The tool crashed by SIGABRT while it holds the key: in a long query (the passphrase from a key file), and
        // in a backup (the key from a command that has printed it and not yet exited, which the tool waits for).
        let db = folder.file("crash.db"), keyFile = folder.file("key.txt")
        try makeDatabase(db)
        try writeFile(keyFile, Self.passphrase + "\n")
        #expect(chmod(keyFile, 0o600) == 0)
        let lingering = "sleep 29.\(Int.random(in: 100...999))"
        let runs: [(name: String, arguments: [String])] = [
            ("query", ["query", db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000000000) "
                + "SELECT count(*) FROM n, t", "--key-file", keyFile]),
            ("backup", ["backup", db, folder.file("crash-copy.db"), "--key-command",
                        "cat '\(keyFile)'; exec \(lingering) >&-"]),
        ]
        for run in runs {
            let work = folder.file("work-\(run.name)")
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-c", Self.crashable, work, CLI.executable] + run.arguments
            var environment = ProcessInfo.processInfo.environment
            environment["SWIFT_BACKTRACE"] = "enable=no"
            process.environment = environment
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: 1.5)
            let wasRunning = process.isRunning
            kill(process.processIdentifier, SIGABRT)
            // The key command's lingering child holds the launcher's descriptors, by which Foundation sees the end
            // of the process: end it once the crash has happened.
            Thread.sleep(forTimeInterval: 1)
            _ = try? runProcess("/usr/bin/pkill", ["-f", "^\(lingering)"], timeout: 10)
            for _ in 0..<100 where process.isRunning { Thread.sleep(forTimeInterval: 0.1) }
            let endedByAbort = !process.isRunning
            if !endedByAbort { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            #expect(endedByAbort, "\(run.name): SIGABRT did not end the tool within 10 s")
            #expect(wasRunning, "\(run.name): the tool ended before the crash")
            #expect(process.terminationReason == .uncaughtSignal, "\(run.name): the tool was not crashed")
            for core in cores(in: work) {
                let bytes = try contents(of: core)
                #expect(bytes.range(of: Data(Self.passphrase.utf8)) == nil, "\(run.name): \(core) holds the passphrase")
            }
            #expect(cores(in: work).isEmpty, "\(run.name): the non-dumpable tool wrote a core: \(cores(in: work))")
        }
    }

    @Test("every file the tool writes is no more open than its source, plaintext never more than 0600, whatever the umask")
    func outputModes() throws {
        let folder = try TemporaryDirectory()
        var mismatches: [String] = []
        var cases = 0
        for umask in ["000", "022", "077"] {
            for sourceMode in [0o600, 0o640, 0o644] as [mode_t] {
                let tag = "\(umask)-\(String(sourceMode, radix: 8))"
                let encrypted = folder.file("src-\(tag).db")
                try makeDatabase(encrypted)
                #expect(chmod(encrypted, sourceMode) == 0)
                let plain = folder.file("plain-src-\(tag).db")
                let made = try runProcess("/usr/bin/env", ["python3", "-c", "import sqlite3, sys; "
                    + "c = sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE t(x)'); c.commit()", plain])
                #expect(made.status == 0, "\(made)")
                #expect(chmod(plain, sourceMode) == 0)
                let mask = mode_t(umask, radix: 8) ?? 0
                for (command, input, plaintext) in [("backup", encrypted, false), ("decrypt", encrypted, true),
                                                    ("encrypt", plain, false)] {
                    let output = folder.file("\(command)-\(tag).db")
                    let result = try runProcess("/bin/sh", ["-c", "umask \(umask); exec \"$@\"", "sh", CLI.executable,
                                                            command, input, output, "--key-env", "K"],
                                                environment: ProcessInfo.processInfo.environment
                                                    .merging(["K": Self.passphrase]) { $1 })
                    #expect(result.status == 0, "\(command) under umask \(umask): \(result)")
                    var status = stat()
                    guard stat(output, &status) == 0 else { mismatches.append("\(command) \(tag): no output"); continue }
                    let expected = (plaintext ? sourceMode & 0o600 : sourceMode & 0o666) & ~mask
                    cases += 1
                    if status.st_mode & 0o777 != expected {
                        mismatches.append("\(command) source \(String(sourceMode, radix: 8)) umask \(umask): "
                            + "\(String(status.st_mode & 0o777, radix: 8)), expected \(String(expected, radix: 8))")
                    }
                }
            }
        }
        #expect(cases == 27)
        #expect(mismatches.isEmpty, "\(mismatches)")
    }

    @Test("a killed run's temporary file is removed by the next run on the same output; a live run's is not")
    func leftoverTemporaryRemoved() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("l.db"), output = folder.file("out.db")
        try makeDatabase(db)
        // What a SIGKILL during decrypt leaves: plaintext in OUT.sqlcipherkit-XXXXXXXX.tmp, and its journal.
        let leftover = output + ".sqlcipherkit-DEADBEEF.tmp"
        try writeFile(leftover, "SQLite format 3\0 leftover plaintext")
        try writeFile(leftover + "-journal", "journal")
        // A run still writing holds its temporary file locked.
        let live = output + ".sqlcipherkit-0000BEEF.tmp"
        try writeFile(live, "in progress")
        let descriptor = open(live, O_RDONLY)
        #expect(descriptor >= 0 && flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        defer { close(descriptor) }
        let result = try cli(["decrypt", db, output, "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(result.status == 0, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: leftover) && !FileManager.default.fileExists(atPath: leftover + "-journal"),
                "the leftover is still there")
        #expect(FileManager.default.fileExists(atPath: live), "a live run's temporary file was removed")
    }

    @Test("selfcheck reports the engine and proves encryption at rest")
    func selfcheck() throws {
        let result = try cli(["selfcheck"])
        #expect(result.status == 0, "\(result)")
        let pin = try Pin.current.get()
        #expect(result.stdout.contains("cipher_version: \(pin.cipherVersion)"))
        #expect(result.stdout.contains("cipher_provider: openssl"))
        #expect(result.stdout.contains("cipher_provider_version: OpenSSL 3"))
        #expect(result.stdout.contains("crypto_provider: \(pin.cryptoProvider ?? "sqlcipherkit") (compiled into the engine)"))
        #expect(result.stdout.contains("sqlite_version: \(pin.sqliteVersion)"))
        #expect(result.stdout.contains("cipher_status: 1"))
        #expect(result.stdout.contains("encrypted_at_rest: yes"))
    }

    /// Issue 48: one version. The CLI prints `Engine.sqlcipherKitVersion`; the build read the same line into pin.json
    /// (and from there into the packages, MANIFEST.json and the SBOM) with BuildSupport/project_version.py. Seen failing
    /// with the constant changed and the build not re-run.
    @Test("--version names the version the build wrote into pin.json, MANIFEST.json and the SBOM, and the engine's")
    func version() throws {
        let result = try cli(["--version"])
        #expect(result.status == 0, "\(result)")
        let pin = try Pin.current.get()
        #expect(result.stdout.hasPrefix("sqlcipherkit \(pin.sqlcipherKitVersion) (SQLCipherKit, SQLCipher \(pin.cipherVersion) "
                                        + "on SQLite \(pin.sqliteVersion))"), "\(result)")
        #expect(Engine.sqlcipherKitVersion == pin.sqlcipherKitVersion)
        let dist = Repository.root.appendingPathComponent("dist/SQLCipherKit").path
        let manifest = try String(contentsOfFile: dist + "/MANIFEST.json", encoding: .utf8)
        #expect(manifest.contains(#""sqlcipherKitVersion": "\#(pin.sqlcipherKitVersion)""#), "\(manifest.prefix(400))")
        let sbom = try String(contentsOfFile: dist + "/sbom.cdx.json", encoding: .utf8)
        #expect(sbom.contains(#""version": "\#(pin.sqlcipherKitVersion)""#), "\(sbom.prefix(600))")
    }

    @Test("a key from the environment, a file (one newline dropped) and standard input open the same database")
    func keySources() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("k.db")
        try makeDatabase(db)
        try writeFile(folder.file("key.txt"), Self.passphrase + "\n")
        // A key file must be closed to group and others (KeySourceCLITests has the refusal).
        #expect(chmod(folder.file("key.txt"), 0o600) == 0)
        let ways: [([String], [String: String], Data)] = [
            (["--key-env", "DB_KEY"], ["DB_KEY": Self.passphrase], Data()),
            (["--key-file", folder.file("key.txt")], [:], Data()),
            (["--key-stdin"], [:], Data((Self.passphrase + "\n").utf8)),
        ]
        for (options, environment, input) in ways {
            let result = try cli(["query", db, "SELECT count(*) AS n FROM t", "--format", "csv"] + options,
                                 environment: environment, input: input)
            #expect(result.status == 0, "\(options): \(result)")
            #expect(result.stdout == "n\n3\n")
        }
        // Two sources at once is a usage error.
        let both = try cli(["check", db, "--key-stdin", "--key-env", "DB_KEY"], environment: ["DB_KEY": Self.passphrase])
        #expect(both.status == 64, "\(both)")
        // No source and no terminal: usage error, naming the options.
        let none = try cli(["check", db])
        #expect(none.status == 64, "\(none)")
        #expect(none.stderr.contains("--key-env"))
    }

    @Test("--raw takes 64 hex digits (raw key) or 96 (raw key and salt); other lengths are usage errors")
    func rawKeys() throws {
        let folder = try TemporaryDirectory()
        for (name, hex) in [("raw.db", Self.rawHex), ("salted.db", Self.rawSaltHex)] {
            let db = folder.file(name)
            let create = try cli(["query", db, "CREATE TABLE t(a); INSERT INTO t VALUES (42)", "--create", "--key-env", "R", "--raw"],
                                 environment: ["R": hex])
            #expect(create.status == 0, "\(create)")
            let read = try cli(["query", db, "SELECT a FROM t", "--key-env", "R", "--raw", "--format", "csv"],
                               environment: ["R": hex])
            #expect(read.stdout == "a\n42\n", "\(read)")
            let asPassphrase = try cli(["check", db, "--key-env", "R"], environment: ["R": hex])
            #expect(asPassphrase.status == 3, "hex read as a passphrase must not open a raw-keyed file")
        }
        // The 96-digit form's last 16 bytes are the salt, stored as the file's first 16 bytes …
        let salted = folder.file("salted.db")
        #expect(Array(try contents(of: salted).prefix(16)) == (0..<16).map { UInt8(0xe0 + $0) })
        // … and its first 32 bytes the key: that key alone (64 digits; the salt read from the file) opens it,
        // the halves swapped do not.
        let keyOnly = try cli(["query", salted, "SELECT a FROM t", "--key-env", "R", "--raw", "--format", "csv"],
                              environment: ["R": Self.saltedKeyHex])
        #expect(keyOnly.status == 0 && keyOnly.stdout == "a\n42\n", "\(keyOnly)")
        let swapped = String(Self.rawSaltHex.suffix(32) + Self.rawSaltHex.prefix(64))
        let swappedRead = try cli(["check", salted, "--key-env", "R", "--raw"], environment: ["R": swapped])
        #expect(swappedRead.status == 3, "\(swappedRead)")
        let short = try cli(["check", folder.file("raw.db"), "--key-env", "R", "--raw"],
                            environment: ["R": String(Self.rawHex.dropLast())])
        #expect(short.status == 64, "\(short)")
        #expect(short.stderr.contains("64 digits"))
    }

    @Test("--salt: 32 hex digits (either case) are the salt of a plaintext-header database; other text is a usage error")
    func saltOption() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("header.db")
        let header = ["--plaintext-header", "32"]
        let environment = ["K": Self.passphrase]
        // Written out, not made with the hex helper the CLI uses: this test checks that helper's reading.
        let digits = "e0e1e2e3e4e5e6e7e8e9eaebecedeeef"
        let salt: [UInt8] = [0xe0, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xeb, 0xec, 0xed, 0xee, 0xef]
        let create = try cli(["query", db, "CREATE TABLE t(a); INSERT INTO t VALUES (7)", "--create", "--key-env", "K",
                              "--salt", digits] + header, environment: environment)
        try #require(create.status == 0, "\(create)")
        #expect(try contents(of: db).prefix(15) == Data("SQLite format 3".utf8), "the header should be plaintext")
        // The salt the CLI keyed the file with is those 16 bytes: the API opens it with them.
        let opened = try Database(path: db, key: .passphrase(Self.passphrase),
                                  configuration: .init(mode: .readOnly,
                                                       cipher: CipherSettings(plaintextHeaderSize: 32, salt: salt)))
        #expect(try opened.scalar(Int.self, "SELECT a FROM t") == 7)
        opened.close()
        let upper = try cli(["query", db, "SELECT a FROM t", "--format", "csv", "--key-env", "K",
                             "--salt", digits.uppercased()] + header, environment: environment)
        #expect(upper.status == 0 && upper.stdout == "a\n7\n", "\(upper)")
        let otherSalt = try cli(["check", db, "--key-env", "K", "--salt", String(repeating: "0", count: 32)] + header,
                                environment: environment)
        #expect(otherSalt.status == 3, "\(otherSalt)")
        for bad in [String(digits.dropLast()), String(digits.dropLast(2)), digits + "00", "zz" + digits.dropFirst(2),
                    "+f" + digits.dropFirst(2), ""] {
            let result = try cli(["check", db, "--key-env", "K", "--salt", bad] + header, environment: environment)
            #expect(result.status == 64 && result.stderr.contains("--salt takes 32 hex digits"), "\(bad): \(result)")
        }
    }

    @Test("exit codes: wrong key 3, flipped data byte 4, bad flags 64, other failures 1")
    func exitCodes() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("codes.db")
        try makeDatabase(db, rows: 400)
        let before = try contents(of: db)

        let wrongKey = try cli(["check", db, "--key-env", "K"], environment: ["K": Self.otherPassphrase])
        #expect(wrongKey.status == 3, "\(wrongKey)")
        #expect(wrongKey.stderr.hasPrefix("sqlcipherkit: The key does not open"))
        #expect(wrongKey.stderr.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 1, "one sentence")
        #expect(try contents(of: db) == before)

        let good = try cli(["check", db, "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(good.status == 0, "\(good)")
        #expect(good.stdout == "ok\n")

        var bytes = before
        bytes[4096 * 2 + 700] ^= 0x40  // a byte in page 3, a data page
        try writeFile(db, bytes)
        let tampered = try cli(["check", db, "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(tampered.status == 4, "\(tampered)")
        #expect(tampered.stdout.contains("HMAC verification failed for page 3"))

        for bad in [["check", db, "--bogus"], ["check"], ["frobnicate"], ["check", db, "--compat", "7", "--key-env", "K"],
                    ["query", db, "--key-env", "K"]] {
            let result = try cli(bad, environment: ["K": Self.passphrase])
            #expect(result.status == 64, "\(bad): \(result)")
        }
        let missing = try cli(["check", folder.file("none.db"), "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(missing.status == 1, "\(missing)")
        #expect(try folder.names() == ["codes.db"], "a failed command left files behind")
    }

    @Test("encrypt and decrypt write new files atomically, never overwriting without --force")
    func encryptDecrypt() throws {
        let folder = try TemporaryDirectory()
        let secret = folder.file("secret.db"), plain = folder.file("plain.db"), again = folder.file("again.db")
        try makeDatabase(secret)

        let decrypt = try cli(["decrypt", secret, plain, "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(decrypt.status == 0, "\(decrypt)")
        #expect(try contents(of: plain).prefix(15) == Data("SQLite format 3".utf8))
        #expect(try contents(of: plain).range(of: Data(Self.marker.utf8)) != nil, "decrypt wrote plaintext rows")
        #expect(try contents(of: secret).range(of: Data(Self.marker.utf8)) == nil)
        #expect(try cli(["info", plain]).stdout.contains("format: plain"))

        let encrypt = try cli(["encrypt", plain, again, "--key-env", "K2"], environment: ["K2": Self.otherPassphrase])
        #expect(encrypt.status == 0, "\(encrypt)")
        #expect(try contents(of: again).prefix(15) != Data("SQLite format 3".utf8))
        #expect(try contents(of: again).range(of: Data(Self.marker.utf8)) == nil, "the encrypted file holds a row")
        let read = try cli(["query", again, "SELECT count(*) FROM t", "--format", "csv", "--key-env", "K2"],
                           environment: ["K2": Self.otherPassphrase])
        #expect(read.stdout.hasSuffix("3\n"), "\(read)")

        // OUT exists: refused, unchanged, no temporary file; --force replaces it.
        let existing = try contents(of: again)
        let refused = try cli(["encrypt", plain, again, "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("--force"))
        #expect(try contents(of: again) == existing)
        let forced = try cli(["encrypt", plain, again, "--key-env", "K", "--force"], environment: ["K": Self.passphrase])
        #expect(forced.status == 0, "\(forced)")
        #expect(try cli(["check", again, "--key-env", "K"], environment: ["K": Self.passphrase]).status == 0)

        // Failures leave nothing behind: a wrong key, and encrypting a file that is already encrypted.
        let wrong = try cli(["decrypt", secret, folder.file("out1.db"), "--key-env", "K"], environment: ["K": "nope"])
        #expect(wrong.status == 3, "\(wrong)")
        let twice = try cli(["encrypt", secret, folder.file("out2.db"), "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(twice.status == 3, "\(twice)")
        #expect(try folder.names() == ["again.db", "plain.db", "secret.db"])
    }

    @Test("rekey changes the key in place; the old key no longer opens it")
    func rekey() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("rekey.db")
        try makeDatabase(db)
        let rekey = try cli(["rekey", db, "--key-env", "OLD", "--new-key-env", "NEW", "--new-raw"],
                            environment: ["OLD": Self.passphrase, "NEW": Self.rawHex])
        #expect(rekey.status == 0, "\(rekey)")
        #expect(try cli(["check", db, "--key-env", "OLD"], environment: ["OLD": Self.passphrase]).status == 3)
        #expect(try cli(["check", db, "--key-env", "NEW", "--raw"], environment: ["NEW": Self.rawHex]).status == 0)
        let noNewKey = try cli(["rekey", db, "--key-env", "NEW", "--raw"], environment: ["NEW": Self.rawHex])
        #expect(noNewKey.status == 64, "without a terminal the new key must come from an option: \(noNewKey)")
    }

    @Test("migrate upgrades SQLCipher's own 3.0 sample to 4; info reports the format, also as JSON")
    func migrateAndInfo() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("v3.db")
        let tarball = try Pin.current.get().cachedTarball
        let extract = Process()
        extract.executableURL = URL(fileURLWithPath: "/bin/sh")
        extract.arguments = ["-c", "tar -xzOf \"$0\" --wildcards '*/sqlcipher-resources/sqlcipher-3.0-testkey.db' > \"$1\"",
                             tarball, db]
        try extract.run()
        extract.waitUntilExit()
        #expect(extract.terminationStatus == 0, "run ./build-sqlcipher.sh first: the tarball holds the sample")

        let before = try cli(["info", db, "--key-env", "K", "--json"], environment: ["K": "testkey"])
        #expect(before.status == 0, "\(before)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(before.stdout.utf8)) as? [String: Any])
        #expect(json["format"] as? String == "3")
        #expect(json["pageSize"] as? Int == 1024)
        #expect((json["cipher"] as? [String: Any])?["kdfIterations"] as? Int == 64000)

        let migrate = try cli(["migrate", db, "--key-env", "K"], environment: ["K": "testkey"])
        #expect(migrate.status == 0, "\(migrate)")
        let after = try cli(["info", db, "--key-env", "K"], environment: ["K": "testkey"])
        #expect(after.stdout.contains("format: 4"), "\(after)")
        #expect(after.stdout.contains("cipher_status: 1"), "info prints SQLCipher's word that it encrypts: \(after)")
        let count = try cli(["query", db, "SELECT count(*) FROM t1", "--key-env", "K", "--format", "json"],
                            environment: ["K": "testkey"])
        #expect(count.stdout == "[{\"count(*)\":78536}]\n", "\(count)")
    }

    @Test("query prints tables, CSV with quoting, and JSON; runs several statements")
    func query() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("q.db")
        let setup = "CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 'plain'), (2, 'with, comma \"quoted\"'), (3, NULL)"
        #expect(try cli(["query", db, setup, "--create", "--key-env", "K"], environment: ["K": Self.passphrase]).status == 0)
        func run(_ format: String) throws -> String {
            try cli(["query", db, "SELECT a, b FROM t ORDER BY a", "--format", format, "--key-env", "K"],
                    environment: ["K": Self.passphrase]).stdout
        }
        #expect(try run("csv") == "a,b\n1,plain\n2,\"with, comma \"\"quoted\"\"\"\n3,\n")
        #expect(try run("json") == "[{\"a\":1,\"b\":\"plain\"},{\"a\":2,\"b\":\"with, comma \\\"quoted\\\"\"},{\"a\":3,\"b\":null}]\n")
        let table = try run("table")
        #expect(table.hasPrefix("a | b"))
        #expect(table.contains("3 | NULL"))
        let two = try cli(["query", db, "SELECT 1 AS x;", "SELECT 2 AS y", "--format", "csv", "--key-env", "K"],
                          environment: ["K": Self.passphrase])
        #expect(two.stdout == "x\n1\ny\n2\n", "\(two)")
        let error = try cli(["query", db, "SELECT * FROM missing", "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(error.status == 1)
        #expect(error.stderr.contains("no such table: missing"))
    }

    @Test("on a terminal: a no-echo prompt for the key and a progress bar; without one: nothing on stderr")
    func terminal() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("big.db")
        let setup = "CREATE TABLE t(a); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) "
            + "INSERT INTO t SELECT hex(randomblob(100)) FROM c"
        #expect(try cli(["query", db, setup, "--create", "--key-env", "K"], environment: ["K": Self.passphrase]).status == 0)

        let quiet = try cli(["decrypt", db, folder.file("quiet.db"), "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(quiet.status == 0)
        #expect(quiet.stderr.isEmpty, "no progress output without a terminal: \(quiet)")

        // `script` gives the tool a pseudo-terminal; the passphrase is typed at the prompt.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-q", "-e", "-c", "'\(CLI.executable)' decrypt '\(db)' '\(folder.file("typed.db"))'", "/dev/null"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        input.fileHandleForWriting.write(Data((Self.passphrase + "\n").utf8))
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("Key for \(db): "))
        #expect(text.contains("decrypt [##############################] 100%"), "\(text)")
        #expect(FileManager.default.fileExists(atPath: folder.file("typed.db")))
    }

    @Test("query does not create a missing database without --create; info names a missing file")
    func noAccidentalFiles() throws {
        let folder = try TemporaryDirectory()
        let typo = try cli(["query", folder.file("typo.db"), "SELECT 1", "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(typo.status == 1, "\(typo)")
        let info = try cli(["info", folder.file("typo.db")])
        #expect(info.status == 1, "\(info)")
        #expect(info.stderr.contains("does not exist"))
        #expect(try folder.names().isEmpty)
    }

    @Test("check fails (4) on trailing garbage and decrypt fails (4) on a damaged page")
    func damage() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("damaged.db")
        try makeDatabase(db, rows: 400)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: db))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0x5a, count: 100))
        try handle.close()
        let check = try cli(["check", db, "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(check.status == 4, "\(check)")

        let flipped = folder.file("flipped.db")
        try makeDatabase(flipped, rows: 400)
        var bytes = try contents(of: flipped)
        bytes[4096 * 3 + 500] ^= 0x01
        try writeFile(flipped, bytes)
        let decrypt = try cli(["decrypt", flipped, folder.file("out.db"), "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(decrypt.status == 4, "\(decrypt)")
        #expect(try folder.names() == ["damaged.db", "flipped.db"], "a failed decrypt left files behind")
    }

    @Test("Ctrl-C during decrypt stops it and leaves no partial plaintext file")
    func interruptedDecrypt() throws {
        let folder = try TemporaryDirectory()
        let db = folder.file("large.db")
        try makeDatabase(db, rows: 150_000)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.executable)
        process.arguments = ["decrypt", db, folder.file("plain.db"), "--key-env", "K"]
        process.environment = ProcessInfo.processInfo.environment.merging(["K": Self.passphrase]) { $1 }
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait until the temporary copy is being written, then interrupt.
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline,
              try !folder.names().contains(where: { $0.contains(".sqlcipherkit-") }) {
            usleep(2000)
        }
        let interruptedMidway = process.isRunning
        process.interrupt()
        process.waitUntilExit()
        #expect(interruptedMidway, "the decrypt finished before it could be interrupted; make the database larger")
        #expect(process.terminationStatus != 0)
        let left = try folder.names()
        #expect(left == ["large.db"], "left behind: \(left)")
    }

    @Test("every command has --help with an example")
    func help() throws {
        for command in ["selfcheck", "check", "encrypt", "decrypt", "rekey", "migrate", "info", "query"] {
            let result = try cli([command, "--help"])
            #expect(result.status == 0)
            #expect(result.stdout.contains("Example:"), "\(command)")
            #expect(result.stdout.contains("sqlcipherkit \(command)"), "\(command)")
        }
    }
}
