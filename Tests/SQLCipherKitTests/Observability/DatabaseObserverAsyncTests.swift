import Foundation
import ProcessTestSupport
import SQLCipherKit
import Synchronization
import Testing

/// What a ``DatabaseObserver`` sees of a pool's and a queue's `async` calls: waits, readers in use, and the caller's
/// context on every event though the pools' threads run the work. (Async: run apart from the suites that wait
/// synchronously, Tests/run-all.sh's ASYNC_SUITES.)
@Suite("DatabaseObserver: pools and queues, across their threads")
struct DatabaseObserverAsyncTests {
    @Test("a pool: writer and reader waits, readers in use, and the caller's context on every event across the threads")
    func pool() async throws {
        let folder = try TemporaryDirectory()
        let recorder = Recorder()
        let pool = try DatabasePool(path: folder.file("p.db"), key: try Key.rawKey(hex: Array(randomKeyHex().utf8)),
                                    configuration: .init(readerCount: 2, database: .init(observer: recorder)))
        try await pool.write { db in try db.execute("CREATE TABLE t(x)") }
        recorder.reset()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for request in 0..<16 {
                group.addTask {
                    try await TestContext.$request.withValue("request-\(request)") {
                        try await pool.write { db in try db.execute("INSERT INTO t VALUES (?)", [request]) }
                        _ = try await pool.read { db in try db.scalar(Int.self, "SELECT count(*) FROM t") }
                    }
                }
            }
            try await group.waitForAll()
        }
        try Self.blockingWrite(pool)
        pool.close()

        let inserts = recorder.statements.filter { $0.operation == "INSERT" }
        #expect(inserts.count == 17)
        // Each async write's statement carries its own task's context, though a pool thread ran it.
        for request in 0..<16 {
            #expect(inserts.filter { ($0.context as? String) == "request-\(request)" }.count == 1, "request-\(request)")
        }
        #expect(inserts.filter { $0.context == nil }.count == 1, "the synchronous write, outside any request")
        let counts = recorder.statements.filter { $0.operation == "SELECT" && $0.sql.contains("count(*)") }
        #expect(counts.count == 16 && counts.allSatisfy { ($0.context as? String)?.hasPrefix("request-") == true })
        #expect(recorder.writers.count == 17)
        #expect(recorder.writers.filter { $0.context != nil }.count == 16)
        #expect(recorder.readers.count == 16)
        #expect(recorder.readers.allSatisfy { $0.capacity == 2 && (1...2).contains($0.inUse) && $0.context != nil })
        let transactions = recorder.transactions
        #expect(transactions.filter { $0.outcome == .committed }.count == transactions.count)
        // 16 reads, the synchronous write, and the async writes' commits: at least 1, at most 16 (group commit).
        #expect((18...33).contains(transactions.count), "\(transactions.count) transactions")
    }

    @Test("a cursor one request leaves after a row is reported under that request's context, not under the next one's that resets it")
    func abandonedCursor() async throws {
        let folder = try TemporaryDirectory()
        let recorder = Recorder()
        let pool = try DatabasePool(path: folder.file("c.db"), key: try Key.rawKey(hex: Array(randomKeyHex().utf8)),
                                    configuration: .init(readerCount: 1, database: .init(observer: recorder)))
        try await pool.write { db in try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3)") }
        recorder.reset()
        let sql = "SELECT x FROM t ORDER BY x"
        // The pool's one reader: the second request gets the same connection and the same cached statement.
        try await TestContext.$request.withValue("left-after-one-row") {
            let first = try await pool.read { db in try db.cachedStatement(sql).step() }
            #expect(first)
        }
        try await TestContext.$request.withValue("read-to-the-end") {
            let rows = try await pool.read { db in try db.cachedStatement(sql).rows().all() }
            #expect(rows.count == 3)
        }
        pool.close()
        let events = recorder.statements.filter { $0.sql == sql }
        #expect(events.map(\.rows) == [1, 3])
        #expect(events.map { $0.context as? String } == ["left-after-one-row", "read-to-the-end"])
    }

    /// A synchronous write of the pool (from an async test, where the async overload would be chosen).
    static func blockingWrite(_ pool: DatabasePool) throws {
        try pool.write { db in try db.execute("INSERT INTO t VALUES (-1)") }
    }

    @Test("a pool's count of waiting writes: each write counted while the writer is held, none after, by sequence",
          arguments: [(true, 1), (true, 3), (false, 1), (false, 3)])
    func writesWaiting(groupCommit: Bool, writes: Int) async throws {
        let folder = try TemporaryDirectory()
        let recorder = Recorder()
        let pool = try DatabasePool(path: folder.file("w.db"), key: try Key.rawKey(hex: Array(randomKeyHex().utf8)),
                                    configuration: .init(readerCount: 2, database: .init(observer: recorder),
                                                         groupCommit: groupCommit ? .default : .off))
        try await pool.write { db in try db.execute("CREATE TABLE t(x)") }
        #expect(recorder.pendingWrites == 0, "the CREATE got the writer with no write waiting")
        let (releasing, session) = await Self.holdingWriter(pool)
        defer { releasing.yield() }  // a failure before the release must not leave the session waiting
        let tasks = (1...writes).map { value in
            Task { try await pool.write { db in try db.execute("INSERT INTO t VALUES (?)", [value]) } }
        }
        // A bound, not a timing: the writes queue within milliseconds.
        let deadline = ContinuousClock.now + .seconds(30)
        while recorder.pendingWrites != writes, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(recorder.pendingWrites == writes)
        releasing.yield()
        try await session.value
        for task in tasks { try await task.value }
        _ = try await pool.read { db in try db.scalar(Int.self, "SELECT count(*) FROM t") }
        #expect(recorder.pendingWrites == 0)
        #expect(recorder.readersInUse == 0, "a reader returned is still counted")
        // One number, one reading: a group's member reports its figure twice (the queue's change, the writer
        // acquired), with the same number; two different figures never share one.
        let depths = recorder.queue.map { ($0.sequence, $0.queueDepth) }
            + recorder.writers.map { ($0.sequence, $0.queueDepth) }
        let byNumber = Dictionary(grouping: depths, by: \.0).mapValues { Set($0.map(\.1)) }
        #expect(byNumber.values.allSatisfy { $0.count == 1 }, "two figures share a sequence number: \(byNumber)")
        #expect(recorder.queue.count >= 2 * writes, "each write's joining and leaving the queue is reported")
        #expect(try await pool.read { db in try db.scalar(Int.self, "SELECT count(*) FROM t") } == writes)
        pool.close()
    }

    @Test("a write that gives up waiting for the writer leaves the count at once (a group's queue, the gate)",
          arguments: [true, false])
    func writeThatGivesUp(groupCommit: Bool) async throws {
        let folder = try TemporaryDirectory()
        let recorder = Recorder()
        let pool = try DatabasePool(path: folder.file("g.db"), key: try Key.rawKey(hex: Array(randomKeyHex().utf8)),
                                    configuration: .init(readerCount: 1, database: .init(observer: recorder),
                                                         writerWaitTimeout: .milliseconds(300),
                                                         groupCommit: groupCommit ? .default : .off))
        try await pool.write { db in try db.execute("CREATE TABLE t(x)") }
        let (releasing, session) = await Self.holdingWriter(pool)
        defer { releasing.yield() }
        await #expect(throws: SQLCipherError.self) {
            try await pool.write { db in try db.execute("INSERT INTO t VALUES (1)") }
        }
        #expect(recorder.queue.contains { $0.queueDepth == 1 }, "the write was never counted while it waited")
        #expect(recorder.pendingWrites == 0, "the write that gave up is still counted")
        releasing.yield()
        try await session.value
        pool.close()
        #expect(recorder.pendingWrites == 0)
    }

    /// Holds `pool`'s writer in a writer session until `releasing` yields; returns once the session holds it.
    static func holdingWriter(_ pool: DatabasePool) async
        -> (releasing: AsyncStream<Void>.Continuation, session: Task<Void, any Error>) {
        let (held, holding) = AsyncStream.makeStream(of: Void.self)
        let (release, releasing) = AsyncStream.makeStream(of: Void.self)
        let session = Task {
            try await pool.writeSession { _ in
                holding.yield()
                for await _ in release { break }
            }
        }
        for await _ in held { break }
        return (releasing, session)
    }

    @Test("an observer may run no SQL on a pool's connection when told it got it (found by a reviewer): the writer between a group's entries, its transaction open, and before a synchronous write, a reader before its read; refused, nothing of it written; control: the connections it holds run SQL outside an event",
          arguments: [true, false])
    func writerEventRunsNoSQL(groupCommit: Bool) async throws {
        let folder = try TemporaryDirectory()
        let spy = WriterEventSpy()
        let pool = try DatabasePool(path: folder.file("s.db"), key: try Key.rawKey(hex: Array(randomKeyHex().utf8)),
                                    configuration: .init(readerCount: 1, database: .init(observer: spy),
                                                         groupCommit: groupCommit ? .default : .off))
        try Self.blockingWrite(pool, creating: true, holding: spy)
        let held = try await pool.read { reader in
            spy.reader.withLock { $0 = Unowned(reader) }
            return try spy.count()
        }
        #expect(held == 0, "the control: the reader the spy holds runs SQL")
        let (releasing, session) = await Self.holdingWriter(pool)
        defer { releasing.yield() }
        spy.armed.withLock { $0 = true }
        // Three writes that wait together: with group commit, one group, whose second and third entries get the
        // writer with its transaction open.
        let tasks = (1...3).map { (value: Int) in
            Task { try await pool.write { db in try db.execute("INSERT INTO t VALUES (?)", [value]) } }
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while spy.pendingWrites < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        releasing.yield()
        try await session.value
        for task in tasks { try await task.value }
        try Self.blockingWrite(pool, creating: false, holding: spy)
        // The pool's one reader, which the spy holds from an earlier read.
        _ = try await pool.read { db in try db.scalar(Int.self, "SELECT 1") }
        spy.armed.withLock { $0 = false }
        let errors = spy.errors.withLock { $0 }
        #expect(errors.count == 5 && errors.allSatisfy { $0?.kind == .misuse }, "\(errors)")
        #expect(try await pool.read { db in try db.scalar(Int.self, "SELECT count(*) FROM t WHERE x = 'spy'") } == 0)
        #expect(try await pool.read { db in try db.scalar(Int.self, "SELECT count(*) FROM t") } == 4)
        pool.close()
    }

    /// A synchronous write of the pool that hands the spy its writer (`creating`: the table's) or inserts -1.
    static func blockingWrite(_ pool: DatabasePool, creating: Bool, holding spy: WriterEventSpy) throws {
        try pool.write { db in
            if creating {
                try db.execute("CREATE TABLE t(x)")
                spy.writer.withLock { $0 = Unowned(db) }
                // Control: the writer the spy holds runs SQL outside an event.
                try spy.insert()
                try db.execute("DELETE FROM t")
            } else {
                try db.execute("INSERT INTO t VALUES (-1)")
            }
        }
    }

    @Test("a pool's connection closed inside an async job, by an observer at the library's SAVEPOINT or by the job's body: the job fails with misuse, its clean-up touches no freed connection (the sanitized suites run this on the ASan+UBSan engine), and the write lock is dropped when it ends (found by a reviewer)")
    func closedInsideAnAsyncJob() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("j.db")
        let spy = SQLRunningObserver()
        let pool = try DatabasePool(path: path, key: .passphrase("job-passphrase"),
                                    configuration: .init(readerCount: 1, database: .init(observer: spy),
                                                         groupCommit: .off))
        try await pool.write { db in
            try db.execute("CREATE TABLE t(x)")
            spy.database = db
        }
        spy.armClose(on: "SAVEPOINT")
        let error = await outcome {
            try await pool.write { db in try db.savepoint { try db.execute("INSERT INTO t VALUES (1)") } }
        }.error as? SQLCipherError
        #expect(error?.kind == .misuse, "\(String(describing: error))")
        // The closed writer holds no lock: another connection writes at once.
        let other = try Database(path: path, key: .passphrase("job-passphrase"), configuration: .init(busyTimeout: .zero))
        #expect(thrownError { try other.execute("BEGIN IMMEDIATE; INSERT INTO t VALUES (2); COMMIT") } == nil)
        // A read whose body closes its reader.
        let closing = await outcome { try await pool.read { db in db.close() } }.error as? SQLCipherError
        #expect(closing?.kind == .misuse, "\(String(describing: closing))")
        pool.close()
        #expect(try other.scalar(Int.self, "SELECT count(*) FROM t WHERE x = 2") == 1)
    }

    @Test("a writer session's connection closed by an observer inside the session's transaction: released when that job ends (the transaction rolled back, the write lock dropped), and the transaction fails with misuse (found by a reviewer)")
    func closedInsideAWriterSession() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("s.db")
        let spy = SQLRunningObserver()
        let pool = try DatabasePool(path: path, key: .passphrase("session-passphrase"),
                                    configuration: .init(readerCount: 1, database: .init(observer: spy)))
        try await pool.write { db in
            try db.execute("CREATE TABLE t(x)")
            spy.database = db
        }
        spy.armClose(on: "INSERT")
        let lockFree = Shared(false)
        let error = await outcome {
            try await pool.writeSession { session in
                try await session.transaction {
                    try await session.execute { db in try db.execute("INSERT INTO t VALUES (1)") }
                    let other = try Database(path: path, key: .passphrase("session-passphrase"),
                                             configuration: .init(busyTimeout: .zero))
                    lockFree.update { $0 = thrownError { try other.execute("BEGIN IMMEDIATE; ROLLBACK") } == nil }
                }
            }
        }.error as? SQLCipherError
        #expect(lockFree.get(), "the closed writer still held the session's write lock")
        #expect(error?.kind == .misuse, "\(String(describing: error))")
        pool.close()
        let reopened = try Database(path: path, key: .passphrase("session-passphrase"))
        #expect(try reopened.scalar(Int.self, "SELECT count(*) FROM t") == 0)
    }

    @Test("a queue's async calls carry the caller's context too")
    func queue() async throws {
        let folder = try TemporaryDirectory()
        let recorder = Recorder()
        let queue = try DatabaseQueue(path: folder.file("q.db"), key: try Key.rawKey(hex: Array(randomKeyHex().utf8)),
                                      configuration: .init(observer: recorder))
        recorder.reset()
        try await TestContext.$request.withValue("queued") {
            try await queue.write { db in try db.execute("CREATE TABLE t(x)") }
        }
        let create = recorder.statements.filter { $0.operation == "CREATE" }
        #expect(create.count == 1 && create.first?.context as? String == "queued")
        #expect(recorder.transactions.count == 1 && recorder.transactions.first?.context as? String == "queued")
    }
}

/// An observer that breaks its contract: it runs SQL on the pool's writer, which it holds from a write, when told a
/// write got the writer.
final class WriterEventSpy: DatabaseObserver {
    let writer = Mutex<Unowned?>(nil)
    let reader = Mutex<Unowned?>(nil)
    let armed = Mutex(false)
    let errors = Mutex<[SQLCipherError?]>([])
    /// The newest figure of the writes waiting (by sequence number), and its number.
    private let newest = Mutex((sequence: UInt64(0), depth: 0))

    var pendingWrites: Int { newest.withLock { $0.depth } }

    func writerQueueChanged(_ event: PoolQueueEvent) {
        newest.withLock { if event.sequence >= $0.sequence { $0 = (event.sequence, event.queueDepth) } }
    }

    func writerAcquired(_ event: PoolWaitEvent) {
        guard armed.withLock({ $0 }) else { return }
        let error = thrownError { try insert() }
        errors.withLock { $0.append(error) }
    }

    func readerAcquired(_ event: PoolWaitEvent) {
        guard armed.withLock({ $0 }) else { return }
        let error = thrownError { try count() }
        errors.withLock { $0.append(error) }
    }

    /// The rows of `t`, through the reader it holds.
    func count() throws -> Int? {
        guard let database = reader.withLock({ $0?.database }) else { return nil }
        return try database.scalar(Int.self, "SELECT count(*) FROM t")
    }

    /// Inserts 'spy' through the writer it holds.
    func insert() throws {
        guard let database = writer.withLock({ $0?.database }) else { return }
        try database.execute("INSERT INTO t VALUES ('spy')")
    }
}

/// The pool's writer, held without keeping it (the pool owns it).
struct Unowned: @unchecked Sendable {
    unowned let database: Database
    init(_ database: Database) { self.database = database }
}
