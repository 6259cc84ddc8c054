import Foundation
import ProcessTestSupport
@testable import SQLCipherKit
import Testing

/// A crash in the middle of a WAL checkpoint can tear the database file's first sector while the WAL still holds
/// page 1 whole (SQLite's walcrash-7). Plain SQLite reads page 1 from the WAL and loses nothing. SQLCipher derived
/// its key from the salt in the torn sector, failed every page's HMAC and called an intact database "not a
/// database"; the pin's local change `kdf-salt-from-wal` reads the salt where the pager reads page 1. The
/// sanitizer part of the test command runs this suite on an engine built with AddressSanitizer and
/// UndefinedBehaviorSanitizer (the change reads the WAL from inside the codec).
@Suite("Reliability: a checkpoint's torn first sector")
struct TornCheckpointTests {
    /// The sector a crash tears (test6.c's crash simulation in walcrash-7 writes 512-byte blocks).
    static let sector = 512

    /// A database of `configuration` whose newest page 1 is in its WAL, copied (file and WAL) while open to
    /// `torn.db` with its first sector overwritten, and the torn file alone (no WAL) to `alone.db`.
    struct Torn {
        let folder: TemporaryDirectory
        let key: Key
        let torn: String, alone: String
        /// The intact file's first 16 bytes.
        let header: Data

        init(_ configuration: CipherConfiguration, key: Key? = nil) throws {
            let label = configuration.name
            folder = try TemporaryDirectory()
            self.key = try key ?? configuration.makeKey()
            let path = folder.file("main.db")
            torn = folder.file("torn.db")
            alone = folder.file("alone.db")
            let db = try Database(path: path, key: self.key, configuration: configuration.database())
            try db.setJournalMode(.wal)
            try db.execute("CREATE TABLE t(x)")
            try db.execute("INSERT INTO t VALUES (?)", "before the checkpoint")
            // Page 1 into the file, the WAL emptied; then a schema change rewrites page 1, whose newest copy is now
            // in the WAL only: what a checkpoint copies over the file's first page, and what a crash can tear.
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            try db.execute("CREATE TABLE u(y)")
            try db.execute("INSERT INTO u VALUES (?)", "after the checkpoint")
            // Copied while the connection is open, so that no checkpoint at close empties the WAL.
            let original = try Data(contentsOf: URL(fileURLWithPath: path))
            let wal = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
            db.close()
            #expect(wal.count > 32, "\(label): the WAL holds frames")
            header = original.prefix(16)

            var tornBytes = original
            var generator = SystemRandomNumberGenerator()
            for index in 0..<TornCheckpointTests.sector { tornBytes[index] = UInt8.random(in: 0...255, using: &generator) }
            #expect(tornBytes.prefix(16) != original.prefix(16), "\(label): the tear changed the salt's bytes")
            try tornBytes.write(to: URL(fileURLWithPath: torn))
            try wal.write(to: URL(fileURLWithPath: torn + "-wal"))
            try tornBytes.write(to: URL(fileURLWithPath: alone))
        }
    }

    @Test("A file whose first sector is torn while the WAL holds page 1 opens, whole, under every cipher configuration",
          arguments: CipherConfiguration.all)
    func tornFirstSector(configuration: CipherConfiguration) throws {
        let label = configuration.name
        let scene = try Torn(configuration)
        let key = scene.key, torn = scene.torn, alone = scene.alone

        // The control: without its WAL, the torn file is refused (its own page 1, and for most configurations its
        // salt, are gone). So the tear is real, and what opens the torn file below is the WAL's page 1.
        let refused = thrownError {
            let copy = try Database(path: alone, key: key, configuration: configuration.database())
            defer { copy.close() }
            return try copy.scalar(Int.self, "SELECT count(*) FROM t")
        }
        #expect(refused != nil, "\(label): the torn file without its WAL opened")

        // The torn file with its WAL: everything committed is there, and the checks pass.
        let reopened = try Database(path: torn, key: key, configuration: configuration.database())
        #expect(try reopened.textValue("SELECT x FROM t") == "before the checkpoint", "\(label)")
        #expect(try reopened.textValue("SELECT y FROM u") == "after the checkpoint", "\(label)")
        #expect(try reopened.textValue("PRAGMA integrity_check") == "ok", "\(label)")
        if configuration.usesHMAC {
            #expect(try reopened.cipherIntegrityCheck().isEmpty, "\(label)")
        }
        try reopened.execute("INSERT INTO u VALUES (?)", "written after the repair")
        reopened.close()

        // The close checkpointed page 1 over the torn sector: the file is whole on its own again.
        let repaired = try Data(contentsOf: URL(fileURLWithPath: torn))
        #expect(repaired.prefix(16) == scene.header, "\(label): the file's first 16 bytes are whole again")
        #expect(!FileManager.default.fileExists(atPath: torn + "-wal"), "\(label): the close emptied the WAL")
        let again = try Database(path: torn, key: key, configuration: configuration.database(mode: .readOnly))
        defer { again.close() }
        #expect(try again.scalar(Int.self, "SELECT count(*) FROM u") == 2, "\(label)")
        #expect(try again.textValue("PRAGMA integrity_check") == "ok", "\(label)")
    }

    @Test("A pool keyed with a passphrase opens a torn file too (its salt is not the file's first bytes)")
    func poolOpensTornFile() throws {
        let configuration = CipherConfiguration(name: "passphrase, KDF 1000 iterations",
                                                cipher: CipherSettings(kdfIterations: 1_000), keyKind: .passphrase)
        let scene = try Torn(configuration)
        let pool = try DatabasePool(path: scene.torn, key: scene.key,
                                    configuration: .init(readerCount: 2, database: configuration.database()))
        #expect(try pool.read { try $0.textValue("SELECT y FROM u") } == "after the checkpoint")
        try pool.write { try $0.execute("INSERT INTO u VALUES ('from the pool')") }
        #expect(try pool.read { try $0.scalar(Int.self, "SELECT count(*) FROM u") } == 2)
        #expect(pool.connectionKeyKinds.readers.allSatisfy { $0 == .rawKeyWithSalt }, "the key was derived once")
        pool.close()
        // A wrong passphrase is still refused, with the same error.
        let wrong = thrownError {
            try DatabasePool(path: scene.torn, key: .passphrase("not the passphrase"),
                             configuration: .init(readerCount: 1, database: configuration.database()))
        }
        #expect(wrong?.kind == .wrongKeyOrNotADatabase, "\(String(describing: wrong))")
    }
}
