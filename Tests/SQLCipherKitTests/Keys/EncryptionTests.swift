import Foundation
import ProcessTestSupport
import Testing
@testable import SQLCipherKit

/// Everything about what reaches the disk: encrypted bytes, wrong keys, untouched files.
@Suite("Encryption")
struct EncryptionTests {
    private static let plaintextHeader = Data("SQLite format 3\0".utf8)

    /// Writes a table holding `marker` with `key`, and closes.
    private func writeMarker(_ marker: String, to path: String, key: Key) throws {
        let database = try Database(path: path, key: key)
        try database.execute("CREATE TABLE t(v TEXT); INSERT INTO t VALUES('\(marker)')")
        database.close()
    }

    @Test("a passphrase database is encrypted at rest and reads back", arguments: [
        "passphrase", "raw key", "raw key with salt",
    ])
    func encryptedAtRest(kindName: String) throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("secret.db")
        let marker = "plaintext-marker-\(UUID().uuidString)"
        let key: Key = switch kindName {
        case "passphrase": try .passphrase("correct horse battery staple")
        case "raw key": try .rawKey([UInt8](repeating: 0x5a, count: 32))
        default: try .rawKey([UInt8](repeating: 0x5a, count: 32), salt: [UInt8](repeating: 0x11, count: 16))
        }
        try writeMarker(marker, to: path, key: key)

        let bytes = try contents(of: path)
        #expect(bytes.count >= 4096)
        #expect(bytes.prefix(16) != Self.plaintextHeader)
        #expect(!data(bytes, contains: marker))
        #expect(!data(bytes, contains: "CREATE TABLE"))

        let reader = try Database(path: path, key: key, mode: .readOnly)
        #expect(try reader.textValue("SELECT v FROM t") == marker)
    }

    @Test("a raw key with salt: the salt is the file's first 16 bytes")
    func rawKeySaltIsFileHeader() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("salted.db")
        let salt = (0..<16).map { UInt8($0 + 100) }
        try writeMarker("m", to: path, key: .rawKey([UInt8](repeating: 3, count: 32), salt: salt))
        #expect(Array(try contents(of: path).prefix(16)) == salt)
    }

    @Test("a wrong key fails at open with a typed error and leaves the file unchanged")
    func wrongKey() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("secret.db")
        try writeMarker("m", to: path, key: .passphrase("right"))
        let before = try contents(of: path)
        let namesBefore = try folder.names()

        for (key, mode) in [(try Key.passphrase("wrong"), OpenMode.readWriteCreate),
                            (try Key.passphrase("wrong"), .readOnly),
                            (try Key.rawKey([UInt8](repeating: 9, count: 32)), .readWrite)] {
            #expect(thrownError { try Database(path: path, key: key, mode: mode) }?.kind == .wrongKeyOrNotADatabase)
        }
        #expect(try contents(of: path) == before)
        #expect(try folder.names() == namesBefore)
        // And the right key still opens it.
        #expect(try Database(path: path, key: .passphrase("right")).textValue("SELECT v FROM t") == "m")
    }

    @Test("a plaintext SQLite file is not opened as if it were encrypted")
    func plaintextFileIsNotADatabaseUnderAKey() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("plain.db")
        // A valid plaintext database header and page, as any SQLite would write it.
        var page = Data(count: 4096)
        page.replaceSubrange(0..<16, with: Self.plaintextHeader)
        try writeFile(path, page)
        #expect(thrownError { try Database(path: path, key: .passphrase("k")) }?.kind == .wrongKeyOrNotADatabase)
        #expect(try contents(of: path) == page)
    }

    @Test("a file that is no database is reported as such, untouched")
    func garbageFile() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("notes.txt")
        let text = Data(String(repeating: "not a database at all\n", count: 400).utf8)
        try writeFile(path, text)
        #expect(thrownError { try Database(path: path, key: .passphrase("k")) }?.kind == .wrongKeyOrNotADatabase)
        #expect(try contents(of: path) == text)
    }

    @Test("error descriptions never contain the key")
    func errorsDoNotLeakTheKey() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("secret.db")
        try writeMarker("m", to: path, key: .passphrase("right"))
        let secret = "leak-canary-\(UUID().uuidString)"
        do {
            _ = try Database(path: path, key: .passphrase(secret))
            Issue.record("a wrong key opened the database")
        } catch {
            #expect(!error.description.localizedCaseInsensitiveContains(secret))
            #expect(!String(reflecting: error).localizedCaseInsensitiveContains(secret))
            #expect(error.description.contains("key does not open"))
        }
    }
}
