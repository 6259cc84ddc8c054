import Foundation
import ProcessTestSupport
import Testing
@testable import SQLCipherKit

@Suite("Writer sessions", .hangGuard(.minutes(2), hang: "a writer session that never hands the writer back"))
struct WriterSessionTests {
    private func pool(_ folder: TemporaryDirectory, writerWaitTimeout: Duration? = .seconds(60)) throws -> DatabasePool {
        let pool = try DatabasePool(path: folder.file("session.db"), key: .rawKey([UInt8](repeating: 5, count: 32)),
                                    configuration: .init(readerCount: 2, writerWaitTimeout: writerWaitTimeout))
        try pool.write { db in try db.execute("CREATE TABLE t(v INTEGER)") }
        return pool
    }

    /// Waits (suspending) until `count` callers wait for the pool's writer, or 2 seconds at most (so that a pool
    /// that lets them in fails the test's expectations instead of hanging it).
    private func waitForWriterWaiters(_ pool: DatabasePool, count: Int) async throws {
        for _ in 0..<400 where pool.writerGate.waiterCount < count {
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test("a session holds the writer across awaits: another task's write waits until the session ends")
    func holdsWriterAcrossAwaits() async throws {
        let folder = try TemporaryDirectory()
        let pool = try pool(folder)
        let other = Shared<Task<Void, any Error>?>(nil)
        try await pool.writeSession { session in
            try await session.execute { db in try db.execute("INSERT INTO t VALUES (1)") }
            other.update { $0 = Task.detached { try await pool.write { db in try db.execute("INSERT INTO t VALUES (2)") } } }
            // Suspended here, the session still holds the writer: the other write queues for it.
            try await waitForWriterWaiters(pool, count: 1)
            try await session.execute { db in try db.execute("INSERT INTO t VALUES (3)") }
        }
        try await other.get()?.value
        let order = try await pool.read { db in try db.fetchAll("SELECT v FROM t ORDER BY rowid").map { try $0.get(0, as: Int.self) } }
        #expect(order == [1, 3, 2])
        pool.close()
    }

    @Test("a session transaction spans awaits: committed when it returns, rolled back when it throws; nested joins")
    func transactions() async throws {
        let folder = try TemporaryDirectory()
        let pool = try pool(folder)
        struct Planned: Error {}
        try await pool.writeSession { session in
            try await session.transaction {
                try await session.execute { db in try db.execute("INSERT INTO t VALUES (1)") }
                await Task.yield()
                // A nested transaction joins the outer one.
                try await session.transaction {
                    #expect(try await session.isInTransaction)
                    try await session.execute { db in try db.execute("INSERT INTO t VALUES (2)") }
                }
                // Readers see nothing of it until the commit.
                #expect(try await pool.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") } == 0)
            }
            await #expect(throws: Planned.self) {
                try await session.transaction {
                    try await session.execute { db in try db.execute("INSERT INTO t VALUES (3)") }
                    await Task.yield()
                    throw Planned()
                }
            }
            #expect(try await !session.isInTransaction)
        }
        #expect(try await pool.read { try $0.scalar(String.self, "SELECT group_concat(v) FROM t") } == "1,2")
        pool.close()
    }

    @Test("a transaction a session leaves open is rolled back when the session ends; a used-up session refuses")
    func openTransactionRolledBack() async throws {
        let folder = try TemporaryDirectory()
        let pool = try pool(folder)
        let escaped = try await pool.writeSession { session in
            try await session.execute { db in try db.execute("BEGIN IMMEDIATE; INSERT INTO t VALUES (1)") }
            return session
        }
        #expect(try await pool.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") } == 0)
        try await pool.write { db in try db.execute("INSERT INTO t VALUES (2)") }
        #expect(try await pool.read { try $0.scalar(String.self, "SELECT group_concat(v) FROM t") } == "2",
                "the next write committed on its own")
        #expect((await outcome { try await escaped.execute { _ in () } }.error as? SQLCipherError)?.kind == .misuse)
        pool.close()
    }

    @Test("inside a session, the pool's own write calls and a nested session throw misuse at once")
    func nestedCallsRefused() async throws {
        let folder = try TemporaryDirectory()
        let pool = try pool(folder)
        try await pool.writeSession { session in
            #expect((await outcome { try await pool.write { _ in () } }.error as? SQLCipherError)?.kind == .misuse)
            #expect(thrownError { try pool.write { _ in () } }?.kind == .misuse)
            #expect((await outcome { try await pool.writeSession { _ in () } }.error as? SQLCipherError)?.kind == .misuse)
            // From the session's own work (a worker thread): the pool's write would wait for this very writer.
            let nested = try await session.execute { _ in thrownError { try pool.write { _ in () } }?.kind }
            #expect(nested == .misuse)
            // Reading is fine.
            #expect(try await pool.read { try $0.scalar(Int.self, "SELECT 1") } == 1)
        }
        pool.close()
    }

    @Test("waiting for the writer has a limit: a write behind a session that never lets go fails with timedOut")
    func writerWaitTimesOut() async throws {
        let folder = try TemporaryDirectory()
        let pool = try pool(folder, writerWaitTimeout: .milliseconds(200))
        // What each write came to while the session still held the writer (nil: still waiting then).
        let outcomes = Shared<[String: String]>([:])
        var duringSession: [String: String] = [:]
        var writes: [Task<Void, Never>] = []
        try await pool.writeSession { session in
            writes.append(Task.detached {
                let result = await outcome { try await pool.write { db in try db.execute("INSERT INTO t VALUES (1)") } }
                outcomes.update { $0["async"] = result.error.map { "\(($0 as? SQLCipherError)?.kind.rawValue ?? "\($0)")" } ?? "written" }
            })
            writes.append(Task.detached {
                let kind = thrownError { try pool.write { db in try db.execute("INSERT INTO t VALUES (2)") } }?.kind
                outcomes.update { $0["blocking"] = kind.map { "\($0)" } ?? "written" }
            })
            // The session holds the writer far longer than the limit: up to 3 seconds for both writes to give up
            // (bounded, so that a missing limit fails the test instead of hanging it).
            for _ in 0..<300 where outcomes.get().count < 2 {
                try await Task.sleep(for: .milliseconds(10))
            }
            duringSession = outcomes.get()
            try await session.execute { db in try db.execute("INSERT INTO t VALUES (3)") }
        }
        for write in writes { await write.value }
        #expect(duringSession == ["async": "timedOut", "blocking": "timedOut"],
                "outcomes while the session held the writer")
        // The pool still works, and the gate is free.
        try await pool.write { db in try db.execute("INSERT INTO t VALUES (4)") }
        pool.close()
    }

    @Test("cancelling a task that waits for the writer ends its wait with interrupted")
    func cancelWhileWaitingForWriter() async throws {
        let folder = try TemporaryDirectory()
        let pool = try pool(folder)
        try await pool.writeSession { _ in
            let waiting = Task.detached { try await pool.write { db in try db.execute("INSERT INTO t VALUES (1)") } }
            try await waitForWriterWaiters(pool, count: 1)
            waiting.cancel()
            let result = await waiting.result
            #expect((result.error as? SQLCipherError)?.kind == .interrupted)
            #expect(pool.writerGate.waiterCount == 0)
        }
        #expect(try await pool.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") } == 0)
        pool.close()
    }
}
