import Foundation
import ProcessTestSupport
import Synchronization
import Testing
@testable import SQLCipherKit

/// Rekey, export, encrypt and decrypt in place, attach: every path that moves data between keys.
@Suite("Cipher operations")
struct CipherOperationTests {
    private static var rawKey: Key {
        get throws { try Key.rawKey((0..<32).map { UInt8($0) }) }
    }

    /// Creates a database at `path` with a table holding `marker` (and some bulk), closed.
    private func create(_ path: String, key: Key?, marker: String) throws {
        let database = if let key { try Database(path: path, key: key) } else { try Database(unencryptedPath: path) }
        try database.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try database.transaction {
            try database.execute("INSERT INTO t(v) VALUES (?)", [marker])
            let insert = try database.prepare("INSERT INTO t(v) VALUES (?)")
            for index in 0..<500 { try insert.execute(["filler \(index) " + String(repeating: "x", count: 50)]) }
        }
        database.close()
    }

    /// The marker read back through `database`.
    private func readMarker(in database: Database) throws -> String? {
        try database.scalar(String.self, "SELECT v FROM t WHERE id = 1")
    }

    private func isPlaintext(_ path: String) throws -> Bool {
        try contents(of: path).prefix(16) == Data("SQLite format 3\0".utf8)
    }

    @Test("rekey passphrase → raw → raw with salt → passphrase, reopening each time")
    func rekeyChain() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("rekey.db")
        let marker = "rekey-marker-\(UUID().uuidString)"
        let first = try Key.passphrase("first passphrase")
        try create(path, key: first, marker: marker)

        let salt = Array(try contents(of: path).prefix(16))
        let withSalt = try Key.rawKey((0..<32).map { UInt8(255 - $0) }, salt: salt)
        let last = try Key.passphrase("läst pässphrase")
        var current = first
        for next in [try Self.rawKey, withSalt, last] {
            let database = try Database(path: path, key: current)
            try database.rekey(to: next)
            database.close()
            #expect(thrownError { try Database(path: path, key: current) }?.kind == .wrongKeyOrNotADatabase,
                    "the old key still opens the file")
            let reopened = try Database(path: path, key: next)
            #expect(try readMarker(in: reopened) == marker)
            #expect(try reopened.integrityCheck().isEmpty)
            current = next
        }
        #expect(try !data(contents(of: path), contains: marker))
    }

    @Test("a rekey that cannot lock the database throws, keeps the old key, and loses nothing")
    func contendedRekey() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("contended.db")
        let marker = "contended-\(UUID().uuidString)"
        try create(path, key: .passphrase("old"), marker: marker)
        let rekeyer = try Database(path: path, key: .passphrase("old"), configuration: .init(busyTimeout: .milliseconds(100)))
        let holder = try Database(path: path, key: .passphrase("old"))
        try holder.execute("BEGIN EXCLUSIVE")
        let error = thrownError { try rekeyer.rekey(to: .passphrase("new")) }
        #expect(error?.kind == .busy, "\(String(describing: error))")
        #expect(rekeyer.isClosed, "a connection whose write key may be wrong must not stay open")
        try holder.execute("ROLLBACK")
        holder.close()
        let reopened = try Database(path: path, key: .passphrase("old"))
        #expect(try readMarker(in: reopened) == marker)
        #expect(try reopened.cipherIntegrityCheck().isEmpty)
        #expect(thrownError { try Database(path: path, key: .passphrase("new")) }?.kind == .wrongKeyOrNotADatabase)
    }

    @Test("encrypt in place refuses a database another connection has open in WAL mode")
    func encryptWhileOpenElsewhere() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("shared.db")
        let other = try Database(unencryptedPath: path)
        try other.setJournalMode(.wal)
        try other.execute("CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('before')")
        #expect(thrownError { try Database.encrypt(path: path, key: .passphrase("k")) }?.kind == .busy)
        try other.execute("INSERT INTO t VALUES ('after')")
        other.close()
        #expect(try folder.names() == ["shared.db"])
        let check = try Database(unencryptedPath: path)
        #expect(try check.scalar(Int.self, "SELECT count(*) FROM t") == 2, "a write was lost")
    }

    @Test("checkIntegrity, inspect and detectFormat leave a WAL database's folder as they found it; their connection cannot write")
    func inspectionsLeaveTheFolder() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("wal.db")
        let key = try Self.rawKey
        let writer = try Database(path: path, key: key)
        try writer.setJournalMode(.wal)
        try writer.execute("CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('kept')")
        writer.close()
        let bytes = try contents(of: path)
        try #require(try folder.names() == ["wal.db"])
        let report = try Database.checkIntegrity(path: path, key: key)
        #expect(report.failures.isEmpty && report.notes.isEmpty, "\(report)")
        #expect(try folder.names() == ["wal.db"], "checkIntegrity left side files")
        #expect(try Database.inspect(path: path, key: key).format == .sqlcipher(version: 4))
        #expect(try folder.names() == ["wal.db"], "inspect left side files")
        // The inspection connection opens read-write here (so that SQLite removes its -wal and -shm at close),
        // but query_only refuses every write.
        let inspection = try Database(path: path, key: key, configuration: .inspection())
        #expect(thrownError { try inspection.execute("INSERT INTO t VALUES ('written')") }?.kind == .readOnly)
        inspection.close()
        #expect(try folder.names() == ["wal.db"])
        #expect(try contents(of: path) == bytes, "an inspection wrote to the file")
    }

    @Test("rekey inside a transaction is refused")
    func rekeyInTransaction() throws {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        try database.execute("BEGIN")
        #expect(thrownError { try database.rekey(to: .passphrase("other")) }?.kind == .misuse)
    }

    @Test("export to plaintext, then the copy opens without a key")
    func exportToPlaintext() throws {
        let folder = try TemporaryDirectory()
        let source = folder.file("secret.db")
        let marker = "export-marker-\(UUID().uuidString)"
        try create(source, key: try Self.rawKey, marker: marker)
        let database = try Database(path: source, key: try Self.rawKey)
        try database.setUserVersion(42)
        try database.export(to: folder.file("plain.db"), key: nil)

        #expect(try isPlaintext(folder.file("plain.db")))
        let plain = try Database(unencryptedPath: folder.file("plain.db"), configuration: .init(mode: .readOnly))
        #expect(try readMarker(in: plain) == marker)
        #expect(try plain.userVersion() == 42, "export copies user_version")
        #expect(try plain.scalar(Int.self, "SELECT count(*) FROM t") == 501)
        #expect(try !data(contents(of: source), contains: marker))
        #expect(try folder.names() == ["plain.db", "secret.db"], "no temporary file left")
    }

    @Test("export to another key and cipher settings; the target must not exist")
    func exportToAnotherKey() throws {
        let folder = try TemporaryDirectory()
        let source = folder.file("a.db")
        let marker = "export2-marker-\(UUID().uuidString)"
        try create(source, key: .passphrase("a"), marker: marker)
        let database = try Database(path: source, key: .passphrase("a"))
        let target = folder.file("b.db")
        try database.export(to: target, key: .passphrase("b"), cipher: CipherSettings(pageSize: 8192))
        #expect(try !data(contents(of: target), contains: marker))
        #expect(thrownError { try Database(path: target, key: .passphrase("b")) }?.kind == .wrongKeyOrNotADatabase,
                "the page size was not applied")
        let copy = try Database(path: target, key: .passphrase("b"),
                                configuration: .init(cipher: CipherSettings(pageSize: 8192)))
        #expect(try readMarker(in: copy) == marker)

        let before = try contents(of: target)
        #expect(thrownError { try database.export(to: target, key: nil) }?.kind == .invalidArgument)
        #expect(try contents(of: target) == before, "an existing file was overwritten")
    }

    @Test("encrypt in place, then decrypt in place")
    func encryptDecryptInPlace() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("app.db")
        let marker = "in-place-marker-\(UUID().uuidString)"
        try create(path, key: nil, marker: marker)
        #expect(try data(contents(of: path), contains: marker), "the test needs a plaintext start")

        try Database.encrypt(path: path, key: .passphrase("now secret"))
        #expect(try !isPlaintext(path))
        #expect(try !data(contents(of: path), contains: marker))
        #expect(try readMarker(in: Database(path: path, key: .passphrase("now secret"))) == marker)
        #expect(thrownError { try Database.encrypt(path: path, key: .passphrase("again")) }?.kind
            == .wrongKeyOrNotADatabase, "encrypting an encrypted file must fail")

        try Database.decrypt(path: path, key: .passphrase("now secret"))
        #expect(try isPlaintext(path))
        #expect(try readMarker(in: Database(unencryptedPath: path)) == marker)
        #expect(try folder.names() == ["app.db"], "no temporary or journal file left")
    }

    @Test("encrypt in place of a WAL database folds the log in first")
    func encryptWALDatabase() throws {
        let folder = try TemporaryDirectory()
        let live = folder.file("live.db"), path = folder.file("wal.db")
        let marker = "wal-marker-\(UUID().uuidString)"
        // A writer commits rows into the log and stays open (no checkpoint): the files are copied as they
        // are then, which is what a crashed writer leaves behind: the committed rows only in -wal.
        let writer = try Database(unencryptedPath: live)
        try writer.setJournalMode(.wal)
        try writer.execute("PRAGMA wal_autocheckpoint = 0")
        try writer.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try writer.transaction {
            for index in 0..<200 { try writer.execute("INSERT INTO t(v) VALUES (?)", ["\(marker) \(index)"]) }
        }
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: live + suffix, toPath: path + suffix)
        }
        writer.close()
        #expect(try !data(contents(of: path), contains: marker), "the rows must be in the log only")
        #expect(try data(contents(of: path + "-wal"), contains: marker), "the rows must be in the log")

        try Database.encrypt(path: path, key: .passphrase("k"))
        #expect(try folder.names() == ["live.db", "wal.db"], "the log must be folded in and gone")
        #expect(try !data(contents(of: path), contains: marker))
        let encrypted = try Database(path: path, key: .passphrase("k"))
        #expect(try encrypted.scalar(Int.self, "SELECT count(*) FROM t WHERE v LIKE 'wal-marker-%'") == 200)
        #expect(try encrypted.scalar(String.self, "SELECT v FROM t WHERE id = 200") == "\(marker) 199")
    }

    @Test("a failure injected just before the rename leaves the original intact and no temporary file")
    func failureMidway() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("fragile.db")
        let marker = "fragile-marker-\(UUID().uuidString)"
        try create(path, key: nil, marker: marker)
        let original = try contents(of: path)
        let calls = Mutex(0)
        let armed = Mutex(true)
        let hook: @Sendable (String) throws(SQLCipherError) -> Void = { renamed throws(SQLCipherError) in
            guard renamed == path, armed.withLock({ $0 }) else { return }
            calls.withLock { $0 += 1 }
            throw SQLCipherError(kind: .ioError, message: "injected failure")
        }
        FileReplacement.beforeRename.withLock { $0[path] = hook }
        defer { FileReplacement.beforeRename.withLock { $0[path] = nil } }

        let error = thrownError { try Database.encrypt(path: path, key: .passphrase("k")) }
        #expect(error?.message == "injected failure")
        #expect(calls.withLock { $0 } == 1, "the temporary file was complete when the failure hit")
        #expect(try contents(of: path) == original)
        #expect(try folder.names() == ["fragile.db"])
        #expect(try readMarker(in: Database(unencryptedPath: path)) == marker)

        armed.withLock { $0 = false }
        try Database.encrypt(path: path, key: .passphrase("k"))
        armed.withLock { $0 = true }
        let decryptError = thrownError { try Database.decrypt(path: path, key: .passphrase("k")) }
        #expect(decryptError?.message == "injected failure")
        #expect(try !isPlaintext(path), "a failed decrypt left a plaintext file")
        #expect(try !data(contents(of: path), contains: marker), "a failed decrypt left plaintext rows")
        #expect(try folder.names() == ["fragile.db"])
    }

    @Test("attach a database with another key and query across both")
    func attachWithAnotherKey() throws {
        let folder = try TemporaryDirectory()
        try create(folder.file("main.db"), key: .passphrase("main key"), marker: "main")
        try create(folder.file("other.db"), key: try Self.rawKey, marker: "other")
        let database = try Database(path: folder.file("main.db"), key: .passphrase("main key"))

        #expect(thrownError { try database.attach(folder.file("other.db"), as: "other", key: .passphrase("main key")) }?
            .kind == .wrongKeyOrNotADatabase)
        try database.attach(folder.file("other.db"), as: "other", key: try Self.rawKey)
        let joined = try database.fetchAll("SELECT m.v, o.v FROM main.t m JOIN other.t o USING (id) WHERE id = 1")
        #expect(joined.map(\.values) == [[.text("main"), .text("other")]])
        try database.execute("INSERT INTO other.t(v) SELECT v FROM main.t WHERE id = 1")
        try database.detach("other")
        #expect(thrownError { try database.execute("SELECT * FROM other.t") } != nil)

        let other = try Database(path: folder.file("other.db"), key: try Self.rawKey)
        #expect(try other.scalar(Int.self, "SELECT count(*) FROM t WHERE v = 'main'") == 1)
    }

    @Test("attach a plaintext database with no key")
    func attachPlaintext() throws {
        let folder = try TemporaryDirectory()
        try create(folder.file("plain.db"), key: nil, marker: "plain")
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        try database.attachUnencrypted(folder.file("plain.db"), as: "p")
        #expect(try database.scalar(String.self, "SELECT v FROM p.t WHERE id = 1") == "plain")
    }

    @Test("keys with quotes, unicode and NUL bytes work, byte for byte")
    func unusualKeys() throws {
        let folder = try TemporaryDirectory()
        let keys: [[UInt8]] = [
            Array("it's a \"quoted\" key; DROP TABLE t; --".utf8),
            Array("ключ 🔑 鍵".utf8),
            [0x61, 0x00, 0x62],  // a NUL b
        ]
        for (index, bytes) in keys.enumerated() {
            let path = folder.file("k\(index).db")
            let marker = "key-marker-\(index)-\(UUID().uuidString)"
            try create(path, key: .passphrase(bytes: bytes), marker: marker)
            #expect(try readMarker(in: Database(path: path, key: .passphrase(bytes: bytes))) == marker)
            #expect(try !data(contents(of: path), contains: marker))
            // Every byte counts: the key cut at its first NUL, or with its last byte changed, is another key.
            // (Trailing NUL bytes are the one exception: HMAC pads keys with zeros, so PBKDF2 cannot see them.)
            let changed = Array(bytes.dropLast()) + [bytes.last! &+ 1]
            for variant in [Array(bytes.prefix { $0 != 0 }), changed] where variant != bytes && !variant.isEmpty {
                #expect(thrownError { try Database(path: path, key: .passphrase(bytes: variant)) }?.kind
                    == .wrongKeyOrNotADatabase)
            }
        }
        // The same quoted key given as a String.
        let path = folder.file("k0.db")
        #expect(try Database(path: path, key: .passphrase("it's a \"quoted\" key; DROP TABLE t; --"))
            .scalar(Int.self, "SELECT count(*) FROM t") == 501)
    }
}
