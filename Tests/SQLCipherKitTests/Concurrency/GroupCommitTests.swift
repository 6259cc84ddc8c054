import Foundation
import ProcessTestSupport
import Testing
@testable import SQLCipherKit

/// Group commit (``DatabasePool/Configuration/GroupCommit``): `async` writes that wait together share one
/// transaction and one commit; each is acknowledged after that commit, and one that fails, fails alone.
///
/// The commits are counted by their effect: the WAL's commit frames (frames of the current WAL whose "database size
/// after commit" field is set), one per commit, each one fsync of the WAL with synchronous=EXTRA. No verdict depends
/// on timing: the writes are queued while a writer session holds the writer, and the groups' time bound is set out
/// of reach (30 s) except where a test is about it.
@Suite("Group commit", .hangGuard(.minutes(2), hang: "a group commit that never acknowledges its writes"))
struct GroupCommitTests {
    /// A time bound no test reaches: groups close on their job count or the queue running empty, never on time.
    static let unbounded = DatabasePool.Configuration.GroupCommit(maxJobs: 64, maxDuration: .seconds(30))

    private func pool(_ folder: TemporaryDirectory, groupCommit: DatabasePool.Configuration.GroupCommit = unbounded)
        throws -> DatabasePool {
        var database = Database.Configuration()
        database.foreignKeys = true
        let pool = try DatabasePool(path: folder.file("groups.db"), key: .rawKey([UInt8](repeating: 7, count: 32)),
                                    configuration: .init(readerCount: 2, database: database, groupCommit: groupCommit))
        try pool.write { db in try db.execute(Self.schema) }
        return pool
    }

    static let schema = """
        CREATE TABLE t(v INTEGER UNIQUE);
        CREATE TABLE parent(id INTEGER PRIMARY KEY);
        CREATE TABLE child(p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
        CREATE TRIGGER boom BEFORE INSERT ON t WHEN new.v = 99 BEGIN SELECT RAISE(ROLLBACK, 'boom'); END;
        """

    struct Refusal: Error {}

    /// Writes that each fail in their own way, between writes that succeed (after `INSERT INTO t VALUES (1)`):
    /// a throw (first, without a savepoint, then later), a UNIQUE failure after a row, a deferred foreign key.
    static let mixedWrites: [@Sendable (Database) throws -> Void] = [
        { db in try db.execute("INSERT INTO t VALUES (10)"); throw Refusal() },    // first: no savepoint
        { db in try db.execute("INSERT INTO t VALUES (2)") },
        { db in try db.execute("INSERT INTO t VALUES (20)"); throw Refusal() },
        { db in try db.execute("INSERT INTO t VALUES (3)") },
        { db in try db.execute("INSERT INTO t VALUES (30)"); try db.execute("INSERT INTO t VALUES (1)") },
        { db in try db.execute("INSERT INTO t VALUES (40)"); try db.execute("INSERT INTO child VALUES (5)") },
        { db in try db.execute("INSERT INTO t VALUES (4)") },
    ]

    /// The kind of the error `task` ended with (nil: it succeeded, or the error is not SQLCipherKit's).
    private func failureKind<Value>(_ task: Task<Value, any Error>) async -> SQLCipherError.Kind? {
        (await outcome { try await task.value }).error.map { ($0 as? SQLCipherError)?.kind } ?? nil
    }

    /// The commit frames in the WAL of the database at `path`: frames of the WAL's current generation (its header's
    /// salts) whose "database size after commit" field is not zero.
    static func walCommits(_ path: String) throws -> Int {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "-wal")))
        guard bytes.count >= 32 else { return 0 }
        func word(_ offset: Int) -> UInt32 { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        let pageSize = word(8) == 1 ? 65536 : Int(word(8))
        var commits = 0, offset = 32
        while offset + 24 + pageSize <= bytes.count, word(offset + 8) == word(16), word(offset + 12) == word(20) {
            if word(offset + 4) != 0 { commits += 1 }
            offset += 24 + pageSize
        }
        return commits
    }

    /// Holds the pool's writer with a writer session until the returned closure is called; returns once the session
    /// holds it.
    private func holdWriter(_ pool: DatabasePool) async throws -> (release: @Sendable () -> Void, done: Task<Void, any Error>) {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let holding = Shared(false)
        let done = Task {
            try await pool.writeSession { _ in
                holding.update { $0 = true }
                for await _ in stream { break }
            }
        }
        for _ in 0..<400 where !holding.get() { try await Task.sleep(for: .milliseconds(5)) }
        try #require(holding.get(), "the session did not get the writer")
        return ({ continuation.finish() }, done)
    }

    /// Waits (suspending, 2 s at most) until `count` writes are queued for a group.
    private func waitForQueued(_ pool: DatabasePool, _ count: Int) async throws {
        for _ in 0..<400 where pool.groupCommitQueueCount < count { try await Task.sleep(for: .milliseconds(5)) }
        try #require(pool.groupCommitQueueCount == count, "\(pool.groupCommitQueueCount) writes queued, not \(count)")
    }

    /// Every write reported committed (`committed`, by the value it inserts) has its row, none reported failed has
    /// one, the rows are `expected`, and the pool's writer takes another write.
    private func expectOnlyCommittedWrites(_ committed: [Int: Bool], rows expected: [Int], in pool: DatabasePool,
                                           sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let rows = try await values(pool)
        for (value, reported) in committed {
            #expect(reported == rows.contains(value), "\(value) reported committed: \(reported); rows \(rows)",
                    sourceLocation: sourceLocation)
        }
        #expect(rows == expected, "\(rows)", sourceLocation: sourceLocation)
        try await pool.write { db in try db.execute("INSERT INTO t VALUES (4)") }
        #expect(try await values(pool).last == 4, sourceLocation: sourceLocation)
    }

    private func values(_ pool: DatabasePool) async throws -> [Int] {
        let text = try await pool.read { db in try db.textValue("SELECT group_concat(v) FROM (SELECT v FROM t ORDER BY v)") }
        return (text ?? "").split(separator: ",").compactMap { Int($0) }
    }

    @Test("a write that ends the group's transaction (INSERT OR ROLLBACK, caught) and goes on, maybe beginning another (SAVEPOINT, or the library's cached BEGIN), fails alone (found by an attacker): the write before it runs again and commits, the one after it commits; no write is reported committed without its row, none reported failed with it",
          arguments: [("SAVEPOINT y", false), ("BEGIN IMMEDIATE TRANSACTION", false), (nil, false), ("SAVEPOINT y", true),
                      ("BEGIN IMMEDIATE TRANSACTION", true), (nil, true)])
    func groupEndedAndBegunAgain(restart: String?, culpritFirst: Bool) async throws {
        let folder = try TemporaryDirectory()
        let pool = try pool(folder)
        defer { pool.close() }
        try await pool.write { db in try db.execute("INSERT INTO t VALUES (0)") }
        let (release, session) = try await holdWriter(pool)
        let culprit: @Sendable () -> Task<Void, any Error> = {
            Task {
                try await pool.write { db in
                    #expect(thrownError { try db.execute("INSERT OR ROLLBACK INTO t VALUES (0)") }?.kind == .constraint)
                    // The library's cached BEGIN, through the cache (no transaction control recorded), or SQL text.
                    if let restart, restart.hasPrefix("BEGIN") {
                        try db.cachedStatement(restart).execute()
                    } else if let restart {
                        try db.execute(restart)
                    }
                    try db.execute("INSERT INTO t VALUES (2)")
                }
            }
        }
        let innocent: @Sendable (Int) -> Task<Void, any Error> = { value in
            Task { try await pool.write { db in try db.execute("INSERT INTO t VALUES (?)", [value]) } }
        }
        // Queued in order: A (1), the culprit (2), C (3); or the culprit first.
        var tasks: [(Int, Task<Void, any Error>)] = []
        let order: [Int] = culpritFirst ? [2, 3] : [1, 2, 3]
        for (index, value) in order.enumerated() {
            tasks.append((value, value == 2 ? culprit() : innocent(value)))
            try await waitForQueued(pool, index + 1)
        }
        release()
        try await session.value
        var committed: [Int: Bool] = [:]
        for (value, task) in tasks { committed[value] = await outcome { try await task.value }.error == nil }
        try await expectOnlyCommittedWrites(committed, rows: culpritFirst ? [0, 3] : [0, 1, 3], in: pool)
    }

    @Test("a write that closes the pool's writer in a group fails alone (misuse), its work undone (found by a reviewer): the write before it runs again and commits, the one after it commits, each on the writer the pool opens in its place",
          arguments: [false, true])
    func groupWriteClosesTheWriter(culpritFirst: Bool) async throws {
        let folder = try TemporaryDirectory()
        let pool = try pool(folder)
        defer { pool.close() }
        try await pool.write { db in try db.execute("INSERT INTO t VALUES (0)") }
        let (release, session) = try await holdWriter(pool)
        var tasks: [(Int, Task<Void, any Error>)] = []
        let order: [Int] = culpritFirst ? [2, 3] : [1, 2, 3]
        for (index, value) in order.enumerated() {
            tasks.append((value, Task {
                try await pool.write { db in
                    try db.execute("INSERT INTO t VALUES (?)", [value])
                    if value == 2 { db.close() }
                }
            }))
            try await waitForQueued(pool, index + 1)
        }
        release()
        try await session.value
        var committed: [Int: Bool] = [:]
        var culpritsError: SQLCipherError?
        for (value, task) in tasks {
            let error = await outcome { try await task.value }.error
            committed[value] = error == nil
            if value == 2 { culpritsError = error as? SQLCipherError }
        }
        #expect(culpritsError?.kind == .misuse, "\(String(describing: culpritsError))")
        try await expectOnlyCommittedWrites(committed, rows: culpritFirst ? [0, 3] : [0, 1, 3], in: pool)
    }

    @Test("a write that closes the pool in a group commits and returns at the group's commit, as the writes before it do, without waiting for the close (which waits for a reader) and without interrupting anything; the write after it fails (misuse); a close() from outside returns once the connections are closed")
    func groupWriteClosesThePool() async throws {
        let folder = try TemporaryDirectory()
        let wal = folder.file("groups.db") + "-wal"
        let pool = try pool(folder)
        try await pool.write { db in try db.execute("INSERT INTO t VALUES (0)") }
        // A reader held until the test lets it go: the close waits for it.
        let reader = try await HeldReader(pool)
        let (release, session) = try await holdWriter(pool)
        // Per write: its error (nil: it committed) once it returned.
        let returned = Shared<[Int: SQLCipherError?]>([:])
        var tasks: [Task<Void, Never>] = []
        for (index, value) in [1, 2, 3, 4].enumerated() {
            tasks.append(Task {
                let result = await outcome {
                    try await pool.write { db in
                        try db.execute("INSERT INTO t VALUES (?)", [value])
                        if value == 3 {
                            pool.close()
                            // A statement long enough to be hit by an interrupt every 10 ms, had the close sent them.
                            _ = try db.scalar(Int.self, """
                                WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000)
                                SELECT count(*) FROM c
                                """)
                        }
                    }
                }
                returned.update { $0[value] = result.error as? SQLCipherError }
            })
            try await waitForQueued(pool, index + 1)
        }
        release()
        try await session.value
        // The writes up to the closing one return at their commit, while the reader holds the close back.
        for _ in 0..<4000 where (1...3).contains(where: { returned.get()[$0] == nil }) {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(pool.isClosed)
        for value in 1...3 {
            #expect(returned.get()[value].map { $0 == nil } == true, "\(value): \(returned.get())")
        }
        #expect(FileManager.default.fileExists(atPath: wal), "the close ended while the reader was held")
        reader.letGo()
        for task in tasks { await task.value }
        #expect(returned.get()[4].map { $0?.kind == .misuse } == true, "\(returned.get())")
        try await offPool { pool.close() }
        #expect(!FileManager.default.fileExists(atPath: wal), "close() returned before the connections were closed")
        await reader.ended()
        let rows = try Database(path: folder.file("groups.db"), key: .rawKey([UInt8](repeating: 7, count: 32)))
            .textValue("SELECT group_concat(v) FROM (SELECT v FROM t ORDER BY v)")
        #expect(rows == "0,1,2,3")
    }

    @Test("50 writes that wait together share one commit; each returns its own result after it")
    func waitingWritesShareOneCommit() async throws {
        let folder = try TemporaryDirectory()
        let pool = try pool(folder)
        defer { pool.close() }
        let path = folder.file("groups.db")
        let hold = try await holdWriter(pool)
        let before = try Self.walCommits(path)
        let writes = (0..<50).map { index in
            Task {
                try await pool.write { db in
                    try db.execute("INSERT INTO t VALUES (?)", index)
                    // Each write sees the ones queued before it: the same as running them one after another.
                    return try db.scalar(Int.self, "SELECT count(*) FROM t") ?? -1
                }
            }
        }
        try await waitForQueued(pool, 50)
        #expect(try Self.walCommits(path) == before, "nothing committed while the writer was held")
        hold.release()
        try await hold.done.value
        var seen: [Int] = []
        for write in writes { seen.append(try await write.value) }
        #expect(Set(seen) == Set(1...50), "each write saw the writes before it: \(seen.sorted())")
        #expect(try await values(pool) == Array(0..<50))
        #expect(try Self.walCommits(path) - before == 1, "one commit for the 50 writes")
    }

    @Test("A write that throws, breaks a constraint or leaves a deferred foreign key fails alone; the group commits")
    func failingWritesFailAlone() async throws {
        let folder = try TemporaryDirectory()
        let pool = try pool(folder)
        defer { pool.close() }
        let path = folder.file("groups.db")
        try await pool.write { db in try db.execute("INSERT INTO t VALUES (1)") }
        let hold = try await holdWriter(pool)
        let before = try Self.walCommits(path)
        let bodies = Self.mixedWrites
        var writes: [Task<Void, any Error>] = []
        for (index, body) in bodies.enumerated() {
            writes.append(Task { try await pool.write(body) })
            try await waitForQueued(pool, index + 1)
        }
        hold.release()
        try await hold.done.value
        var outcomes: [String] = []
        for write in writes {
            switch await outcome({ try await write.value }) {
            case .success: outcomes.append("ok")
            case .failure(let error as SQLCipherError): outcomes.append(error.kind.rawValue)
            case .failure(let error): outcomes.append(error is Refusal ? "refusal" : "\(error)")
            }
        }
        #expect(outcomes == ["refusal", "ok", "refusal", "ok", "constraint", "constraint", "ok"])
        #expect(try await values(pool) == [1, 2, 3, 4], "only the writes that succeeded")
        #expect(try await pool.read { try $0.scalar(Int.self, "SELECT count(*) FROM child") } == 0)
        #expect(try Self.walCommits(path) - before == 1, "the failures did not split the group")
    }

    @Test("A write whose failure ends the transaction fails alone; the writes before it run again, alone, once")
    func transactionEndingWriteFailsAlone() async throws {
        let folder = try TemporaryDirectory()
        let pool = try pool(folder)
        defer { pool.close() }
        let path = folder.file("groups.db")
        let runs = Shared(0)
        let hold = try await holdWriter(pool)
        let before = try Self.walCommits(path)
        let first = Task { try await pool.write { db in runs.update { $0 += 1 }; try db.execute("INSERT INTO t VALUES (1)") } }
        try await waitForQueued(pool, 1)
        let second = Task { try await pool.write { db in try db.execute("INSERT INTO t VALUES (2)") } }
        try await waitForQueued(pool, 2)
        // RAISE(ROLLBACK) rolls back the whole transaction, the first two writes' work with it.
        let boom = Task { try await pool.write { db in try db.execute("INSERT INTO t VALUES (99)") } }
        try await waitForQueued(pool, 3)
        let after = Task { try await pool.write { db in try db.execute("INSERT INTO t VALUES (3)") } }
        try await waitForQueued(pool, 4)
        hold.release()
        try await hold.done.value
        try await first.value
        try await second.value
        #expect(await failureKind(boom) == .constraint)
        try await after.value
        #expect(try await values(pool) == [1, 2, 3])
        #expect(runs.get() == 2, "the first write's body ran again once, after SQLite rolled its work back")
        #expect(try Self.walCommits(path) - before == 3, "the two writes run again alone, then the last one")
    }

    @Test("A cancelled write is rolled back alone: queued, it fails at once; running in a group, at its next statement")
    func cancelledWriteRolledBackAlone() async throws {
        let folder = try TemporaryDirectory()
        let pool = try pool(folder)
        defer { pool.close() }
        let hold = try await holdWriter(pool)
        let first = Task { try await pool.write { db in try db.execute("INSERT INTO t VALUES (1)") } }
        try await waitForQueued(pool, 1)
        let started = Shared(false)
        let cancelled = Task {
            try await pool.write { db in
                try db.execute("INSERT INTO t VALUES (2)")
                started.update { $0 = true }
                // Statements until the cancel stops the next one (10 s at most: then the test fails).
                let end = Date().addingTimeInterval(10)
                while Date() < end { try db.execute("SELECT 1") }
            }
        }
        try await waitForQueued(pool, 2)
        let last = Task { try await pool.write { db in try db.execute("INSERT INTO t VALUES (3)") } }
        try await waitForQueued(pool, 3)
        // Queued behind the held writer: a cancel fails it at once, and it never runs.
        let neverRuns = Task { try await pool.write { db in try db.execute("INSERT INTO t VALUES (4)") } }
        try await waitForQueued(pool, 4)
        neverRuns.cancel()
        #expect(await failureKind(neverRuns) == .interrupted)
        #expect(pool.groupCommitQueueCount == 3)
        hold.release()
        try await hold.done.value
        for _ in 0..<400 where !started.get() { try await Task.sleep(for: .milliseconds(5)) }
        cancelled.cancel()
        #expect(await failureKind(cancelled) == .interrupted)
        try await first.value
        try await last.value
        #expect(try await values(pool) == [1, 3])
    }

    @Test("The first write of a group is interrupted by a cancel, mid-statement, and the next write still commits")
    func cancelledFirstWriteIsInterrupted() async throws {
        let folder = try TemporaryDirectory()
        let pool = try pool(folder)
        defer { pool.close() }
        let hold = try await holdWriter(pool)
        let started = Shared(false)
        let long = Task {
            try await pool.write { db in
                try db.execute("INSERT INTO t VALUES (1)")
                started.update { $0 = true }
                // One statement of minutes: only an interrupt ends it.
                _ = try db.scalar(Int.self, """
                    WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000)
                    SELECT count(*) FROM c
                    """)
            }
        }
        try await waitForQueued(pool, 1)
        let next = Task { try await pool.write { db in try db.execute("INSERT INTO t VALUES (2)") } }
        try await waitForQueued(pool, 2)
        hold.release()
        try await hold.done.value
        for _ in 0..<400 where !started.get() { try await Task.sleep(for: .milliseconds(5)) }
        long.cancel()
        #expect(await failureKind(long) == .interrupted)
        try await next.value
        #expect(try await values(pool) == [2])
    }

    @Test("Control: the same writes in one transaction without savepoints keep the failed writes' rows, and the deferred foreign key fails the whole commit")
    func failingWritesControl() throws {
        // What the checks of failingWritesFailAlone look for, shown on a group made wrong by hand: were the pool to
        // run its group like this, those checks would see it (rows 10, 20, 30 kept; every write lost at the commit).
        let folder = try TemporaryDirectory()
        var configuration = Database.Configuration()
        configuration.foreignKeys = true
        for (label, bodies) in [("without the deferred foreign key", Self.mixedWrites.enumerated().filter { $0.offset != 5 }.map(\.element)),
                                ("with it", Self.mixedWrites)] {
            let db = try Database(path: folder.file("control-\(bodies.count).db"),
                                  key: .rawKey([UInt8](repeating: 7, count: 32)), configuration: configuration)
            defer { db.close() }
            try db.execute(Self.schema)
            try db.execute("INSERT INTO t VALUES (1)")
            try db.execute("BEGIN IMMEDIATE")
            for body in bodies { _ = try? body(db) }
            let commit = thrownError { try db.execute("COMMIT") }
            if db.isInTransaction { try db.execute("ROLLBACK") }
            let values = (try db.textValue("SELECT group_concat(v) FROM (SELECT v FROM t ORDER BY v)") ?? "")
            if label == "with it" {
                #expect(commit?.kind == .constraint, "\(label): \(String(describing: commit))")
                #expect(values == "1", "\(label): every write of the group is lost: \(values)")
            } else {
                #expect(commit == nil, "\(label): \(String(describing: commit))")
                #expect(values == "1,2,3,4,10,20,30", "\(label): the failed writes' rows are kept: \(values)")
            }
        }
    }

    @Test("Bounds: at most maxJobs writes per commit; a zero duration commits each write alone; off commits each alone",
          arguments: [("maxJobs 3", 3, Duration.seconds(30), true, 10, 4), ("maxDuration 0", 64, Duration.zero, true, 5, 5),
                      ("off", 64, Duration.seconds(30), false, 5, 5)])
    func bounds(_ name: String, maxJobs: Int, maxDuration: Duration, enabled: Bool, writes: Int, commits: Int) async throws {
        let folder = try TemporaryDirectory()
        let pool = try pool(folder, groupCommit: .init(isEnabled: enabled, maxJobs: maxJobs, maxDuration: maxDuration))
        defer { pool.close() }
        let path = folder.file("groups.db")
        let hold = try await holdWriter(pool)
        let before = try Self.walCommits(path)
        let tasks = (0..<writes).map { index in Task { try await pool.write { db in try db.execute("INSERT INTO t VALUES (?)", index) } } }
        if enabled {
            try await waitForQueued(pool, writes)
        } else {
            for _ in 0..<400 where pool.writerGate.waiterCount < writes { try await Task.sleep(for: .milliseconds(5)) }
            #expect(pool.writerGate.waiterCount == writes, "\(name): each write waits for the writer on its own")
            #expect(pool.groupCommitQueueCount == 0, "\(name)")
        }
        hold.release()
        try await hold.done.value
        for task in tasks { try await task.value }
        #expect(try await values(pool).count == writes, "\(name)")
        #expect(try Self.walCommits(path) - before == commits, "\(name)")
    }

    @Test("Bounds out of range are refused when the pool opens")
    func invalidBounds() throws {
        let folder = try TemporaryDirectory()
        for bounds in [DatabasePool.Configuration.GroupCommit(maxJobs: 0), .init(maxDuration: .milliseconds(-1))] {
            let error = thrownError {
                try DatabasePool(path: folder.file("bounds.db"), key: .rawKey([UInt8](repeating: 7, count: 32)),
                                 configuration: .init(readerCount: 1, groupCommit: bounds))
            }
            #expect(error?.kind == .invalidArgument, "\(bounds): \(String(describing: error))")
        }
    }
}
