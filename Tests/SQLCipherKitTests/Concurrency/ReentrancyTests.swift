import Foundation
import ProcessTestSupport
import SQLCipherKit
import Synchronization
import Testing

/// A closure that calls its own pool or queue again used to wait forever for the connection the outer call
/// holds. Each nested call now throws `.misuse` at once. Every case runs on a thread of its own under a
/// watchdog, so that without the detection the test fails after 20 s instead of hanging the run.
// The hang guard catches a hang of the whole test; the deadlock itself is caught by a 20 s watchdog.
@Suite("Re-entrant pool and queue calls",
       .hangGuard(.minutes(3), hang: "a nested call that deadlocks and a watchdog that fails to report it"))
struct ReentrancyTests {
    /// The outcome of `body` run on a new thread, or nil when it did not finish within `seconds` (it is then
    /// left blocked: a deadlock cannot be undone).
    static func underWatchdog<Value: Sendable>(seconds: Double = 20,
                                               _ body: @escaping @Sendable () throws -> Value) -> Result<Value, any Error>? {
        let outcome = Mutex<Result<Value, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let result = Result { try body() }
            outcome.withLock { $0 = result }
            done.signal()
        }
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        return outcome.withLock { $0 }
    }

    static func pool(in folder: TemporaryDirectory, readers: Int = 1) throws -> DatabasePool {
        let key = try Key.rawKey(hex: Array(randomKeyHex().utf8))
        let pool = try DatabasePool(path: folder.file("pool.db"), key: key,
                                    configuration: .init(readerCount: readers))
        try pool.write { try $0.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        return pool
    }

    /// The nested call's error, checked to be the re-entrancy misuse.
    static func expectReentrancyMisuse(_ outcome: Result<SQLCipherError?, any Error>?, _ comment: Comment) {
        guard let outcome else {
            Issue.record("the nested call did not return within 20 s (deadlock): \(comment)")
            return
        }
        switch outcome {
        case .success(let error):
            #expect(error?.kind == .misuse, comment)
            #expect(error?.message.contains("from inside a closure of the same") == true,
                    "\(String(describing: error)) \(comment)")
        case .failure(let error):
            Issue.record("the outer call failed: \(error) \(comment)")
        }
    }

    @Test("read inside read (one reader), barrierWrite and rekey inside read, write inside write: .misuse")
    func nestedPoolCalls() throws {
        let folder = try TemporaryDirectory()
        let pool = try Self.pool(in: folder)
        let key = try Key.rawKey(hex: Array(randomKeyHex().utf8))
        let nested: [(String, @Sendable (DatabasePool) throws -> Void)] = [
            ("read in read", { pool in _ = try pool.read { _ in try pool.read { _ in 1 } } }),
            ("barrierWrite in read", { pool in _ = try pool.read { _ in try pool.barrierWrite { _ in 1 } } }),
            ("rekey in read", { pool in _ = try pool.read { _ in try pool.rekey(to: key) } }),
            ("write in write", { pool in _ = try pool.write { _ in try pool.write { _ in 1 } } }),
            ("write in barrierWrite", { pool in _ = try pool.barrierWrite { _ in try pool.write { _ in 1 } } }),
        ]
        for (name, call) in nested {
            let outcome = Self.underWatchdog { () -> SQLCipherError? in
                do {
                    try call(pool)
                    return nil
                } catch let error as SQLCipherError {
                    return error
                }
            }
            Self.expectReentrancyMisuse(outcome, "\(name)")
            // After a deadlock the pool stays blocked: leave it (and its folder) alone rather than hang the run.
            guard outcome != nil else {
                Self.abandon(pool, folder)
                return
            }
        }
        // The pool is still usable, and the outer transactions were rolled back (the closures threw).
        #expect(try pool.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") } == 1)
        pool.close()
    }

    /// Keeps a deadlocked pool and its folder alive for the rest of the process: closing it would wait forever.
    static func abandon(_ pool: DatabasePool, _ folder: TemporaryDirectory) {
        _ = Unmanaged.passRetained(pool)
        _ = Unmanaged.passRetained(folder)
    }

    @Test("close inside a closure returns at once, and the closure goes on (a statement after it runs); the connections close once the outer call has ended, which a close() from outside waits for")
    func nestedClose() throws {
        let folder = try TemporaryDirectory()
        let pool = try Self.pool(in: folder)
        let outcome = Self.underWatchdog { () -> Int? in
            try pool.read { db in
                pool.close()
                return try db.scalar(Int.self, "SELECT x FROM t")
            }
        }
        guard let outcome else {
            Issue.record("close() inside read did not return within 20 s (deadlock)")
            Self.abandon(pool, folder)
            return
        }
        #expect(try outcome.get() == 1)
        #expect(pool.isClosed)
        #expect(thrownError { try pool.read { _ in 1 } }?.kind == .misuse)
        // A close from outside waits for the nested one: the last connection to close removed the write-ahead log.
        guard Self.underWatchdog({ pool.close() }) != nil else {
            Issue.record("close() from outside did not return within 20 s (deadlock)")
            Self.abandon(pool, folder)
            return
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file("pool.db") + "-wal"))
    }

    @Test("Different pools nest freely: only the same pool is refused")
    func otherPoolNests() throws {
        let first = try TemporaryDirectory()
        let second = try TemporaryDirectory()
        let a = try Self.pool(in: first)
        let b = try Self.pool(in: second)
        let outcome = Self.underWatchdog {
            try a.write { _ in try b.read { try $0.scalar(Int.self, "SELECT x FROM t") } }
        }
        guard let outcome else {
            Issue.record("a write on one pool around a read on another did not return within 20 s")
            Self.abandon(a, first)
            Self.abandon(b, second)
            return
        }
        defer { a.close(); b.close() }
        #expect(try outcome.get() == 1)
        // Sequential calls on the same pool, and calls from another thread while one runs, are not nesting.
        #expect(try a.read { _ in 1 } == 1)
        #expect(try a.read { _ in 2 } == 2)
    }

    @Test("DatabaseQueue: read or write inside its own closure is .misuse")
    func nestedQueueCalls() throws {
        let folder = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: folder.file("queue.db"), key: try Key.rawKey(hex: Array(randomKeyHex().utf8)))
        try queue.write { try $0.execute("CREATE TABLE t(x)") }
        let outcome = Self.underWatchdog { () -> SQLCipherError? in
            do {
                try queue.read { _ in try queue.write { try $0.execute("INSERT INTO t VALUES (1)") } }
                return nil
            } catch let error as SQLCipherError {
                return error
            }
        }
        Self.expectReentrancyMisuse(outcome, "queue write in read")
        guard outcome != nil else { return }
        #expect(try queue.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") } == 0)
        queue.close()
    }
}
