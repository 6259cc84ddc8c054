import ProcessTestSupport
import SQLCipherKit
import Testing

/// The authorizer every connection carries (Sources/SQLCipherKit/Connection/SQLGuard.swift).
@Suite("SQL guard")
struct SQLGuardTests {
    @Test("An encrypted connection refuses temp_store = FILE, which would write temporary files in plaintext")
    func encryptedConnectionRefusesTemporaryFiles() throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.file("guard.db"), key: .rawKey(hex: Array(randomKeyHex().utf8)))
        for request in ["PRAGMA temp_store = FILE", "PRAGMA temp_store = 1", "PRAGMA main.temp_store = 'file'"] {
            let error = thrownError { try db.execute(request) }
            #expect(error?.kind == .misuse, "\(request)")
            #expect(error?.message.contains("temporary files are not encrypted") == true, "\(String(describing: error))")
        }
        #expect(try db.scalar(Int.self, "PRAGMA temp_store") == 0)
        try db.execute("PRAGMA temp_store = MEMORY")
        try db.execute("PRAGMA temp_store = DEFAULT")
        #expect(try db.scalar(Int.self, "PRAGMA temp_store") == 0)
    }

    @Test("A plaintext connection may use temporary files (nothing there is encrypted anyway)")
    func plaintextConnectionAllowsTemporaryFiles() throws {
        let folder = try TemporaryDirectory()
        let db = try Database(unencryptedPath: folder.file("plain.db"))
        try db.execute("PRAGMA temp_store = FILE")
        #expect(try db.scalar(Int.self, "PRAGMA temp_store") == 1)
    }

    @Test("Key pragmas are refused on every connection: keys never travel in SQL text",
          arguments: ["PRAGMA key = 'secret'", "PRAGMA rekey = 'secret'", "PRAGMA hexkey = '00ff'",
                      "PRAGMA hexrekey = '00ff'", "PRAGMA textkey = 'secret'", "PRAGMA main.REKEY = 'secret'"])
    func keyPragmasRefused(sql: String) throws {
        let folder = try TemporaryDirectory()
        let encrypted = try Database(path: folder.file("e.db"), key: .rawKey(hex: Array(randomKeyHex().utf8)))
        let plain = try Database(unencryptedPath: folder.file("p.db"))
        for db in [encrypted, plain] {
            try db.execute("CREATE TABLE IF NOT EXISTS t(x); INSERT INTO t VALUES (1)")
            #expect(thrownError { try db.execute(sql) }?.kind == .misuse)
            #expect(try db.scalar(Int.self, "SELECT count(*) FROM t") == 1)
        }
        encrypted.close()
        plain.close()
        // Nothing was keyed: the plaintext file is still plaintext.
        #expect(data(try contents(of: folder.file("p.db")), contains: "SQLite format 3"))
    }
}
