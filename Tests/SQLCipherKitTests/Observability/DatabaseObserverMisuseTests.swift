import Foundation
import ProcessTestSupport
import Synchronization
import Testing
@testable import SQLCipherKit

/// An observer that breaks its contract from inside the engine's own calls: it releases the caller's last reference
/// to its connection, closes it, or runs SQL on it, at a step's end, a WAL commit, or a busy wait (inside a compile,
/// inside `sqlite3_rekey_v2`), or as a cached statement is finalized. Each was found by an attacker to crash the
/// process (a freed connection used, an exclusivity trap); each now ends in a typed error or in nothing at all, and
/// the file opens with its key holding its rows. The sanitized suites run these on the ASan+UBSan engine.
@Suite("DatabaseObserver: an observer releasing, closing or using its connection from inside the engine")
struct DatabaseObserverMisuseTests {
    @Test("the caller's last reference released at a failed cached statement's end, or at a WAL commit inside its step: the step ends without touching a freed connection; the statement then throws misuse",
          arguments: CipherConfiguration.all)
    func releasedInsideTheStep(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        for releaseAt in ["failure", "WAL commit"] {
            let path = folder.file("\(releaseAt).db")
            let holder = Holder()
            let observer = MisusingObserver()
            holder.database = try configuration.open(path, observer: observer)
            try holder.database?.execute("PRAGMA journal_mode = WAL")
            try holder.database?.execute("CREATE TABLE t(x UNIQUE); INSERT INTO t VALUES (1)")
            let statement = try #require(try holder.database?.cachedStatement("INSERT INTO t VALUES (1)"))
            let retry = try #require(try holder.database?.cachedStatement("INSERT INTO t VALUES (2)"))
            observer.action.withLock { $0 = releaseAt == "failure" ? .releaseAtFailure(holder) : .releaseAtWAL(holder) }
            let error = thrownError { try (releaseAt == "failure" ? statement : retry).execute() }
            #expect(holder.database == nil, "\(releaseAt): the observer did not release the connection")
            #expect(error?.kind == (releaseAt == "failure" ? .constraint : nil), "\(releaseAt): \(String(describing: error))")
            // The statement outlived its connection: detached, it throws.
            #expect(thrownError { try statement.execute() }?.kind == .misuse, "\(releaseAt)")
            #expect(try configuration.open(path).scalar(Int.self, "SELECT count(*) FROM t") == (releaseAt == "failure" ? 1 : 2))
        }
    }

    @Test("the connection closed at a busy wait inside sqlite3_rekey_v2 (no statement keeps it alive there): the rekey ends with misuse saying so, and the file opens with one of its keys, holding its row",
          arguments: CipherConfiguration.all)
    func closedInsideRekey(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("r.db")
        let (observer, db) = try MisusingObserver.observingOneRow(path, configuration)
        let other = try configuration.open(path)
        try other.execute("BEGIN IMMEDIATE")
        observer.action.withLock { $0 = .closeAtBusy }
        let newKey = try configuration.makeKey(0x44)
        let error = thrownError { try db.rekey(to: newKey) }
        #expect(db.isClosed)
        #expect(error?.kind == .misuse && error?.message.contains("closed during the rekey") == true,
                "\(String(describing: error))")
        #expect(observer.action.withLock { $0 } == nil, "the observer was never told of a busy wait")
        try other.execute("ROLLBACK")
        other.close()
        let counts = [0x11, 0x44].map { seed in
            try? configuration.open(path, seed: seed, mode: .readOnly).scalar(Int.self, "SELECT count(*) FROM t")
        }
        #expect(counts.contains(1), "\(counts)")
    }

    @Test("at a busy wait inside a cached statement's compile, the observer runs SQL (refused: misuse) or closes the connection (the compile then fails): no exclusivity trap in the statement cache",
          arguments: CipherConfiguration.all)
    func busyInsideTheCachesCompile(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        for closing in [false, true] {
            let path = folder.file("b-\(closing).db")
            let (observer, db) = try MisusingObserver.observing(path, configuration)
            try db.execute("CREATE TABLE t(x)")
            // A rolled-back schema change unloads the schema: the next compile reads it again, and waits for the lock.
            try db.execute("BEGIN; CREATE TABLE z(x); ROLLBACK")
            let other = try configuration.open(path)
            try other.execute("BEGIN EXCLUSIVE; INSERT INTO t VALUES (1)")
            observer.action.withLock { $0 = closing ? .closeAtBusy : .sqlAtBusy }
            let error = thrownError { try db.cachedStatement("SELECT * FROM t") }
            #expect(error?.kind == .busy || (closing && error?.kind == .misuse), "\(closing): \(String(describing: error))")
            #expect(db.isClosed == closing)
            let refused = observer.errors.withLock { $0 }
            #expect(closing ? refused.isEmpty : refused.count == 1 && refused.first??.kind == .misuse, "\(refused)")
            try other.execute("ROLLBACK")
        }
    }

    @Test("a cached statement left after a row is finalized by close() and reported then: the observer's SQL is refused (misuse), with no exclusivity trap; a full cache drops another statement meanwhile")
    func finalizedByClose() throws {
        let observer = MisusingObserver()
        let db = try Database(path: ":memory:", key: .passphrase("finalize"), configuration: .init(observer: observer))
        observer.database.withLock { $0 = Unowned(db) }
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)")
        let sql = "SELECT x FROM t"
        weak var oldest: Statement?
        oldest = try db.cachedStatement("SELECT 'oldest'")
        for i in 0..<64 { _ = try db.cachedStatement("SELECT \(i)") }
        // The cache drops its least recently used statement that nobody holds (a reviewer found it dropped none).
        #expect(oldest == nil, "the full cache dropped nothing")
        // The newest, left after its row: it stays cached while the next one drops another.
        #expect(try db.cachedStatement(sql).step())
        _ = try db.cachedStatement("SELECT 'one more'")
        observer.action.withLock { $0 = .sqlAtEnd(of: sql) }
        db.close()
        let atClose = observer.errors.withLock { $0 }
        #expect(atClose.count == 1 && atClose.first??.kind == .misuse, "\(atClose)")
    }
}

extension DatabaseObserverMisuseTests {
    @Test("the connection closed by its observer after the rekey committed and read back under the new key (at the journal mode's statement, or at the WAL checkpoint's): the rekey says so, with misuse, not as a failed check (found by an attacker) nor as a success (a reviewer), and the file opens with the new key",
          arguments: CipherConfiguration.all)
    func closedAfterTheRekeysCheck(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        for closeAt in ["journal mode", "checkpoint"] {
            let path = folder.file("\(closeAt).db")
            let (observer, db) = try MisusingObserver.observingOneRow(path, configuration)
            // The rekey runs no statement of the connection's before its commit; its first after is the journal
            // mode's, then, in WAL mode, the checkpoint's.
            if closeAt == "checkpoint" {
                try db.execute("PRAGMA journal_mode = WAL")
                observer.action.withLock { $0 = .closeAtContextAfter("PRAGMA journal_mode") }
            } else {
                observer.action.withLock { $0 = .closeAtNextContext }
            }
            let error = thrownError { try db.rekey(to: configuration.makeKey(0x44)) }
            #expect(observer.action.withLock { $0 } == nil, "\(closeAt): the observer was never asked for a context")
            #expect(error?.kind == .misuse && error?.message.contains("read back under the new key; then the "
                + "connection was closed") == true, "\(closeAt): \(String(describing: error))")
            #expect(db.isClosed)
            #expect(try configuration.open(path, seed: 0x44, mode: .readOnly).scalar(Int.self, "SELECT count(*) FROM t")
                == 1, "\(closeAt)")
        }
    }

    @Test("the connection closed at a statement's reset, then released at its next use, whose release finalizes a statement left after a row: at that statement's end the observer releases the caller's last reference, and nothing touches the freed connection (found by a reviewer; the sanitized suites run it on the ASan+UBSan engine)",
          arguments: CipherConfiguration.all)
    func releasedAtTheNextUse(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("n.db")
        let holder = Holder()
        let observer = MisusingObserver()
        holder.database = try configuration.open(path, observer: observer)
        try holder.database?.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)")
        // Left after a row in the cache, held by nothing else: the release finalizes it, and SQLite reports its end.
        #expect(try holder.database?.cachedStatement("SELECT x FROM t WHERE x > 0").step() == true)
        let closing = try #require(try holder.database?.cachedStatement("SELECT x FROM t"))
        #expect(try closing.step())
        observer.action.withLock {
            $0 = .closeThenRelease(close: "SELECT x FROM t", release: "SELECT x FROM t WHERE x > 0", holder)
        }
        closing.reset()
        #expect(holder.database?.isClosed == true)
        // The next use releases the connection; the observer drops it meanwhile.
        #expect(thrownError { try closing.step() }?.kind == .misuse)
        #expect(holder.database == nil, "the observer was never told of the finalized statement's end")
        #expect(observer.action.withLock { $0 } == nil)
        #expect(try configuration.open(path).scalar(Int.self, "SELECT count(*) FROM t") == 2)
    }

    @Test("the connection closed by its observer at a statement's end inside the caller's own transaction (BEGIN IMMEDIATE of SQL text, outside the library's scopes), at the end of its step or at its reset: the engine releases it when the step is over or at the connection's next use, so its transaction rolls back and another connection takes the write lock while the closed Database still lives",
          arguments: CipherConfiguration.all)
    func closedInTheCallersTransaction(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        for closeAt in ["step", "reset, then a statement", "reset, then the connection"] {
            let path = folder.file("\(closeAt).db")
            let (observer, db) = try MisusingObserver.observing(path, configuration)
            try db.execute("PRAGMA journal_mode = WAL")
            try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
            try db.execute("BEGIN IMMEDIATE")
            try db.execute("INSERT INTO t VALUES (2)")
            if closeAt == "step" {
                // The event comes from the step that ran the insert: the insert itself succeeded.
                observer.action.withLock { $0 = .closeAtEnd(of: "INSERT INTO t VALUES (3)") }
                try db.execute("INSERT INTO t VALUES (3)")
            } else {
                // A statement reset before its end reports it at the reset, outside any step.
                let select = try db.cachedStatement("SELECT x FROM t")
                #expect(try select.step())
                observer.action.withLock { $0 = .closeAtEnd(of: "SELECT x FROM t") }
                select.reset()
                #expect(db.isClosed)
                // The next use of the closed connection: a statement it prepared, or the connection itself.
                let next = closeAt.hasSuffix("statement") ? thrownError { try select.step() }
                    : thrownError { try db.execute("SELECT 1") }
                #expect(next?.kind == .misuse, "\(closeAt): \(String(describing: next))")
            }
            #expect(observer.action.withLock { $0 } == nil, "\(closeAt): the observer was never told of the end")
            #expect(db.isClosed, "\(closeAt)")
            // The closed Database lives on; its transaction must not hold the write lock.
            let other = try configuration.open(path)
            try other.setBusyTimeout(.zero)
            #expect(thrownError { try other.execute("BEGIN IMMEDIATE; INSERT INTO t VALUES (4); COMMIT") } == nil,
                    "\(closeAt): the closed connection still holds the write lock")
            #expect(try other.fetchAll("SELECT x FROM t").map { try $0.get(0, as: Int.self) } == [1, 4], "\(closeAt)")
            withExtendedLifetime(db) {}
        }
    }

    @Test("the connection closed by its observer at the end of a statement the library runs inside its own operation, before it uses the engine's handle again (a backup's snapshot, cipherIntegrityCheck's journal mode): the operation fails with misuse and touches no released handle (the sanitized suites run it on the ASan+UBSan engine)",
          arguments: CipherConfiguration.all)
    func closedAtALibrarysStatement(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        for operation in ["backup", "cipherIntegrityCheck"] {
            let path = folder.file("\(operation).db")
            let (observer, db) = try MisusingObserver.observing(path, configuration)
            // In WAL mode, the check reads the handle again after the journal mode (to checkpoint).
            try db.execute("PRAGMA journal_mode = WAL; CREATE TABLE t(x); INSERT INTO t VALUES (1)")
            let copy = folder.file("\(operation)-copy.db")
            let sql = operation == "backup" ? "SELECT count(*) FROM sqlite_schema" : "PRAGMA journal_mode"
            observer.action.withLock { $0 = .closeAtEnd(of: sql) }
            let error = operation == "backup" ? thrownError { try db.backup(to: copy, key: configuration.makeKey(0x11)) }
                : thrownError { _ = try db.cipherIntegrityCheck() }
            #expect(observer.action.withLock { $0 } == nil, "\(operation): the observer was never told of \(sql)")
            #expect(error?.kind == .misuse, "\(operation): \(String(describing: error))")
            #expect(db.isClosed)
            #expect(!FileManager.default.fileExists(atPath: copy), "\(operation)")
            #expect(try configuration.open(path).scalar(Int.self, "SELECT count(*) FROM t") == 1, "\(operation)")
        }
    }
}

/// Holds the caller's only strong reference to a connection (as a connection manager would).
final class Holder: @unchecked Sendable {
    var database: Database?
}

/// An observer that misuses its connection once, when armed.
final class MisusingObserver: DatabaseObserver {
    enum Action {
        case releaseAtFailure(Holder), releaseAtWAL(Holder), closeAtBusy, sqlAtBusy, sqlAtEnd(of: String)
        case closeAtEnd(of: String)
        /// Closes the connection at `close`'s end, then releases `holder`'s reference at `release`'s.
        case closeThenRelease(close: String, release: String, Holder), releaseAtEnd(of: String, Holder)
        /// Closes the connection when asked for the context of the first statement to start after one whose SQL ends
        /// with the text given.
        case closeAtContextAfter(String), closeAtNextContext
    }

    let action = Mutex<Action?>(nil)
    let database = Mutex<Unowned?>(nil)
    let errors = Mutex<[SQLCipherError?]>([])

    /// An observer of a new database at `path` under `configuration` (a busy timeout of 200 ms), holding it, and
    /// that database.
    static func observing(_ path: String, _ configuration: CipherConfiguration) throws -> (MisusingObserver, Database) {
        let observer = MisusingObserver()
        let db = try configuration.open(path, observer: observer, busyTimeout: .milliseconds(200))
        observer.database.withLock { $0 = Unowned(db) }
        return (observer, db)
    }

    /// ``observing(_:_:)``'s observer and database, which holds a table `t` of one row.
    static func observingOneRow(_ path: String, _ configuration: CipherConfiguration) throws
        -> (MisusingObserver, Database) {
        let (observer, db) = try observing(path, configuration)
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('row')")
        return (observer, db)
    }

    func statementFinished(_ event: StatementEvent) {
        switch action.withLock({ $0 }) {
        case .releaseAtFailure(let holder) where event.resultCode != 0:
            action.withLock { $0 = nil }
            holder.database = nil
        case .sqlAtEnd(let sql) where event.sql == sql:
            action.withLock { $0 = nil }
            runSQL()
        case .closeAtEnd(let sql) where event.sql == sql:
            action.withLock { $0 = nil }
            database.withLock { $0 }?.database.close()
        case .closeThenRelease(let close, let release, let holder) where event.sql == close:
            action.withLock { $0 = .sqlAtEnd(of: "") }
            holder.database?.close()
            action.withLock { $0 = .releaseAtEnd(of: release, holder) }
        case .closeAtContextAfter(let suffix) where event.sql.hasSuffix(suffix):
            action.withLock { $0 = .closeAtNextContext }
        case .releaseAtEnd(let sql, let holder) where event.sql == sql:
            action.withLock { $0 = nil }
            holder.database = nil
        default: break
        }
    }

    func currentContext() -> (any Sendable)? {
        guard case .closeAtNextContext = action.withLock({ $0 }) else { return nil }
        action.withLock { $0 = nil }
        database.withLock { $0 }?.database.close()
        return nil
    }

    func walCommitted(_ event: WALEvent) {
        switch action.withLock({ $0 }) {
        case .releaseAtWAL(let holder):
            action.withLock { $0 = nil }
            holder.database = nil
        default: break
        }
    }

    func busyRetried(_ event: BusyEvent) {
        switch action.withLock({ $0 }) {
        case .closeAtBusy:
            action.withLock { $0 = nil }
            database.withLock { $0 }?.database.close()
        case .sqlAtBusy:
            action.withLock { $0 = nil }
            runSQL()
        default: break
        }
    }

    private func runSQL() {
        guard let database = database.withLock({ $0?.database }) else { return }
        let error = thrownError { try database.cachedStatement("SELECT 2").step() }
        errors.withLock { $0.append(error) }
    }
}
