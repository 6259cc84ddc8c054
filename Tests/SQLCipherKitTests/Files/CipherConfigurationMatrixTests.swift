import Foundation
import ProcessTestSupport
@testable import SQLCipherKit
import Testing

/// Issue 43: every typed operation and `VACUUM INTO` under every cipher configuration of the matrix
/// (``CipherConfiguration/all``), judged by effect: each copy opens with its key and settings, holds every row,
/// passes `integrity_check` and `cipher_integrity_check`, and holds the marker in plaintext only where the caller
/// asked for plaintext by name (`Database.decrypt`). Before issue 43 every test ran under SQLCipher 4's defaults
/// only, where `VACUUM INTO` happened to work; under any other page size it overflowed the heap (under 4096) or
/// wrote heap memory into the copy (over 4096), and its copy never opened. The sanitizer part of the test command
/// runs this suite on an engine built with AddressSanitizer and UndefinedBehaviorSanitizer.
@Suite("Cipher configurations: every operation, every configuration")
struct CipherConfigurationMatrixTests {
    typealias Scene = SQLPromisesTests.Scene

    /// Expects the file `name` in the scene's folder to open with `key` and `configuration`, hold the scene's rows and
    /// check out, and not to hold the marker in plaintext.
    static func expectCopy(_ name: String, of scene: Scene, key: Key? = nil,
                           configuration: CipherConfiguration? = nil, _ label: String) throws {
        let path = scene.folder.file(name)
        let bytes = try contents(of: path)
        #expect(!data(bytes, contains: scene.marker), "\(label): \(name) holds the marker in plaintext")
        let copy = try Database(path: path, key: key ?? scene.key,
                                configuration: (configuration ?? scene.configuration).database(mode: .readOnly))
        defer { copy.close() }
        #expect(try copy.scalar(Int.self, "SELECT count(*) FROM t WHERE x LIKE ?", ["\(scene.marker)-%"])
                == Scene.rowCount, "\(label): \(name)")
        #expect(try copy.textValue("PRAGMA integrity_check") == "ok", "\(label): \(name)")
        if (configuration ?? scene.configuration).usesHMAC {
            #expect(try copy.cipherIntegrityCheck().isEmpty, "\(label): \(name)")
        }
    }

    @Test("VACUUM and VACUUM INTO with a small cache: the copy opens with the key and settings (issue 43, 1-3)",
          arguments: CipherConfiguration.all)
    func vacuumInto(configuration: CipherConfiguration) throws {
        let scene = try Scene(configuration: configuration)
        let label = configuration.name
        try scene.db.execute("PRAGMA cache_size = 3")
        try scene.db.execute("VACUUM")
        try scene.db.execute("VACUUM INTO '\(scene.folder.file("vacuumed.db"))'")
        try scene.db.execute("VACUUM main INTO 'file:\(scene.folder.file("vacuumed-uri.db"))?reserve=0'")
        // A URI key is refused by the guard; the engine would give the copy the source's key anyway.
        let keyed = thrownError { try scene.db.execute("VACUUM INTO 'file:\(scene.folder.file("keyed.db"))?key='") }
        #expect(keyed?.kind == .misuse, "\(label): \(String(describing: keyed))")
        scene.db.close()
        for name in ["main.db", "vacuumed.db", "vacuumed-uri.db"] {
            try Self.expectCopy(name, of: scene, label)
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: scene.folder.path).sorted()
        #expect(files == ["main.db", "vacuumed-uri.db", "vacuumed.db"], "\(label): \(files)")
    }

    @Test("VACUUM INTO of an attached schema: keyed with that schema's key; a plaintext one on a keyed connection refused",
          arguments: [CipherConfiguration.sqlcipher4] + CipherConfiguration.all.filter { $0.cipher.pageSize == 65536 })
    func vacuumIntoAttachedSchema(configuration: CipherConfiguration) throws {
        let scene = try Scene(configuration: configuration)
        let label = configuration.name
        let otherKey = try Key.rawKey(Array(repeating: 0x42, count: 32))
        try scene.db.attach(scene.folder.file("other.db"), as: "other", key: otherKey)
        try scene.db.execute("CREATE TABLE other.t AS SELECT * FROM main.t")
        try scene.db.attachUnencrypted(scene.folder.file("plain.db"), as: "plain")
        try scene.db.execute("CREATE TABLE plain.p(x); INSERT INTO plain.p VALUES ('public')")
        try scene.db.execute("VACUUM other INTO '\(scene.folder.file("other-copy.db"))'")
        let plain = thrownError { try scene.db.execute("VACUUM plain INTO '\(scene.folder.file("plain-copy.db"))'") }
        #expect(plain?.message.contains("VACUUM INTO is refused") == true, "\(label): \(String(describing: plain))")
        scene.db.close()
        // The attached schema's copy opens with that schema's key (SQLCipher 4's settings, as it was attached).
        try Self.expectCopy("other-copy.db", of: scene, key: otherKey, configuration: .sqlcipher4, label)
        #expect(!FileManager.default.fileExists(atPath: scene.folder.file("plain-copy.db")), "\(label)")
    }

    @Test("A pool's reader runs no VACUUM INTO and cannot leave its transaction; the writer keeps its own (issue 43, 1 and 5)",
          arguments: [CipherConfiguration.sqlcipher4] + CipherConfiguration.all.filter { $0.cipher.pageSize == 1024
                                                                                       || $0.cipher.compatibility == 3 })
    func poolKeepsItsTransactions(configuration: CipherConfiguration) throws {
        let scene = try Scene(configuration: configuration)
        scene.db.close()
        let label = configuration.name
        let pool = try DatabasePool(path: scene.folder.file("main.db"), key: scene.key,
                                    configuration: .init(database: configuration.database()))
        defer { pool.close() }
        let copy = scene.folder.file("reader-copy.db")
        // The reproduction through a reader: leave the read transaction, VACUUM INTO, begin again.
        let escape = thrownError {
            try pool.read { try $0.execute("COMMIT; PRAGMA cache_size = 3; VACUUM INTO '\(copy)'; BEGIN") }
        }
        #expect(escape?.kind == .misuse, "\(label): \(String(describing: escape))")
        // Inside the reader's transaction SQLite refuses any VACUUM; outside one (a read-only Database), the guard.
        let direct = thrownError { try pool.read { try $0.execute("VACUUM INTO '\(copy)'") } }
        #expect(direct != nil, "\(label): a reader ran VACUUM INTO")
        let readOnly = try scene.reopen()
        let outside = thrownError { try readOnly.execute("VACUUM INTO '\(copy)'") }
        #expect(outside?.kind == .misuse, "\(label): \(String(describing: outside))")
        let unguarded = thrownError { try readOnly.execute("PRAGMA query_only = OFF; DELETE FROM t") }
        #expect(unguarded?.kind == .misuse, "\(label): \(String(describing: unguarded))")
        readOnly.close()
        let writable = thrownError { try pool.read { try $0.execute("PRAGMA query_only = OFF") } }
        #expect(writable?.kind == .misuse, "\(label): \(String(describing: writable))")
        let write = thrownError { try pool.read { try $0.execute("DELETE FROM t") } }
        #expect(write?.kind == .readOnly, "\(label): a reader wrote: \(String(describing: write))")
        #expect(!FileManager.default.fileExists(atPath: copy), "\(label): a reader wrote \(copy)")
        // The writer: SQL text can neither commit the library's transaction early nor roll it back.
        for sql in ["COMMIT", "END", "ROLLBACK", "BEGIN", "RELEASE sqlcipherkit_savepoint_1"] {
            let error = thrownError {
                try pool.write { db in
                    try db.execute("INSERT INTO t VALUES ('inside')")
                    try db.savepoint { try db.execute(sql) }
                    throw CancellationError()
                }
            }
            #expect(error?.kind == .misuse, "\(label): \(sql): \(String(describing: error))")
        }
        // Nothing of the failed writes stayed: each was rolled back whole, as the caller asked by throwing.
        #expect(try pool.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") } == Scene.rowCount, "\(label)")
        // The caller's own savepoints still work inside the library's transaction.
        try pool.write { db in
            try db.execute("SAVEPOINT mine; INSERT INTO t VALUES ('undone'); ROLLBACK TO mine; RELEASE mine")
        }
        #expect(try pool.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") } == Scene.rowCount, "\(label)")
    }

    @Test("export, backup, rekey, attach, decrypt, encrypt and migrate: every copy opens with its key and settings",
          arguments: CipherConfiguration.all)
    func typedOperations(configuration: CipherConfiguration) throws {
        let scene = try Scene(configuration: configuration)
        let label = configuration.name
        let db = scene.db
        // export, under the same settings and under SQLCipher 4's.
        try db.export(to: scene.folder.file("exported.db"), key: scene.key, cipher: configuration.cipher)
        try db.export(to: scene.folder.file("exported-v4.db"), key: scene.key)
        // backup: the copy takes the source's settings.
        try db.backup(to: scene.folder.file("backup.db"), key: scene.key)
        // attach: a new file under SQLCipher 4's settings, written from this connection.
        try db.attach(scene.folder.file("attached.db"), as: "other", key: scene.key)
        try db.execute("CREATE TABLE other.t AS SELECT * FROM main.t")
        try db.detach("other")
        db.close()
        try Self.expectCopy("main.db", of: scene, label)
        try Self.expectCopy("exported.db", of: scene, label)
        try Self.expectCopy("exported-v4.db", of: scene, configuration: .sqlcipher4, label)
        try Self.expectCopy("backup.db", of: scene, label)
        try Self.expectCopy("attached.db", of: scene, configuration: .sqlcipher4, label)
        // rekey, in place.
        let newKey = try configuration.makeKey(0x5a)
        do {
            let reopened = try scene.reopen(mode: .readWrite)
            try reopened.rekey(to: newKey)
            reopened.close()
        }
        try Self.expectCopy("main.db", of: scene, key: newKey, label)
        // decrypt (plaintext, asked for by name), then encrypt again under the configuration.
        try FileManager.default.copyItem(atPath: scene.folder.file("exported.db"), toPath: scene.folder.file("round.db"))
        try Database.decrypt(path: scene.folder.file("round.db"), key: scene.key, cipher: configuration.cipher)
        #expect(data(try contents(of: scene.folder.file("round.db")), contains: scene.marker),
                "\(label): decrypt wrote no plaintext")
        try Database.encrypt(path: scene.folder.file("round.db"), key: scene.key, cipher: configuration.cipher)
        try Self.expectCopy("round.db", of: scene, label)
        // migrate: SQLCipher 1 to 3's files become SQLCipher 4's.
        if configuration.isEarlierVersion {
            try Database.migrate(path: scene.folder.file("exported.db"), key: scene.key)
            try Self.expectCopy("exported.db", of: scene, configuration: .sqlcipher4, label)
        }
    }

    @Test("A plaintext pool beside an encrypted one: neither changes the other, nor the process (issue 43, 4)")
    func plaintextPoolBesideAnEncryptedOne() throws {
        let scene = try Scene(configuration: CipherConfiguration.all.first { $0.cipher.pageSize == 1024 }!)
        scene.db.close()
        let plainPath = scene.folder.file("plain.db")
        let plain = try DatabasePool(unencryptedPath: plainPath)
        defer { plain.close() }
        let encrypted = try DatabasePool(path: scene.folder.file("main.db"), key: scene.key,
                                         configuration: .init(database: scene.configuration.database()))
        defer { encrypted.close() }
        try plain.write { try $0.execute("CREATE TABLE p(x); INSERT INTO p VALUES ('public')") }
        for sql in ["PRAGMA hard_heap_limit = 300000", "PRAGMA soft_heap_limit = 300000",
                    "PRAGMA temp_store_directory = '\(scene.folder.path)'", "PRAGMA cipher_default_page_size = 1024"] {
            let error = thrownError { try plain.write { try $0.execute(sql) } }
            #expect(error?.kind == .misuse, "\(sql): \(String(describing: error))")
        }
        #expect(SQLRoutesTests.processState() == SQLRoutesTests.restingProcessState)
        #expect(try encrypted.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") } == Scene.rowCount)
        // A new connection with another key still opens (the heap limit would have starved it).
        let other = try Database(path: scene.folder.file("other.db"), key: .passphrase("other"),
                                 configuration: .init(cipher: CipherSettings(kdfIterations: 1_000)))
        try other.execute("CREATE TABLE o(x); INSERT INTO o VALUES (1)")
        other.close()
    }

    @Test("A 512-byte page is a typed error naming the limit, not SQLite's 'out of memory' at the first write")
    func pageTooSmall() throws {
        let folder = try TemporaryDirectory()
        for cipher in [CipherSettings(pageSize: 512), CipherSettings(pageSize: 512, usesHMAC: false),
                       CipherSettings(compatibility: 3, pageSize: 512)] {
            let error = thrownError {
                try Database(path: folder.file("small.db"), key: .rawKey(Array(repeating: 7, count: 32)),
                             configuration: .init(cipher: cipher))
            }
            #expect(error?.kind == .invalidArgument && error?.message.contains("1024 or more") == true,
                    "\(cipher): \(String(describing: error))")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test("Engine.setHeapLimits is the typed way to the process-wide heap limits")
    func heapLimits() throws {
        #expect(Engine.heapLimits == Engine.HeapLimits())
        #expect(thrownError { try Engine.setHeapLimits(.init(soft: -1)) }?.kind == .invalidArgument)
        #expect(Engine.heapLimits == Engine.HeapLimits())
    }
}
