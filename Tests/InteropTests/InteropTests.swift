import Foundation
import ProcessTestSupport
import SQLCipherKit
import Testing

/// Files move both ways between SQLCipherKit (the API and the CLI, on the pinned SQLCipher) and an SQLCipher that
/// someone else built: the `sqlcipher3` wheel (see ``PythonSide``), driven by `python/interop.py`. Every value
/// must come back exact, and no key may appear in anything either side prints.
///
/// Skipped, with a banner on stderr, only when the wheel cannot be installed; once installed, every failure
/// fails.
@Suite("Interoperability with an independent SQLCipher build (sqlcipher3)",
       .enabled(if: PythonSide.isInstallable,
                "\(PythonSide.requirement) could not be installed: see the SKIPPED banner on stderr"),
       .hangGuard(.minutes(10), hang: "a Python side that waits forever (pip, or sqlcipher3 on a locked file)"))
struct InteropTests {
    // -------------------------------------------------------------------------------------------- data ---

    /// The rows both sides write and compare: every storage class, the extremes of integers and reals,
    /// Unicode, quotes, a NUL inside text, empty text and blob, and values large enough for overflow pages.
    static let rows: [[DatabaseValue]] = [
        [.integer(1), .integer(.max), .real(3.141592653589793), .text("héllo wörld ✓ 日本語 🔐"),
         .blob([0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF])],
        [.integer(2), .integer(.min), .real(-2.5e-308), .text(""), .blob([])],
        [.integer(3), .integer(0), .real(.greatestFiniteMagnitude), .text(String(repeating: "ünïcödé ✓ ", count: 1200)),
         .blob((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })],
        [.integer(4), .integer(-1), .real(0.1), .text("a\u{0}b 'single' \"double\"\nnext line"), .null],
        [.integer(5), .null, .null, .null, .null],
    ]
    /// The UTF-8 of a text in ``rows``: found in a plaintext copy, never in an encrypted file.
    static let markerBytes = Data("héllo wörld ✓ 日本語 🔐".utf8)
    static let createTable = "CREATE TABLE interop(id INTEGER PRIMARY KEY, i INTEGER, r REAL, t TEXT, b BLOB)"
    static let selectRows = "SELECT id, i, r, t, b FROM interop ORDER BY id"

    /// Keys, new each run. The passphrase has a quote (Python must escape it in PRAGMA key) and non-ASCII
    /// characters (both sides must hash the same UTF-8 bytes).
    static let passphrase = "interop ' pässwörd 🔑 \(UUID().uuidString)"
    static let wrongPassphrase = "interop-wrong-\(UUID().uuidString)"
    static let rawKey = randomBytes(32)
    static let rawKeyHex = Hex.string(rawKey)
    static let rawSalt = randomBytes(16)
    static let rawKeyAndSaltHex = Hex.string(rawKey + rawSalt)
    static let wrongRawKeyHex = Hex.string(randomBytes(32))
    static let secrets = [passphrase, wrongPassphrase, rawKeyHex, rawKeyAndSaltHex, wrongRawKeyHex]

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    // ----------------------------------------------------------------------------------------- helpers ---

    /// Fails the test if any key, in any case, appears in what a child printed, and returns the result with
    /// every key replaced by `<key>`: no failure message below (which #expect fills with the values it
    /// compared) can then print a key either. The check is computed outside #expect for the same reason.
    func checked(_ result: ProcessResult, _ what: String) -> ProcessResult {
        let printed = (result.stdout + result.stderr).lowercased()
        for (number, secret) in Self.secrets.enumerated() {
            let leaked = printed.contains(secret.lowercased())
            #expect(!leaked, "key #\(number) of InteropTests.secrets was printed by \(what)")
        }
        return ProcessResult(status: result.status, stdout: Self.redacted(result.stdout),
                             stderr: Self.redacted(result.stderr))
    }

    static func redacted(_ text: String) -> String {
        secrets.reduce(text) { $0.replacingOccurrences(of: $1, with: "<key>", options: .caseInsensitive) }
    }

    /// Runs interop.py (see ``PythonSide/run(_:key:input:)``), checked for keys.
    func python(_ arguments: [String], key: String? = nil, input: Data = Data()) throws -> ProcessResult {
        try checked(PythonSide.ready().run(arguments, key: key, input: input), "interop.py \(arguments.first ?? "")")
    }

    /// Python reads `path` with `key`; the report, after checking the exit status, both integrity checks and
    /// that no key was printed.
    func pythonRead(_ path: String, key: String, raw: Bool = false, compat: Int? = nil) throws -> PythonReport {
        var arguments = ["read", path]
        if raw { arguments.append("--raw") }
        if let compat { arguments += ["--compat", String(compat)] }
        let result = try python(arguments, key: key)
        guard result.status == 0 else { throw InteropFailure("interop.py read failed: \(result)") }
        let report = try decodeReport(result.stdout)
        #expect(report.integrityCheck == ["ok"])
        #expect(report.cipherIntegrityCheck == [])
        return report
    }

    /// Python creates `path` with `key` and writes ``rows``.
    func pythonWrite(_ path: String, key: String, raw: Bool = false, compat: Int? = nil) throws {
        var arguments = ["write", path]
        if raw { arguments.append("--raw") }
        if let compat { arguments += ["--compat", String(compat)] }
        let input = try JSONEncoder().encode(Self.rows.map { $0.map(TaggedValue.init) })
        let result = try python(arguments, key: key, input: input)
        guard result.status == 0 else { throw InteropFailure("interop.py write failed: \(result)") }
    }

    func decodeReport(_ json: String) throws -> PythonReport {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(PythonReport.self, from: Data(json.utf8))
    }

    /// The API creates `path` with `key` and writes ``rows``.
    func apiWrite(_ path: String, key: Key, cipher: CipherSettings = CipherSettings()) throws {
        let db = try Database(path: path, key: key, configuration: .init(cipher: cipher))
        try db.execute(Self.createTable)
        try db.transaction {
            for row in Self.rows {
                var arguments = StatementArguments.none
                arguments.positional = row
                try db.execute("INSERT INTO interop(id, i, r, t, b) VALUES (?, ?, ?, ?, ?)", arguments)
            }
        }
        db.close()
    }

    /// The API opens `path` with `key` and returns its rows.
    func apiRead(_ path: String, key: Key, cipher: CipherSettings = CipherSettings()) throws -> [[DatabaseValue]] {
        let db = try Database(path: path, key: key, configuration: .init(mode: .readOnly, cipher: cipher))
        defer { db.close() }
        #expect(try db.integrityCheck() == [])
        #expect(try db.cipherIntegrityCheck().filter(\.isFailure).isEmpty)
        return try db.fetchAll(Self.selectRows).map(\.values)
    }

    func cli(_ arguments: [String], environment: [String: String]) throws -> ProcessResult {
        try checked(CLI.run(arguments, environment: environment, timeout: 120), "sqlcipherkit \(arguments.first ?? "")")
    }

    /// One row of `sqlcipherkit query --format json` over ``cliSelect``.
    struct CLIRow: Decodable, Equatable {
        var id: Int64
        var i: Int64?
        var r: Double?
        var t: String?
        var b: String
    }
    static let cliSelect = "SELECT id, i, r, t, hex(b) AS b FROM interop ORDER BY id"
    static var cliRows: [CLIRow] {
        rows.map { row in
            // SQLite's hex(): uppercase digits, and '' for NULL.
            CLIRow(id: row[0].integerValue ?? 0, i: row[1].integerValue, r: row[2].realValue, t: row[3].textValue,
                   b: row[4].blobValue.map { Hex.string($0).uppercased() } ?? "")
        }
    }

    /// Reads `path` through `sqlcipherkit check` and `query`, with the key in environment variable K.
    func expectCLIReads(_ path: String, key: String, options: [String] = []) throws {
        let check = try cli(["check", path, "--key-env", "K"] + options, environment: ["K": key])
        #expect(check.status == 0 && check.stdout == "ok\n", "\(check)")
        let query = try cli(["query", path, Self.cliSelect, "--format", "json", "--key-env", "K"] + options,
                            environment: ["K": key])
        #expect(query.status == 0, "\(query)")
        let decoded = try JSONDecoder().decode([CLIRow].self, from: Data(query.stdout.utf8))
        #expect(decoded == Self.cliRows)
    }

    // ------------------------------------------------------------------------------------------- tests ---

    @Test("the other side is SQLCipher 4, another release and another build than ours (its own OpenSSL)")
    func otherSide() throws {
        let result = try python(["facts"])
        #expect(result.status == 0, "\(result)")
        let other = try decodeReport(result.stdout)
        let ours = try Engine.selfCheck()
        print("INTEROP: other side: \(other.module) \(other.moduleVersion): SQLCipher \(other.cipherVersion) "
            + "(\(other.cipherProvider), \(other.cipherProviderVersion)) on SQLite \(other.sqliteVersion); "
            + "SQLCipherKit: SQLCipher \(ours.cipherVersion) on SQLite \(ours.sqliteVersion)")
        #expect(other.moduleVersion == PythonSide.pinnedVersion)
        #expect(other.cipherVersion.hasPrefix("4."), "the other side must speak SQLCipher 4's format")
        #expect(other.cipherVersion != ours.cipherVersion, "the other side must be a different release")
        // Another build: the wheel carries an OpenSSL of its own, not the system's that our engine links.
        #expect(other.cipherProvider == "openssl")
        #expect(other.cipherProviderVersion != ours.providerVersion, "the other side must bring its own OpenSSL")
    }

    @Test("(1) a file the API writes with a passphrase reads in Python, every value exact")
    func apiPassphraseToPython() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("api-passphrase.db")
        try apiWrite(path, key: .passphrase(Self.passphrase))
        #expect(try pythonRead(path, key: Self.passphrase).databaseRows() == Self.rows)
    }

    @Test("(2) files the API writes with a raw key, and with a raw key and salt, read in Python with x'…'")
    func apiRawKeyToPython() throws {
        let folder = try TemporaryDirectory()
        let raw = folder.file("api-raw.db")
        try apiWrite(raw, key: .rawKey(Self.rawKey))
        #expect(try pythonRead(raw, key: Self.rawKeyHex, raw: true).databaseRows() == Self.rows)
        let salted = folder.file("api-raw-salt.db")
        try apiWrite(salted, key: .rawKey(Self.rawKey, salt: Self.rawSalt))
        #expect(try pythonRead(salted, key: Self.rawKeyAndSaltHex, raw: true).databaseRows() == Self.rows)
    }

    @Test("(3) files the CLI writes (encrypt of a plain file; query --create with a passphrase and a raw key) read in Python")
    func cliToPython() throws {
        let folder = try TemporaryDirectory()
        // encrypt: a plaintext database holding the rows, encrypted by the CLI.
        let plain = folder.file("plain.db")
        let db = try Database(unencryptedPath: plain)
        try db.execute(Self.createTable)
        for row in Self.rows {
            var arguments = StatementArguments.none
            arguments.positional = row
            try db.execute("INSERT INTO interop(id, i, r, t, b) VALUES (?, ?, ?, ?, ?)", arguments)
        }
        db.close()
        let encrypted = folder.file("cli-encrypted.db")
        let encrypt = try cli(["encrypt", plain, encrypted, "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(encrypt.status == 0, "\(encrypt)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: plain)).range(of: Self.markerBytes) != nil,
                "the control: the plaintext file holds the marker")
        #expect(try Data(contentsOf: URL(fileURLWithPath: encrypted)).range(of: Self.markerBytes) == nil,
                "the CLI's encrypted file holds a row in plaintext")
        #expect(try pythonRead(encrypted, key: Self.passphrase).databaseRows() == Self.rows)

        // query --create: SQL literals, so the expected values are ones SQL text writes exactly.
        let sql = Self.createTable + "; INSERT INTO interop VALUES (1, 9223372036854775807, 0.5, 'ünïcødé ✓ ''q''', "
            + "x'00ff10'), (2, -42, -1.25e10, '', x''), (3, NULL, NULL, NULL, NULL)"
        let expected: [[DatabaseValue]] = [
            [.integer(1), .integer(.max), .real(0.5), .text("ünïcødé ✓ 'q'"), .blob([0x00, 0xFF, 0x10])],
            [.integer(2), .integer(-42), .real(-1.25e10), .text(""), .blob([])],
            [.integer(3), .null, .null, .null, .null],
        ]
        let created = folder.file("cli-created.db")
        let create = try cli(["query", created, sql, "--create", "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(create.status == 0, "\(create)")
        #expect(try pythonRead(created, key: Self.passphrase).databaseRows() == expected)

        let createdRaw = folder.file("cli-created-raw.db")
        let createRaw = try cli(["query", createdRaw, sql, "--create", "--key-env", "K", "--raw"],
                                environment: ["K": Self.rawKeyHex])
        #expect(createRaw.status == 0, "\(createRaw)")
        #expect(try pythonRead(createdRaw, key: Self.rawKeyHex, raw: true).databaseRows() == expected)
    }

    @Test("(4) a file Python writes with a passphrase reads in the API, and in the CLI's check and query")
    func pythonPassphraseToProject() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("python-passphrase.db")
        try pythonWrite(path, key: Self.passphrase)
        #expect(try Database.detectFormat(path: path, key: .passphrase(Self.passphrase)) == .sqlcipher(version: 4))
        #expect(try apiRead(path, key: .passphrase(Self.passphrase)) == Self.rows)
        try expectCLIReads(path, key: Self.passphrase)
    }

    @Test("(5) files Python writes with a raw key, and with a raw key and salt, read in the API and the CLI")
    func pythonRawKeyToProject() throws {
        let folder = try TemporaryDirectory()
        let raw = folder.file("python-raw.db")
        try pythonWrite(raw, key: Self.rawKeyHex, raw: true)
        #expect(try apiRead(raw, key: .rawKey(Self.rawKey)) == Self.rows)
        try expectCLIReads(raw, key: Self.rawKeyHex, options: ["--raw"])
        let salted = folder.file("python-raw-salt.db")
        try pythonWrite(salted, key: Self.rawKeyAndSaltHex, raw: true)
        #expect(try apiRead(salted, key: .rawKey(Self.rawKey, salt: Self.rawSalt)) == Self.rows)
        try expectCLIReads(salted, key: Self.rawKeyAndSaltHex, options: ["--raw"])
        // SQLCipher stores a raw key's salt as the file's first 16 bytes: the salt is the one given.
        let db = try Database(path: salted, key: .rawKey(Self.rawKey, salt: Self.rawSalt), mode: .readOnly)
        #expect(try db.cipherSalt() == Self.rawSalt)
        db.close()
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: salted)).prefix(16)) == Self.rawSalt)
    }

    @Test("(6) controls: a wrong key fails on both sides; the other side's files are really encrypted")
    func wrongKeys() throws {
        let folder = try TemporaryDirectory()
        let ours = folder.file("api.db")
        try apiWrite(ours, key: .passphrase(Self.passphrase))
        for (key, raw) in [(Self.wrongPassphrase, false), (Self.wrongRawKeyHex, true)] {
            let result = try python(["read", ours] + (raw ? ["--raw"] : []), key: key)
            #expect(result.status == 3, "\(result)")
            #expect(result.stderr.contains("file is not a database"), "\(result)")
        }
        let theirs = folder.file("python.db")
        try pythonWrite(theirs, key: Self.passphrase)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: theirs))
        #expect(bytes.prefix(16) != Data("SQLite format 3\0".utf8), "the other side wrote a plaintext file")
        #expect(bytes.range(of: Self.markerBytes) == nil, "the other side's file holds a row in plaintext")
        for key in [try Key.passphrase(Self.wrongPassphrase), try Key.rawKey(hex: Array(Self.wrongRawKeyHex.utf8))] {
            #expect(errorKind { _ = try apiRead(theirs, key: key) } == .wrongKeyOrNotADatabase)
        }
        let wrong = try cli(["check", theirs, "--key-env", "K"], environment: ["K": Self.wrongPassphrase])
        #expect(wrong.status == 3, "\(wrong)")
    }

    @Test("(6) a file Python writes with cipher_compatibility = 3 opens in the API with compatibility 3 only")
    func pythonCompatibility3() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("python-compat3.db")
        try pythonWrite(path, key: Self.passphrase, compat: 3)
        let key = try Key.passphrase(Self.passphrase)
        // SQLCipher 4's defaults (PBKDF2-HMAC-SHA512, 256,000 iterations) derive another key: refused.
        #expect(errorKind { _ = try apiRead(path, key: key) } == .wrongKeyOrNotADatabase)
        #expect(try apiRead(path, key: key, cipher: CipherSettings(compatibility: 3)) == Self.rows)
        #expect(try Database.detectFormat(path: path, key: key) == .sqlcipher(version: 3))
        try expectCLIReads(path, key: Self.passphrase, options: ["--compat", "3"])
    }

    @Test("a file the API writes with compatibility 3 reads in Python with cipher_compatibility = 3 only")
    func apiCompatibility3() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("api-compat3.db")
        try apiWrite(path, key: .passphrase(Self.passphrase), cipher: CipherSettings(compatibility: 3))
        #expect(try pythonRead(path, key: Self.passphrase, compat: 3).databaseRows() == Self.rows)
        let defaults = try python(["read", path], key: Self.passphrase)
        #expect(defaults.status == 3, "\(defaults)")
    }

    /// The kind of ``SQLCipherError`` `body` throws, or nil when it throws none.
    func errorKind(_ body: () throws -> Void) -> SQLCipherError.Kind? {
        do {
            try body()
            return nil
        } catch {
            return (error as? SQLCipherError)?.kind
        }
    }
}

extension DatabaseValue {
    var integerValue: Int64? { if case .integer(let value) = self { value } else { nil } }
    var realValue: Double? { if case .real(let value) = self { value } else { nil } }
    var textValue: String? { if case .text(let value) = self { value } else { nil } }
    var blobValue: [UInt8]? { if case .blob(let value) = self { value } else { nil } }
}
