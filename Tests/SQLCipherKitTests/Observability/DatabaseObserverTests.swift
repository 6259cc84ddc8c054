import CSQLCipher
import Foundation
import ProcessTestSupport
@testable import SQLCipherKit
import Synchronization
import Testing

/// What a ``DatabaseObserver`` sees of a known workload, on a connection, a queue and a pool: every statement with its
/// rows, changes and result, transactions, the write-ahead log and its checkpoints, busy retries, pool waits, and the
/// caller's context across the pools' threads.
@Suite("DatabaseObserver: events of a known workload")
struct DatabaseObserverTests {
    @Test("statements: SQL as prepared, operation, rows, changes and the result of each, failures and early resets included")
    func statements() throws {
        let folder = try TemporaryDirectory()
        let recorder = Recorder()
        let db = try Database(path: folder.file("s.db"), key: try Key.rawKey(hex: Array(randomKeyHex().utf8)),
                              configuration: .init(observer: recorder))
        recorder.reset()
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, x TEXT UNIQUE)")
        for value in ["a", "b", "c"] { try db.execute("INSERT INTO t(x) VALUES (?)", [value]) }
        let all = try db.fetchAll("SELECT x FROM t ORDER BY id")
        #expect(all.count == 3)
        let duplicate = thrownError { try db.execute("INSERT INTO t(x) VALUES (?)", ["a"]) }
        #expect(duplicate?.kind == .constraint)
        // A cursor left after its first row: reset before its end.
        let statement = try db.prepare("SELECT x FROM t")
        #expect(try statement.step())
        statement.reset()
        try db.execute("UPDATE t SET x = x || '!' WHERE id <= 2")
        // A statement that changes no rows after one that did: 0, not the UPDATE's count that sqlite3_changes64 keeps.
        try db.execute("CREATE INDEX t_x ON t(x)")
        // Stepped again after its end without a reset: SQLite runs it again, and that is a statement of its own.
        let again = try db.prepare("SELECT 7")
        while try again.step() {}
        #expect(try again.step())
        again.reset()

        let events = recorder.statements
        #expect(events.map(\.sql) == [
            "CREATE TABLE t(id INTEGER PRIMARY KEY, x TEXT UNIQUE)",
            "INSERT INTO t(x) VALUES (?)", "INSERT INTO t(x) VALUES (?)", "INSERT INTO t(x) VALUES (?)",
            "SELECT x FROM t ORDER BY id", "INSERT INTO t(x) VALUES (?)", "SELECT x FROM t",
            "UPDATE t SET x = x || '!' WHERE id <= 2", "CREATE INDEX t_x ON t(x)", "SELECT 7", "SELECT 7",
        ])
        #expect(events.map(\.operation) == ["CREATE", "INSERT", "INSERT", "INSERT", "SELECT", "INSERT", "SELECT", "UPDATE",
                                            "CREATE", "SELECT", "SELECT"])
        #expect(events.map(\.rows) == [0, 0, 0, 0, 3, 0, 1, 0, 0, 1, 1])
        #expect(events.map(\.changes) == [0, 1, 1, 1, 0, 0, 0, 2, 0, 0, 0])
        #expect(events.map(\.resultCode) == [0, 0, 0, 0, 0, 2067 /* SQLITE_CONSTRAINT_UNIQUE */, 0, 0, 0, 0, 0])
        #expect(events.allSatisfy { $0.duration > .zero && $0.path == folder.file("s.db") })
        let now = UInt64(Date().timeIntervalSince1970 * 1e9)
        #expect(events.allSatisfy { $0.startTime <= now && now - $0.startTime < 60_000_000_000 })
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.startTime <= $1.startTime })
    }

    @Test("a statement left after a row is reported under the context that ran it, not the one that resets it")
    func unfinishedStatementsContext() throws {
        let folder = try TemporaryDirectory()
        let recorder = Recorder()
        let db = try Database(path: folder.file("u.db"), key: try Key.rawKey(hex: Array(randomKeyHex().utf8)),
                              configuration: .init(observer: recorder))
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)")
        recorder.reset()
        let sql = "SELECT x FROM t ORDER BY x"
        let stepped = try TestContext.$request.withValue("left") { try db.cachedStatement(sql).step() }
        // The same cached statement: its reset ends the first run, in the second one's work.
        let all = try TestContext.$request.withValue("next") { try db.cachedStatement(sql).rows().all() }
        #expect(stepped && all.count == 2)
        let events = recorder.statements.filter { $0.sql == sql }
        #expect(events.map(\.rows) == [1, 2])
        #expect(events.map { $0.context as? String } == ["left", "next"])
    }

    @Test("SQLite's schema reads (rows, no end of their own) leave nothing behind: a later statement counts its own rows")
    func schemaReads() throws {
        let folder = try TemporaryDirectory()
        let key = try Key.rawKey(hex: Array(randomKeyHex().utf8))
        let other = try Database(path: folder.file("r.db"), key: key)
        try other.execute("CREATE TABLE t(x UNIQUE); INSERT INTO t VALUES (1)")
        let recorder = Recorder()
        let db = try Database(path: folder.file("r.db"), key: key, configuration: .init(observer: recorder))
        for index in 0..<20 {
            // Another connection changes the schema: the next statement here reads it again first (a statement
            // of SQLite's own, with a row per schema entry, run while the statement is prepared).
            try other.execute("CREATE TABLE extra\(index)(y)")
            #expect(try db.scalar(Int.self, "SELECT count(*) FROM t") == 1)
        }
        let counts = recorder.statements.filter { $0.sql == "SELECT count(*) FROM t" }
        #expect(counts.count == 20 && counts.allSatisfy { $0.rows == 1 }, "\(counts.map(\.rows))")
    }

    @Test("operation: the first keyword after blanks and comments, from a fixed set, else OTHER")
    func operationNames() {
        #expect(StatementEvent.operation(of: "  -- note\n /* x */ select 1") == "SELECT")
        #expect(StatementEvent.operation(of: "with a as (select 1) select * from a") == "WITH")
        #expect(StatementEvent.operation(of: "Insert into t values (1)") == "INSERT")
        #expect(StatementEvent.operation(of: "SELECTED") == "OTHER")
        #expect(StatementEvent.operation(of: "'secret' SELECT") == "OTHER")
        #expect(StatementEvent.operation(of: "") == "OTHER")
        #expect(StatementEvent.operation(of: "/* unterminated") == "OTHER")
    }

    @Test("transactions: committed and rolled back, with the commit's own duration and the page cache")
    func transactions() throws {
        let folder = try TemporaryDirectory()
        let recorder = Recorder()
        let db = try Database(path: folder.file("t.db"), key: try Key.rawKey(hex: Array(randomKeyHex().utf8)),
                              configuration: .init(observer: recorder))
        try db.execute("CREATE TABLE t(x)")
        recorder.reset()
        try db.transaction { try db.execute("INSERT INTO t VALUES (1)") }
        struct Planned: Error {}
        #expect(throws: Planned.self) { try db.transaction { try db.execute("INSERT INTO t VALUES (2)"); throw Planned() } }
        // A savepoint inside a transaction is not a transaction of its own.
        try db.transaction { try db.transaction { try db.execute("INSERT INTO t VALUES (3)") } }
        // A read transaction: it holds no write lock at its end.
        try db.transaction { _ = try db.fetchAll("SELECT * FROM t") }
        let events = recorder.transactions
        #expect(events.map(\.outcome) == [.committed, .rolledBack, .committed, .committed])
        #expect(events.map(\.wrote) == [true, true, true, false])
        #expect(events[0].commitDuration > .zero && events[0].commitDuration <= events[0].duration)
        #expect(events[1].commitDuration == .zero)
        #expect(events[2].cache.writes > 0 && events[2].cache.hits + events[2].cache.misses > 0)
    }

    @Test("write-ahead log: frames after each commit, and the automatic checkpoint at 1,000 frames, still run")
    func walAndCheckpoints() throws {
        let folder = try TemporaryDirectory()
        let recorder = Recorder()
        let path = folder.file("w.db")
        let db = try Database(path: path, key: try Key.rawKey(hex: Array(randomKeyHex().utf8)),
                              configuration: .init(observer: recorder))
        _ = try db.setJournalMode(.wal)
        try db.execute("CREATE TABLE t(x)")
        let insert = try db.prepare("INSERT INTO t VALUES (randomblob(3000))")
        for _ in 0..<1200 { try insert.execute() }
        let wal = recorder.wal
        #expect(wal.count >= 1200)
        #expect(wal.allSatisfy { $0.schema == "main" && $0.frames > 0 })
        let checkpoints = recorder.checkpoints
        try #require(checkpoints.count >= 1, "no automatic checkpoint in \(wal.count) commits")
        #expect(checkpoints[0].frames >= 1000 && checkpoints[0].checkpointed == checkpoints[0].frames)
        #expect(checkpoints[0].resultCode == SQLITE_OK && checkpoints[0].duration > .zero)
        // After the checkpoint the log starts over (frames fall), as with SQLite's own hook.
        let afterFirst = wal.drop { $0.frames < 1000 }.dropFirst()
        #expect(afterFirst.first.map { $0.frames < 1000 } == true, "\(wal.suffix(3).map(\.frames))")
        #expect(wal.last.map { $0.fileBytes > 0 } == true)
    }

    @Test("busy retries: the busy timeout's waits, each reported, ending as SQLite's own handler does")
    func busyRetries() throws {
        let folder = try TemporaryDirectory()
        let key = try Key.rawKey(hex: Array(randomKeyHex().utf8))
        let path = folder.file("b.db")
        let holder = try Database(path: path, key: key)
        try holder.execute("CREATE TABLE t(x)")
        let recorder = Recorder()
        let waiting = try Database(path: path, key: key, configuration: .init(busyTimeout: .milliseconds(50), observer: recorder))
        try holder.execute("BEGIN IMMEDIATE")
        let error = thrownError { try waiting.execute("INSERT INTO t VALUES (1)") }
        #expect(error?.kind == .busy)
        // 1 + 2 + 5 + 10 + 15 ms, then the 17 ms left of 50: six waits (sqliteDefaultBusyCallback).
        #expect(recorder.busy.map(\.retry) == [1, 2, 3, 4, 5, 6])
        #expect(recorder.busy.map(\.delay) == [1, 2, 5, 10, 15, 17].map { Duration.milliseconds($0) })
        // setBusyTimeout reaches the observed handler: zero fails at once, without a wait.
        recorder.reset()
        try waiting.setBusyTimeout(.zero)
        #expect(thrownError { try waiting.execute("INSERT INTO t VALUES (1)") }?.kind == .busy)
        #expect(recorder.busy.isEmpty)
        try holder.execute("ROLLBACK")
        try waiting.execute("INSERT INTO t VALUES (1)")
    }

    @Test("PRAGMA busy_timeout = … and wal_autocheckpoint = … are refused with an observer (they would replace its hooks); without one they apply")
    func hookPragmas() throws {
        let folder = try TemporaryDirectory()
        let key = try Key.rawKey(hex: Array(randomKeyHex().utf8))
        let observed = try Database(path: folder.file("h.db"), key: key, configuration: .init(observer: Recorder()))
        for sql in ["PRAGMA busy_timeout = 1500", "PRAGMA main.wal_autocheckpoint = 10", "pragma BUSY_TIMEOUT(0)"] {
            let error = thrownError { try observed.execute(sql) }
            #expect(error?.kind == .misuse, "\(sql): \(String(describing: error))")
            #expect(error?.message.contains("observer") == true, "\(sql): \(String(describing: error))")
        }
        // Reading them is allowed (their values: 0 with the observer's handler and hook in place).
        #expect(try observed.scalar(Int.self, "PRAGMA busy_timeout") == 0)
        let plain = try Database(path: folder.file("h.db"), key: key)
        #expect(try plain.scalar(Int.self, "PRAGMA busy_timeout") == 5000)
        try plain.execute("PRAGMA busy_timeout = 1500")
        #expect(try plain.scalar(Int.self, "PRAGMA busy_timeout") == 1500)
        try plain.execute("PRAGMA wal_autocheckpoint = 10")
    }

    @Test("a checkpoint that could not start (SQLite's -1 frames) reports 0, never a negative count")
    func checkpointFigures() {
        #expect(ConnectionObservation.checkpointFigures(logged: -1, copied: -1) == (0, 0))
        #expect(ConnectionObservation.checkpointFigures(logged: 1200, copied: 1000) == (1200, 1000))
    }

    @Test("the observed busy handler's waits are SQLite's: totals 0, 1, 3, 8, 18, 33, 53, 78, 103, 128, 178, 228, then +100")
    func busyTable() {
        let totals = [0, 1, 3, 8, 18, 33, 53, 78, 103, 128, 178, 228, 328, 428]
        var waited = 0
        for (count, total) in totals.enumerated() {
            #expect(waited == total, "before wait \(count)")
            waited += Int(DatabaseObserverTests.busyWait(count: count, timeout: 10_000) ?? 0)
        }
        #expect(DatabaseObserverTests.busyWait(count: 6, timeout: 53) == nil)
        #expect(DatabaseObserverTests.busyWait(count: 5, timeout: 50) == 17)
    }

    static func busyWait(count: Int, timeout: Int32) -> Int32? {
        ConnectionObservation.busyWait(count: count, timeout: timeout)
    }
}

/// The context a test's tasks carry (what a bridge would take from `ServiceContext`).
enum TestContext {
    @TaskLocal static var request: String?
}

/// Records every event.
final class Recorder: DatabaseObserver {
    private struct Events {
        var statements: [StatementEvent] = []
        var transactions: [TransactionEvent] = []
        var wal: [WALEvent] = []
        var checkpoints: [CheckpointEvent] = []
        var busy: [BusyEvent] = []
        var writers: [PoolWaitEvent] = []
        var readers: [PoolWaitEvent] = []
        var queue: [PoolQueueEvent] = []
        var releases: [PoolReleaseEvent] = []
    }

    private let events = Mutex(Events())

    func reset() { events.withLock { $0 = Events() } }

    var statements: [StatementEvent] { events.withLock { $0.statements } }
    var transactions: [TransactionEvent] { events.withLock { $0.transactions } }
    var wal: [WALEvent] { events.withLock { $0.wal } }
    var checkpoints: [CheckpointEvent] { events.withLock { $0.checkpoints } }
    var busy: [BusyEvent] { events.withLock { $0.busy } }
    var writers: [PoolWaitEvent] { events.withLock { $0.writers } }
    var readers: [PoolWaitEvent] { events.withLock { $0.readers } }
    var queue: [PoolQueueEvent] { events.withLock { $0.queue } }
    var releases: [PoolReleaseEvent] { events.withLock { $0.releases } }

    /// The writes waiting for the writer as a gauge keeping the newest figure shows it: the figure of the largest
    /// `sequence` among the writer queue's and the writer acquisitions' events; nil before any.
    var pendingWrites: Int? {
        events.withLock { events in
            let figures = events.queue.map { ($0.sequence, $0.queueDepth) }
                + events.writers.map { ($0.sequence, $0.queueDepth) }
            return figures.max { $0.0 < $1.0 }?.1
        }
    }

    /// Readers in use as a gauge keeping the newest figure shows it (acquisitions and releases); nil before any.
    var readersInUse: Int? {
        events.withLock { events in
            let figures = events.readers.map { ($0.sequence, $0.inUse) }
                + events.releases.filter { $0.role == .reader }.map { ($0.sequence, $0.inUse) }
            return figures.max { $0.0 < $1.0 }?.1
        }
    }

    func currentContext() -> (any Sendable)? { TestContext.request }
    func statementFinished(_ event: StatementEvent) { events.withLock { $0.statements.append(event) } }
    func transactionFinished(_ event: TransactionEvent) { events.withLock { $0.transactions.append(event) } }
    func walCommitted(_ event: WALEvent) { events.withLock { $0.wal.append(event) } }
    func checkpointFinished(_ event: CheckpointEvent) { events.withLock { $0.checkpoints.append(event) } }
    func busyRetried(_ event: BusyEvent) { events.withLock { $0.busy.append(event) } }
    func writerAcquired(_ event: PoolWaitEvent) { events.withLock { $0.writers.append(event) } }
    func readerAcquired(_ event: PoolWaitEvent) { events.withLock { $0.readers.append(event) } }
    func writerQueueChanged(_ event: PoolQueueEvent) { events.withLock { $0.queue.append(event) } }
    func connectionReleased(_ event: PoolReleaseEvent) { events.withLock { $0.releases.append(event) } }
}
