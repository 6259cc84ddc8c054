import CSQLCipher
import Foundation
import ProcessTestSupport
import Testing
@testable import SQLCipherKit

/// Files written by SQLCipher 1 to 4 (SQLCipher's own samples), opened, detected and migrated.
@Suite("Compatibility with SQLCipher 1–4 files")
struct CompatibilityTests {
    /// The samples, their format, and the row count of t1 in upstream `test/sqlcipher-compatibility.test`.
    static let samples: [(file: String, version: Int, rows: Int)] = [
        ("sqlcipher-1.1.8-testkey.db", 1, 75709),
        ("sqlcipher-2.0-le-testkey.db", 2, 78536),
        ("sqlcipher-3.0-testkey.db", 3, 78536),
        ("sqlcipher-4.0-testkey.db", 4, 78536),
    ]

    @Test("each sample opens with explicit settings and has upstream's row count", arguments: samples)
    func explicitSettings(sample: (file: String, version: Int, rows: Int)) throws {
        let folder = try TemporaryDirectory()
        let path = try Fixtures.copy(sample.file, into: folder)
        let before = try contents(of: path)
        let explicit: CipherSettings = switch sample.version {
        case 1: CipherSettings(pageSize: 1024, kdfIterations: 4000, usesHMAC: false, kdfAlgorithm: .sha1)
        case 2: CipherSettings(pageSize: 1024, kdfIterations: 4000, hmacAlgorithm: .sha1, kdfAlgorithm: .sha1)
        case 3: CipherSettings(pageSize: 1024, kdfIterations: 64000, hmacAlgorithm: .sha1, kdfAlgorithm: .sha1)
        default: CipherSettings()
        }
        for settings in [explicit, CipherSettings(compatibility: sample.version)] {
            let database = try Database(path: path, key: .passphrase("testkey"),
                                        configuration: .init(mode: .readOnly, cipher: settings))
            #expect(try database.scalar(Int.self, "SELECT count(*) FROM t1") == sample.rows)
            // Upstream's expected `SELECT DISTINCT * FROM t1`, flattened as its Tcl test prints it.
            let printed = try database.fetchAll("SELECT DISTINCT * FROM t1").flatMap(\.values).map { value in
                switch value {
                case .integer(let integer): String(integer)
                case .text(let text): text
                default: "\(value)"
                }
            }
            #expect(printed == ["1", "1", "one", "one", "1", "2", "one", "two"] + (sample.version == 1 ? ["1", "2"] : []))
        }
        #expect(try contents(of: path) == before, "reading changed the file")
    }

    @Test("format detection names each sample's SQLCipher version", arguments: samples)
    func detection(sample: (file: String, version: Int, rows: Int)) throws {
        let folder = try TemporaryDirectory()
        let path = try Fixtures.copy(sample.file, into: folder)
        let before = try contents(of: path)
        let format = try Database.detectFormat(path: path, key: .passphrase("testkey"))
        #expect(format == .sqlcipher(version: sample.version))
        let database = try Database(path: path, key: .passphrase("testkey"),
                                    configuration: .init(mode: .readOnly, cipher: try #require(format.cipherSettings)))
        #expect(try database.scalar(Int.self, "SELECT count(*) FROM t1") == sample.rows)
        #expect(try contents(of: path) == before, "detection changed the file")
        #expect(thrownError { try Database.detectFormat(path: path, key: .passphrase("wrong")) }?.kind
            == .wrongKeyOrNotADatabase)
    }

    @Test("format detection recognises plain SQLite, and a missing file")
    func detectionOfPlainSQLite() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("plain.db")
        let plain = try Database(unencryptedPath: path)
        try plain.execute("CREATE TABLE t(a); INSERT INTO t VALUES (1)")
        plain.close()
        #expect(try Database.detectFormat(path: path, key: .passphrase("any")) == .plaintext)
        #expect(thrownError { try Database.detectFormat(path: folder.file("none.db"), key: .passphrase("k")) }?.kind
            == .cannotOpen)
    }

    @Test("the 1.x, 2.x and 3.x samples migrate to SQLCipher 4", arguments: samples.dropLast())
    func migrateSamples(sample: (file: String, version: Int, rows: Int)) throws {
        let folder = try TemporaryDirectory()
        let path = try Fixtures.copy(sample.file, into: folder)
        try Database.migrate(path: path, key: .passphrase("testkey"))
        #expect(try Database.detectFormat(path: path, key: .passphrase("testkey")) == .sqlcipher(version: 4))
        let database = try Database(path: path, key: .passphrase("testkey"))
        #expect(try database.scalar(Int.self, "SELECT count(*) FROM t1") == sample.rows)
        #expect(try database.cipherSettings().kdfIterations == 256_000)
    }

    @Test("a database created with compatibility 3 is SQLCipher 3, then migrates to 4")
    func createCompatibility3ThenMigrate() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("v3.db")
        let key = try Key.passphrase("three")
        let marker = "v3-marker-\(UUID().uuidString)"
        let v3 = try Database(path: path, key: key, configuration: .init(cipher: CipherSettings(compatibility: 3)))
        #expect(try v3.cipherSettings() == CipherSettings(pageSize: 1024, kdfIterations: 64000, usesHMAC: true,
            hmacAlgorithm: .sha1, kdfAlgorithm: .sha1, plaintextHeaderSize: 0, memorySecurity: false))
        try v3.execute("CREATE TABLE t(v)")
        try v3.execute("INSERT INTO t VALUES (?)", [marker])
        v3.close()
        #expect(thrownError { try Database(path: path, key: key) }?.kind == .wrongKeyOrNotADatabase,
                "SQLCipher 4 settings must not open a version 3 file")
        #expect(try Database.detectFormat(path: path, key: key) == .sqlcipher(version: 3))

        try Database.migrate(path: path, key: key)
        let v4 = try Database(path: path, key: key)
        #expect(try v4.scalar(String.self, "SELECT v FROM t") == marker)
        #expect(try !data(contents(of: path), contains: marker))
    }

    @Test("migrate refuses a crafted SQLCipher 3 file whose schema row holds more than its CREATE; nothing written (issue 43, 6)")
    func migrateRefusesForeignSchemaRows() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("crafted-v3.db")
        let passphrase = "crafted"
        do {
            let v3 = try Database(path: path, key: .passphrase(passphrase),
                                  configuration: .init(cipher: CipherSettings(compatibility: 3)))
            try v3.execute("CREATE TABLE t(a); INSERT INTO t VALUES ('crafted-row')")
            v3.close()
        }
        // Another writer's file: a connection without SQLCipherKit's guard or defensive mode rewrites the row.
        var raw: OpaquePointer?
        #expect(sqlite3_open(path, &raw) == SQLITE_OK)
        _ = sqlite3_key_v2(raw, nil, passphrase, Int32(passphrase.utf8.count))
        let crafted = "PRAGMA cipher_compatibility = 3; PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = "
            + "'CREATE TABLE t(a); ATTACH ''\(folder.file("attached.db"))'' AS y KEY ''''' WHERE name = 't'"
        #expect(sqlite3_exec(raw, crafted, nil, nil, nil) == SQLITE_OK, "\(String(cString: sqlite3_errmsg(raw)))")
        sqlite3_close(raw)
        let before = try contents(of: path)
        let error = thrownError { try Database.migrate(path: path, key: .passphrase(passphrase)) }
        #expect(error?.kind == .misuse, "\(String(describing: error))")
        #expect(error?.message.contains("schema row of table 't' holds more than one statement") == true,
                "\(String(describing: error))")
        #expect(try contents(of: path) == before, "the file changed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["crafted-v3.db"])
        // The review's way past the check: a one-byte "hot" journal beside the file, which the check's read-only
        // connection cannot roll back (and which it took for a wrong key), while cipher_migrate's can.
        try writeFile(path + "-journal", "\u{01}")
        let journaled = thrownError { try Database.migrate(path: path, key: .passphrase(passphrase)) }
        #expect(journaled != nil && journaled?.kind != .wrongKeyOrNotADatabase, "\(String(describing: journaled))")
        #expect(journaled?.message.contains("migrate checks the file's schema") == true,
                "\(String(describing: journaled))")
        #expect(try contents(of: path) == before, "the file changed")
    }

    @Test("migrate with the wrong key fails and leaves the file unchanged")
    func migrateWrongKey() throws {
        let folder = try TemporaryDirectory()
        let path = try Fixtures.copy("sqlcipher-3.0-testkey.db", into: folder)
        let before = try contents(of: path)
        #expect(thrownError { try Database.migrate(path: path, key: .passphrase("nope")) }?.kind
            == .wrongKeyOrNotADatabase)
        #expect(try contents(of: path) == before)
    }
}
