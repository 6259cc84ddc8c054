import Foundation
import ProcessTestSupport
import Testing
@testable import SQLCipherKit

@Suite("Plaintext header and integrity")
struct PlaintextHeaderTests {
    private static let plaintextHeader = Data("SQLite format 3\0".utf8)

    @Test("a new database with a 32-byte plaintext header and an external salt")
    func newDatabaseWithPlaintextHeader() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("header.db")
        let salt = (0..<16).map { UInt8(0xa0 + $0) }
        let marker = "header-marker-\(UUID().uuidString)"
        let settings = CipherSettings(plaintextHeaderSize: 32, salt: salt)
        let database = try Database(path: path, key: .passphrase("k"), configuration: .init(cipher: settings))
        try database.execute("CREATE TABLE t(v)")
        try database.execute("INSERT INTO t VALUES (?)", [marker])
        #expect(try database.cipherSalt() == salt)
        database.close()

        let bytes = try contents(of: path)
        #expect(bytes.prefix(16) == Self.plaintextHeader)
        #expect(!data(bytes, contains: marker))
        #expect(try Database(path: path, key: .passphrase("k"), configuration: .init(cipher: settings))
            .scalar(String.self, "SELECT v FROM t") == marker)
        // Without the salt it cannot open: refused up front, before anything is read.
        #expect(thrownError {
            try Database(path: path, key: .passphrase("k"),
                         configuration: .init(cipher: CipherSettings(plaintextHeaderSize: 32)))
        }?.kind == .invalidArgument)
        // A raw key with the wrong salt is simply the wrong key.
        #expect(thrownError {
            try Database(path: path, key: .rawKey([UInt8](repeating: 1, count: 32), salt: [UInt8](repeating: 2, count: 16)),
                         configuration: .init(cipher: CipherSettings(plaintextHeaderSize: 32)))
        }?.kind == .wrongKeyOrNotADatabase)
        #expect(thrownError { try Database(path: path, key: .passphrase("k")) }?.kind == .wrongKeyOrNotADatabase)
    }

    @Test("an existing database migrates to a plaintext header, in rollback and WAL mode",
          arguments: [Database.JournalMode.delete, .wal])
    func migrateExisting(journalMode: Database.JournalMode) throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("existing.db")
        let marker = "migrate-header-marker-\(UUID().uuidString)"
        let key = try Key.passphrase("existing")
        let database = try Database(path: path, key: key)
        try database.setJournalMode(journalMode)
        try database.execute("CREATE TABLE t(v)")
        try database.execute("INSERT INTO t VALUES (?)", [marker])
        try database.setUserVersion(3)
        database.close()
        let originalSalt = Array(try contents(of: path).prefix(16))

        let salt = try Database.migrateToPlaintextHeader(path: path, key: key)
        #expect(salt == originalSalt)
        let bytes = try contents(of: path)
        #expect(bytes.prefix(16) == Self.plaintextHeader)
        #expect(!data(bytes, contains: marker))

        let settings = CipherSettings(plaintextHeaderSize: 32, salt: salt)
        let reopened = try Database(path: path, key: key, configuration: .init(cipher: settings))
        #expect(try reopened.scalar(String.self, "SELECT v FROM t") == marker)
        #expect(try reopened.userVersion() == 3)
        #expect(try reopened.journalMode() == journalMode)
        reopened.close()
        // Without the salt, refused: the file alone cannot tell it.
        #expect(thrownError {
            try Database(path: path, key: key, configuration: .init(cipher: CipherSettings(plaintextHeaderSize: 32)))
        }?.kind == .invalidArgument)
    }

    @Test("cipher_integrity_check names the page whose byte was flipped; integrity_check passes when intact")
    func cipherIntegrityCheck() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("integrity.db")
        let key = try Key.passphrase("integrity")
        let database = try Database(path: path, key: key)
        try database.execute("CREATE TABLE t(v)")
        try database.transaction {
            let insert = try database.prepare("INSERT INTO t VALUES (?)")
            for index in 0..<200 { try insert.execute([String(repeating: "row \(index) ", count: 10)]) }
        }
        #expect(try database.cipherIntegrityCheck().isEmpty)
        #expect(try database.integrityCheck().isEmpty)
        database.close()

        var bytes = try contents(of: path)
        #expect(bytes.count >= 4096 * 4)
        bytes[4096 * 2 + 1000] ^= 0x01  // a data byte of page 3
        try writeFile(path, bytes)

        let damaged = try Database(path: path, key: key)
        let problems = try damaged.cipherIntegrityCheck()
        #expect(problems == [Database.CipherIntegrityProblem(message: "HMAC verification failed for page 3", page: 3)])
        // Reading the damaged page fails as corrupt, never as silently wrong data.
        #expect(thrownError { try damaged.fetchAll("SELECT v FROM t") }?.kind == .corrupt)
    }

    @Test("an export to a plaintext header without a salt is refused: the file could never be opened")
    func exportNeedsSalt() throws {
        let folder = try TemporaryDirectory()
        let database = try Database(path: folder.file("a.db"), key: .passphrase("k"))
        try database.execute("CREATE TABLE t(a)")
        #expect(thrownError {
            try database.export(to: folder.file("b.db"), key: .passphrase("k"), cipher: CipherSettings(plaintextHeaderSize: 32))
        }?.kind == .invalidArgument)
        #expect(try folder.names() == ["a.db"])
    }

    @Test("cipher settings out of range are typed errors, before anything is opened")
    func invalidSettings() throws {
        let folder = try TemporaryDirectory()
        let invalid = [
            CipherSettings(compatibility: 5), CipherSettings(pageSize: 1000), CipherSettings(pageSize: 131_072),
            CipherSettings(kdfIterations: 0), CipherSettings(plaintextHeaderSize: 24),
            CipherSettings(plaintextHeaderSize: 4096), CipherSettings(salt: [1, 2, 3]),
        ]
        for settings in invalid {
            #expect(thrownError {
                try Database(path: folder.file("x.db"), key: .passphrase("k"), configuration: .init(cipher: settings))
            }?.kind == .invalidArgument, "\(settings)")
        }
        #expect(try folder.names().isEmpty)
    }

    @Test("cipher settings are applied after the key and read back")
    func settingsApplied() throws {
        let folder = try TemporaryDirectory()
        let settings = CipherSettings(pageSize: 8192, kdfIterations: 10_000, usesHMAC: true, hmacAlgorithm: .sha256,
                                      kdfAlgorithm: .sha256)
        let database = try Database(path: folder.file("s.db"), key: .passphrase("k"),
                                    configuration: .init(cipher: settings))
        let current = try database.cipherSettings()
        #expect(current.pageSize == 8192)
        #expect(current.kdfIterations == 10_000)
        #expect(current.hmacAlgorithm == .sha256)
        #expect(current.kdfAlgorithm == .sha256)
        #expect(current.usesHMAC == true)
        try database.execute("CREATE TABLE t(a)")
        database.close()
        #expect(thrownError { try Database(path: folder.file("s.db"), key: .passphrase("k")) }?.kind
            == .wrongKeyOrNotADatabase, "defaults must not open a file written with other settings")
    }
}
