import Foundation
import ProcessTestSupport
import Synchronization
import Testing
@testable import SQLCipherKit

/// `Database.backup` and `DatabasePool.backup` on a quiet database: what they refuse, what a failure leaves,
/// and the copy itself (its key, its header fields, its journal mode). The copy under writers is
/// Reliability/OnlineBackupTests.
@Suite("Backup")
struct BackupTests {
    static let key = Result { try Key.rawKey(hex: Array(String(repeating: "5c", count: 32).utf8)) }

    /// An encrypted database of `rows` rows holding `marker`, in `mode`, with user_version 7.
    func makeDatabase(_ path: String, marker: String, rows: Int = 500, mode: Database.JournalMode = .delete) throws {
        let db = try Database(path: path, key: Self.key.get())
        _ = try db.setJournalMode(mode)
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        try db.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) "
            + "INSERT INTO t(v) SELECT ? || hex(randomblob(300)) FROM c", [rows, marker])
        try db.setUserVersion(7)
        db.close()
    }

    @Test("the progress closure may run no SQL on the connection it reports on: a write there is refused with misuse, and the backup completes without it (found by an attacker: the write turned the backup's snapshot into a write transaction, which the copy then waited for without end, or which its end rolled back after the write had succeeded)",
          arguments: [20, 8_000])
    func progressRunsNoSQL(rows: Int) throws {
        let folder = try TemporaryDirectory()
        try makeDatabase(folder.file("a.db"), marker: "progress", rows: rows, mode: .wal)
        let source = try Database(path: folder.file("a.db"), key: Self.key.get())
        let errors = Mutex<[SQLCipherError?]>([])
        try source.backup(to: folder.file("b.db"), key: Self.key.get()) { _ in
            let error = thrownError { try source.execute("INSERT INTO t(v) VALUES ('ghost')") }
            errors.withLock { $0.append(error) }
        }
        let seen = errors.withLock { $0 }
        #expect(!seen.isEmpty && seen.allSatisfy { $0?.kind == .misuse }, "\(rows) rows: \(seen)")
        #expect(try source.scalar(Int.self, "SELECT count(*) FROM t") == rows)
        let copy = try Database(path: folder.file("b.db"), key: Self.key.get(), mode: .readOnly)
        #expect(try copy.scalar(Int.self, "SELECT count(*) FROM t") == rows)
    }

    @Test("a rollback-journal database backed up to a new passphrase: the copy opens with it only, whole")
    func newKey() throws {
        let folder = try TemporaryDirectory()
        let marker = "backup-marker-\(UUID().uuidString)"
        try makeDatabase(folder.file("a.db"), marker: marker)
        let source = try Database(path: folder.file("a.db"), key: Self.key.get())
        let fractions = Mutex<[Double]>([])
        try source.backup(to: folder.file("b.db"), key: .passphrase("new passphrase")) { value in
            fractions.withLock { $0.append(value) }
        }
        #expect(!source.isInTransaction, "the snapshot's transaction ended")
        let reported = fractions.withLock { $0 }
        #expect(reported.last == 1 && zip(reported, reported.dropFirst()).allSatisfy { $0 <= $1 }, "\(reported)")
        let copy = try Database(path: folder.file("b.db"), key: .passphrase("new passphrase"), mode: .readOnly)
        #expect(try copy.scalar(Int.self, "SELECT count(*) FROM t WHERE v LIKE ? || '%'", [marker]) == 500)
        #expect(try copy.userVersion() == 7)
        #expect(try copy.journalMode() == .delete)
        let report = try Database.checkIntegrity(path: folder.file("b.db"), key: .passphrase("new passphrase"))
        #expect(report.failures.isEmpty, "\(report.failures)")
        #expect(throws: SQLCipherError.self) { try Database(path: folder.file("b.db"), key: Self.key.get()) }
        #expect(try !data(contents(of: folder.file("b.db")), contains: marker))
        #expect(try folder.names() == ["a.db", "b.db"])
    }

    @Test("refused: inside a transaction, onto an existing file (unless replacing), onto the database itself")
    func refusals() throws {
        let folder = try TemporaryDirectory()
        try makeDatabase(folder.file("a.db"), marker: "m", rows: 10)
        try writeFile(folder.file("existing.db"), "keep me")
        let source = try Database(path: folder.file("a.db"), key: Self.key.get())
        try source.execute("BEGIN")
        #expect(thrownError { try source.backup(to: folder.file("b.db"), key: Self.key.get()) }?.kind == .misuse)
        try source.execute("COMMIT")
        let existing = thrownError { try source.backup(to: folder.file("existing.db"), key: Self.key.get()) }
        #expect(existing?.kind == .invalidArgument && existing?.message.contains("already exists") == true)
        #expect(try contents(of: folder.file("existing.db")) == Data("keep me".utf8))
        let itself = thrownError { try source.backup(to: folder.file("a.db"), key: Self.key.get(), replacing: true) }
        #expect(itself?.kind == .invalidArgument && itself?.message.contains("the database itself") == true)
        try source.backup(to: folder.file("existing.db"), key: Self.key.get(), replacing: true)
        #expect(try Database(path: folder.file("existing.db"), key: Self.key.get()).scalar(Int.self,
                                                                                          "SELECT count(*) FROM t") == 10)
        #expect(try folder.names() == ["a.db", "existing.db"])
    }

    @Test("a pool's backup that fails at the last moment leaves no file, temporary or final")
    func failureLeavesNothing() throws {
        let folder = try TemporaryDirectory()
        try makeDatabase(folder.file("a.db"), marker: "m", rows: 50, mode: .wal)
        let pool = try DatabasePool(path: folder.file("a.db"), key: Self.key.get())
        defer { pool.close() }
        let target = folder.file("b.db")
        let hook: @Sendable (String) throws(SQLCipherError) -> Void = { renamed throws(SQLCipherError) in
            guard renamed == target else { return }
            throw SQLCipherError(kind: .ioError, message: "injected failure")
        }
        FileReplacement.beforeRename.withLock { $0[target] = hook }
        defer { FileReplacement.beforeRename.withLock { $0[target] = nil } }
        let error = thrownError { try pool.backup(to: target, key: Self.key.get()) }
        #expect(error?.message == "injected failure")
        let names = try folder.names()
        #expect(names.allSatisfy { $0.hasPrefix("a.db") }, "\(names)")
    }
}
