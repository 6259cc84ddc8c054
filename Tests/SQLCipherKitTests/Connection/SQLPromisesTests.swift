import Foundation
import ProcessTestSupport
import SQLCipherKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The two promises, for every SQL string a caller can write (the inventory in the article
/// "SQL that SQLCipherKit refuses", Documentation.docc/SQLRefusals.md):
///
/// 1. no key ever travels in SQL text;
/// 2. no SQL on an encrypted connection writes its data to a file in plaintext, unless the caller asked for
///    plaintext through a typed API (`attachUnencrypted(_:as:)`, `export(to:key: nil)`, `Database.decrypt`).
///
/// Every path runs on an encrypted database whose `main.t` holds a unique marker; afterwards the test folder
/// (database, side files, every file the statement names), the top of TMPDIR and every file this process holds
/// open are read, and none may hold the marker.
@Suite("SQL promises: no key in SQL text, no silent plaintext")
struct SQLPromisesTests {
    /// One inventory entry: SQL run on the encrypted connection (`{dir}` stands for the test folder, `{marker}`
    /// for the marker).
    struct Path: CustomTestStringConvertible, Sendable {
        let name: String
        let sql: String
        var arguments: [String] = []

        var testDescription: String { name }

        func text(folder: String, marker: String) -> String {
            sql.replacingOccurrences(of: "{dir}", with: folder).replacingOccurrences(of: "{marker}", with: marker)
        }
    }

    static let refusedPaths: [Path] = [
        // ATTACH, every form of KEY clause, and none.
        Path(name: "ATTACH with a literal key", sql: "ATTACH DATABASE '{dir}/k.db' AS k KEY 'secret-in-sql-7f3a'; "
             + "CREATE TABLE k.t AS SELECT * FROM main.t"),
        Path(name: "ATTACH with an empty key, then CREATE TABLE AS",
             sql: "ATTACH '{dir}/copy.db' AS c KEY ''; CREATE TABLE c.t AS SELECT * FROM main.t"),
        Path(name: "ATTACH with an empty blob key, then INSERT",
             sql: "ATTACH '{dir}/copy.db' AS c KEY x''; CREATE TABLE c.t(x); INSERT INTO c.t SELECT x FROM main.t"),
        Path(name: "ATTACH with a bound empty key", sql: "ATTACH ?1 AS c KEY ?2", arguments: ["{dir}/copy.db", ""]),
        Path(name: "ATTACH with a key expression",
             sql: "ATTACH '{dir}/copy.db' AS c KEY substr('abc', 1, 0); CREATE TABLE c.t AS SELECT * FROM main.t"),
        Path(name: "ATTACH without KEY", sql: "ATTACH '{dir}/copy.db' AS c; CREATE TABLE c.t AS SELECT * FROM main.t"),
        Path(name: "ATTACH spelled with comments and mixed case",
             sql: "/* x */ aTtAcH\n-- y\n DaTaBaSe '{dir}/copy.db' AS \"c\" KeY ''; CREATE TABLE c.t AS SELECT * FROM t"),
        Path(name: "ATTACH through a URI key parameter",
             sql: "ATTACH 'file:{dir}/copy.db?key=' AS c; CREATE TABLE c.t AS SELECT * FROM main.t"),
        // sqlcipher_export, however it is reached.
        Path(name: "sqlcipher_export into temp", sql: "SELECT sqlcipher_export('temp')"),
        Path(name: "sqlcipher_export with two arguments", sql: "SELECT sqlcipher_export('temp', 'main')"),
        Path(name: "sqlcipher_export in a trigger",
             sql: "CREATE TABLE fire(x); CREATE TRIGGER fire_export AFTER INSERT ON fire BEGIN "
                + "SELECT sqlcipher_export('temp'); END; INSERT INTO fire VALUES (1)"),
        Path(name: "sqlcipher_export in a view",
             sql: "CREATE VIEW exporting AS SELECT sqlcipher_export('temp') AS r; SELECT * FROM exporting"),
        Path(name: "sqlcipher_export in a CTE", sql: "WITH e(r) AS (SELECT SQLCipher_Export('temp')) SELECT r FROM e"),
        // Cipher settings after open (the next read would fail, and the CLI called the intact file corrupt).
        Path(name: "cipher_use_hmac", sql: "PRAGMA cipher_use_hmac = OFF"),
        Path(name: "cipher_page_size", sql: "PRAGMA cipher_page_size = 1024"),
        Path(name: "cipher_plaintext_header_size", sql: "PRAGMA cipher_plaintext_header_size = 32"),
        Path(name: "kdf_iter", sql: "PRAGMA kdf_iter = 1"),
        Path(name: "fast_kdf_iter", sql: "PRAGMA fast_kdf_iter = 1"),
        Path(name: "cipher_kdf_iter", sql: "PRAGMA cipher_kdf_iter = 1"),
        Path(name: "cipher_hmac_algorithm", sql: "PRAGMA cipher_hmac_algorithm = HMAC_SHA1"),
        Path(name: "cipher_kdf_algorithm", sql: "PRAGMA cipher_kdf_algorithm = PBKDF2_HMAC_SHA1"),
        Path(name: "cipher_compatibility", sql: "PRAGMA cipher_compatibility = 3"),
        Path(name: "cipher_salt", sql: "PRAGMA cipher_salt = \"x'00000000000000000000000000000000'\""),
        Path(name: "cipher_hmac_pgno", sql: "PRAGMA cipher_hmac_pgno = be"),
        Path(name: "cipher_hmac_salt_mask", sql: "PRAGMA cipher_hmac_salt_mask = \"x'00'\""),
        Path(name: "cipher (deprecated)", sql: "PRAGMA cipher = 'aes-128-cbc'"),
        Path(name: "rekey_cipher", sql: "PRAGMA rekey_cipher = 'aes-128-cbc'"),
        Path(name: "rekey_kdf_iter", sql: "PRAGMA rekey_kdf_iter = 1"),
        Path(name: "cipher_store_pass", sql: "PRAGMA cipher_store_pass = 1"),
        Path(name: "cipher_add_random", sql: "PRAGMA cipher_add_random = \"x'00112233'\""),
        Path(name: "cipher_memory_security", sql: "PRAGMA cipher_memory_security = OFF"),
        Path(name: "cipher_migrate", sql: "PRAGMA cipher_migrate"),
        // Process-wide state (issue 43): every other connection of the process, whoever opened it.
        Path(name: "temp_store_directory", sql: "PRAGMA temp_store_directory = '{dir}'"),
        Path(name: "data_store_directory", sql: "PRAGMA data_store_directory = '{dir}'"),
        Path(name: "hard_heap_limit", sql: "PRAGMA hard_heap_limit = 300000"),
        Path(name: "soft_heap_limit", sql: "PRAGMA main.soft_heap_limit(300000)"),
        Path(name: "cipher pragma on a schema, upper case", sql: "PRAGMA main.CIPHER_USE_HMAC = 0"),
        Path(name: "cipher_default_use_hmac", sql: "PRAGMA cipher_default_use_hmac = OFF"),
        Path(name: "cipher_default_page_size", sql: "PRAGMA cipher_default_page_size = 1024"),
        Path(name: "cipher_default_kdf_iter", sql: "PRAGMA cipher_default_kdf_iter = 1"),
        Path(name: "cipher_default_plaintext_header_size", sql: "PRAGMA cipher_default_plaintext_header_size = 32"),
        Path(name: "cipher_default_compatibility", sql: "PRAGMA cipher_default_compatibility = 1"),
        Path(name: "cipher_default_hmac_algorithm", sql: "PRAGMA cipher_default_hmac_algorithm = HMAC_SHA1"),
        Path(name: "cipher_default_kdf_algorithm", sql: "PRAGMA cipher_default_kdf_algorithm = PBKDF2_HMAC_SHA1"),
        // SQLCipher's trace and log files take the SQL text, values included.
        // (Enough statements to flush the trace's stdio buffer to the file.)
        Path(name: "cipher_profile to a file", sql: "PRAGMA cipher_profile = '{dir}/profile.log'; "
             + String(repeating: "INSERT INTO t VALUES ('{marker}-traced-" + String(repeating: "q", count: 200) + "'); ",
                      count: 40)),
        Path(name: "cipher_log to a file",
             sql: "PRAGMA cipher_log = '{dir}/cipher.log'; PRAGMA cipher_log_level = TRACE; "
                + "INSERT INTO t VALUES ('{marker}-logged')"),
        // Temporary files.
        // (A two-page cache for temp, so the temporary table's pages go to its file at once.)
        Path(name: "temp_store = FILE", sql: "PRAGMA temp_store = FILE; PRAGMA temp.cache_size = 2; "
             + "CREATE TEMP TABLE tt AS SELECT * FROM t; SELECT * FROM tt ORDER BY x"),
        Path(name: "temp_store = 1", sql: "PRAGMA temp_store = 1"),
        // SQLite reads temp_store's first character: 10 is FILE (issue 23's case, with a sort that spills).
        Path(name: "temp_store = 10", sql: "PRAGMA temp_store = 10; PRAGMA cache_size = 10; "
             + "CREATE TEMP TABLE tt AS SELECT * FROM t; SELECT count(*) FROM (SELECT x FROM tt ORDER BY x DESC)"),
        Path(name: "temp_store = '1x'", sql: "PRAGMA temp_store = '1x'"),
        // SQLCipher applies page_size as cipher_page_size on a keyed schema.
        Path(name: "page_size on the encrypted main", sql: "PRAGMA main.page_size = 1024"),
        // SQLCipher keys a VACUUM INTO copy from a URI's key parameter; an empty one wrote it in plaintext.
        Path(name: "VACUUM INTO a URI with an empty key", sql: "VACUUM INTO 'file:{dir}/vacuumed.db?key='"),
        Path(name: "VACUUM INTO a URI with a percent-encoded key", sql: "VACUUM INTO 'file:{dir}/vacuumed.db?k%65y=abc'"),
        // The engine's defenses (writable_schema would let SQL text put any text in a schema row).
        Path(name: "writable_schema", sql: "PRAGMA writable_schema = ON"),
        Path(name: "trusted_schema", sql: "PRAGMA trusted_schema = 1"),
        // Key pragmas.
        Path(name: "PRAGMA key", sql: "PRAGMA key = 'secret-in-sql-7f3a'"),
        Path(name: "PRAGMA rekey", sql: "PRAGMA rekey = 'secret-in-sql-7f3a'"),
        Path(name: "PRAGMA rekey to empty (decrypt in place)", sql: "PRAGMA rekey = ''"),
        Path(name: "PRAGMA hexkey", sql: "PRAGMA hexkey = '00ff'"),
        Path(name: "PRAGMA hexrekey", sql: "PRAGMA hexrekey = '00ff'"),
        Path(name: "PRAGMA textkey", sql: "PRAGMA textkey = 'secret-in-sql-7f3a'"),
        Path(name: "PRAGMA textrekey", sql: "PRAGMA textrekey = 'secret-in-sql-7f3a'"),
        Path(name: "PRAGMA key on a schema", sql: "PRAGMA \"main\".KEY = 'secret-in-sql-7f3a'"),
    ]

    @Test("Refused with .misuse, naming the typed API; no file holds the marker", arguments: refusedPaths)
    func refused(path: Path) throws {
        let scene = try Scene()
        let error = thrownError { try scene.run(path) }
        if error?.message.hasPrefix("unsafe use of sqlcipher_export()") == true {
            // Refused by the engine before the guard: trusted_schema is off, so a function that is not innocuous
            // does not run from a view (SQLite reports it; the SQL holds no key).
            #expect(error?.kind == .unsafeSchema, "\(String(describing: error))")
        } else {
            try Self.expectGuardRefusal(error)
        }
        // The connection still reads its data with its settings: nothing was changed.
        #expect(try scene.db.scalar(Int.self, "SELECT count(*) FROM t") == Scene.rowCount)
        let openFindings = try scene.scan()
        #expect(openFindings.isEmpty, "\(openFindings)")
        let findings = try scene.closeAndScan()
        #expect(findings.isEmpty, "\(findings)")
    }

    /// A refusal by the guard: .misuse, saying what to use instead, never repeating the SQL (it may hold a key).
    static func expectGuardRefusal(_ error: SQLCipherError?) throws {
        #expect(error?.kind == .misuse, "\(String(describing: error))")
        let advice = ["attach(_:as:key:)", "export(to:key:cipher:)", "CipherSettings", "rekey(to:)", "migrate(path:key:)",
                      "memory", "plaintext", "CREATE, ALTER and DROP"]
        #expect(advice.contains { error?.message.contains($0) == true }, "\(String(describing: error))")
        #expect(error?.sql == nil)
        #expect(error.map { !$0.description.contains("secret-in-sql-7f3a") } == true)
    }

    static let safePaths: [Path] = [
        Path(name: "VACUUM INTO writes an encrypted copy", sql: "VACUUM INTO '{dir}/vacuumed.db'"),
        Path(name: "VACUUM main INTO writes an encrypted copy", sql: "VACUUM main INTO '{dir}/vacuumed.db'"),
        Path(name: "VACUUM temp INTO is a no-op",
             sql: "CREATE TEMP TABLE tt AS SELECT * FROM t; VACUUM temp INTO '{dir}/vacuumed-temp.db'"),
        Path(name: "VACUUM", sql: "VACUUM"),
        Path(name: "temp_store = MEMORY with a temporary table and a sort",
             sql: "PRAGMA temp_store = MEMORY; CREATE TEMP TABLE tt AS SELECT * FROM t; "
                + "SELECT * FROM tt ORDER BY x DESC"),
        Path(name: "journal_mode = WAL, then writes", sql: "PRAGMA journal_mode = WAL; INSERT INTO t SELECT x FROM t"),
        Path(name: "journal_mode = PERSIST, then writes",
             sql: "PRAGMA journal_mode = PERSIST; INSERT INTO t SELECT x FROM t"),
        Path(name: "journal_mode = OFF (no crash safety, still encrypted)",
             sql: "PRAGMA journal_mode = OFF; INSERT INTO t SELECT x FROM t"),
        Path(name: "journal_mode = MEMORY (no crash safety, still encrypted)",
             sql: "PRAGMA journal_mode = MEMORY; INSERT INTO t SELECT x FROM t"),
        Path(name: "secure_delete = OFF", sql: "PRAGMA secure_delete = OFF; "
             + "INSERT INTO t SELECT x FROM t; DELETE FROM t WHERE rowid % 2 = 0"),
        Path(name: "reading cipher pragmas (no value)",
             sql: "PRAGMA cipher_page_size; PRAGMA cipher_use_hmac; PRAGMA cipher_default_kdf_iter; "
                + "PRAGMA cipher_settings; PRAGMA cipher_integrity_check; PRAGMA cipher_version"),
        Path(name: "DETACH", sql: "DETACH DATABASE other"),
    ]

    @Test("Shown safe: runs, and no file holds the marker", arguments: safePaths)
    func safe(path: Path) throws {
        let scene = try Scene()
        if path.sql.contains("DETACH") {
            try scene.db.attach(scene.folder.file("other.db"), as: "other", key: scene.key)
        }
        try scene.run(path)
        #expect(try scene.db.scalar(Int.self, "SELECT count(*) FROM t WHERE x LIKE ?", ["\(scene.marker)%"]) ?? 0 > 0)
        let copy = scene.folder.file("vacuumed.db")
        let openFindings = try scene.scan()
        #expect(openFindings.isEmpty, "\(openFindings)")
        let findings = try scene.closeAndScan()
        #expect(findings.isEmpty, "\(findings)")
        // VACUUM [main] INTO must have written the copy: encrypted (not plaintext, no marker), opening with the
        // same key, holding the rows. No other path writes it.
        let writesCopy = path.sql.contains("INTO '{dir}/vacuumed.db'")
        #expect(FileManager.default.fileExists(atPath: copy) == writesCopy, "\(copy) written: \(!writesCopy)")
        if writesCopy, FileManager.default.fileExists(atPath: copy) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: copy))
            #expect(bytes.count >= 4096 && !bytes.starts(with: Data("SQLite format 3\0".utf8)), "the copy is plaintext")
            #expect(!data(bytes, contains: scene.marker), "the copy holds the marker in plaintext")
            let reopened = try Database(path: copy, key: scene.key, mode: .readOnly)
            #expect(try reopened.scalar(Int.self, "SELECT count(*) FROM t WHERE x LIKE ?", ["\(scene.marker)-%"])
                    == Scene.rowCount)
        }
        #expect(!FileManager.default.fileExists(atPath: scene.folder.file("vacuumed-temp.db")))
    }

    @Test("load_extension is disabled: SQLCipherKit never enables extension loading, so nothing is loaded")
    func loadExtensionDisabled() throws {
        let scene = try Scene()
        let error = thrownError { try scene.db.execute("SELECT load_extension('\(scene.folder.file("x.so"))')") }
        #expect(error?.kind == .sqlite && error?.message == "not authorized", "\(String(describing: error))")
        let findings = try scene.closeAndScan()
        #expect(findings.isEmpty, "\(findings)")
    }

    @Test("Promise 1 on an unencrypted connection too: ATTACH with a key and the key pragmas are refused")
    func plaintextConnectionKeepsKeysOutOfSQL() throws {
        let folder = try TemporaryDirectory()
        let db = try Database(unencryptedPath: folder.file("plain.db"))
        for sql in ["ATTACH '\(folder.file("k.db"))' AS k KEY 'secret-in-sql-7f3a'", "PRAGMA key = 'secret-in-sql-7f3a'",
                    "PRAGMA cipher_default_use_hmac = OFF", "SELECT sqlcipher_export('temp')"] {
            let error = thrownError { try db.execute(sql) }
            #expect(error?.kind == .misuse, "\(sql)")
            #expect(error.map { !$0.description.contains("secret-in-sql-7f3a") } == true)
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file("k.db")))
    }

    @Test("Typed APIs stay the way: attach with a key is encrypted; plaintext only when asked for by name")
    func typedAPIs() throws {
        let scene = try Scene()
        // Encrypted attach: the marker copied into it stays encrypted.
        try scene.db.attach(scene.folder.file("keyed.db"), as: "keyed", key: scene.key)
        try scene.db.execute("CREATE TABLE keyed.t AS SELECT * FROM main.t")
        try scene.db.detach("keyed")
        #expect(try scene.scan().isEmpty)
        // Control: the explicit opt-in writes plaintext, and the scan sees it.
        try scene.db.attachUnencrypted(scene.folder.file("opt-in.db"), as: "plain")
        try scene.db.execute("CREATE TABLE plain.t AS SELECT * FROM main.t")
        try scene.db.detach("plain")
        #expect(try scene.scan() == [scene.folder.file("opt-in.db")])
        // export(to:key: nil) is the other opt-in.
        try scene.db.export(to: scene.folder.file("exported.db"), key: nil)
        #expect(try scene.closeAndScan() == [scene.folder.file("exported.db"), scene.folder.file("opt-in.db")])
    }

    /// The marker scan every promise and route relies on (issue 45: a detector proves in the same run that it sees
    /// what it looks for), in each of the three places it looks: a file under the scene's folder, a file at the top
    /// of the temporary folder written since the scene began, and a file this process holds open after unlinking
    /// it (as SQLite does with its temporary files). Each holds the marker in plaintext and must be found.
    @Test("control: the marker scan finds plaintext in the folder, in the temporary folder, and in an unlinked open file")
    func markerScanControl() throws {
        let scene = try Scene()
        let marker = Data((scene.marker + "-plaintext-control").utf8)
        try FileManager.default.createDirectory(atPath: scene.folder.file("sub"), withIntermediateDirectories: true)
        let inFolder = scene.folder.file("sub/plain.bin")
        #expect(FileManager.default.createFile(atPath: inFolder, contents: marker))
        let temporary = FileManager.default.temporaryDirectory.path + "/sqlcipherkit-scan-control-\(getpid())-\(UUID())"
        #expect(FileManager.default.createFile(atPath: temporary, contents: marker))
        defer { unlink(temporary) }
        let unlinkedPath = scene.folder.file("unlinked.bin")
        #expect(FileManager.default.createFile(atPath: unlinkedPath, contents: marker))
        let held = open(unlinkedPath, O_RDONLY)
        #expect(held >= 0)
        defer { close(held) }
        unlink(unlinkedPath)
        let found = try scene.closeAndScan()
        #expect(found.contains(inFolder), "\(found)")
        #expect(found.contains(temporary), "\(found)")
        #expect(found.contains { $0.hasPrefix("open file ") && $0.contains("unlinked.bin") }, "\(found)")
        #expect(found.count == 3, "only the three planted files: \(found)")
    }

    /// An encrypted database whose `t` holds marker rows, in a fresh folder, written under `configuration`.
    final class Scene {
        static let rowCount = 300
        let folder: TemporaryDirectory
        let marker = "SQLCipherKit-promise-\(UUID().uuidString)"
        let key: Key
        let configuration: CipherConfiguration
        let db: Database
        let started = Date()

        init(configuration: CipherConfiguration = .sqlcipher4) throws {
            folder = try TemporaryDirectory()
            self.configuration = configuration
            key = configuration.keyKind == .rawKey ? try Key.rawKey(hex: Array(randomKeyHex().utf8))
                : try configuration.makeKey()
            db = try Database(path: folder.file("main.db"), key: key, configuration: configuration.database())
            try db.execute("CREATE TABLE t(x)")
            try db.execute("BEGIN")
            let insert = try db.prepare("INSERT INTO t VALUES (?)")
            for index in 0..<Self.rowCount {
                try insert.execute(["\(marker)-\(index)-" + String(repeating: "p", count: 200)])
            }
            try db.execute("COMMIT")
        }

        func run(_ path: Path) throws {
            let sql = path.text(folder: folder.path, marker: marker)
            if path.arguments.isEmpty {
                try db.execute(sql)
            } else {
                let arguments = path.arguments.map { $0.replacingOccurrences(of: "{dir}", with: folder.path) }
                try db.execute(sql, StatementArguments(arguments.map { $0 as (any DatabaseValueConvertible)? }))
            }
        }

        /// Opens the scene's database (or `name` in its folder) again with its key and settings.
        func reopen(_ name: String = "main.db", mode: OpenMode = .readOnly) throws -> Database {
            try Database(path: folder.file(name), key: key, configuration: configuration.database(mode: mode))
        }

        /// Closes the connection (so WAL frames and journals are where they end up), then scans.
        func closeAndScan() throws -> [String] {
            db.close()
            return try scan()
        }

        /// The files holding the marker: under the folder, at the top of TMPDIR (changed since the scene
        /// began; SQLite's temporary folders), or held open by this process (SQLite unlinks its temporary files at once).
        func scan() throws -> [String] {
            var found = Set<String>()
            for (name, contents) in try FileScan.files(under: folder.path, openIn: getpid())
            where data(contents, contains: marker) {
                found.insert(name)
            }
            // SQLite's temporary folders: SQLITE_TMPDIR, TMPDIR, then /var/tmp, /usr/tmp, /tmp.
            let folders = Set([FileManager.default.temporaryDirectory.path, "/var/tmp", "/tmp"]
                + ["SQLITE_TMPDIR", "TMPDIR"].compactMap { ProcessInfo.processInfo.environment[$0] })
            // One stat() an entry: FileManager's attributes also list extended attributes and look the owner up
            // by name, which made this scan most of the route matrix's time (a /tmp of thousands of entries,
            // scanned for each of its cases). Whole seconds: a file up to a second older is scanned too.
            // Other tests' files are there too, their connections' among them: searched by a child process, whose
            // closes drop none of this process's locks (FileScan).
            let since = time_t(started.addingTimeInterval(-1).timeIntervalSince1970.rounded(.down))
            var candidates: [String] = []
            for temporary in folders {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [] {
                    let path = temporary + "/" + name
                    var info = stat()
                    guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_mtim.tv_sec >= since,
                          info.st_size < 64 << 20 else { continue }
                    candidates.append(path)
                }
            }
            found.formUnion(try FileScan.filesContaining(marker, in: candidates))
            return found.sorted()
        }
    }
}
