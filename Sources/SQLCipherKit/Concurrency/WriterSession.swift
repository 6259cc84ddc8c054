import Foundation
import Synchronization

/// The writer of a ``DatabasePool``, held by one task across `await`s: see
/// ``DatabasePool/writeSession(_:)``.
///
/// Each ``execute(_:)`` runs its closure on the writer, on one of the pool's worker threads; between two calls
/// the task may await anything else, and no other caller writes meanwhile. Statements outside a
/// ``transaction(_:)`` commit one by one (SQLite's autocommit), as on a plain connection.
///
/// A session is valid only inside the closure that received it: a later call throws
/// ``SQLCipherError/Kind/misuse``. Inside the session, use it rather than the pool's own write calls: those
/// would wait for the writer the session holds, so they throw ``SQLCipherError/Kind/misuse`` at once.
public final class WriterSession: Sendable {
    private let pool: DatabasePool
    private let ended = OneWayFlag()
    /// Serializes the session's own calls (child tasks of the session's task may call it concurrently).
    private let serial = Mutex(())

    init(pool: DatabasePool) {
        self.pool = pool
    }

    /// Runs `body` on the writer and returns its result; cancelling the task interrupts its statement.
    public func execute<Result: Sendable>(_ body: @escaping @Sendable (Database) throws -> Result) async throws
        -> Result {
        try checkActive()
        return try await run(body)
    }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE`) that stays open across its `await`s: committed when it
    /// returns, rolled back when it throws. Inside a transaction already open on this session, `body` joins it:
    /// its work commits or rolls back with the outer transaction.
    public func transaction<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        try checkActive()
        if try await run({ $0.isInTransaction }) {
            // Joined: the outer transaction commits or rolls back this work; SQL text inside may not end it.
            try await run { $0.joinTransaction() }
            do {
                let result = try await body()
                await leaveJoinedTransaction()
                return result
            } catch {
                await leaveJoinedTransaction()
                throw error
            }
        }
        try await run { try $0.beginTransaction(.immediate) }
        let result: Result
        do {
            result = try await body()
        } catch {
            await rollBack()
            throw error
        }
        do {
            try await run { try $0.commitTransaction() }
        } catch {
            await rollBack()
            throw error
        }
        return result
    }

    /// Whether a transaction is open on the writer.
    public var isInTransaction: Bool {
        get async throws { try await execute { $0.isInTransaction } }
    }

    /// Rolls back the transaction the session began, whatever the task's cancellation (cleanup must run).
    func rollBack() async {
        _ = try? await Task { [self] in try await run { $0.rollbackTransaction() } }.value
    }

    /// Rolls back what the session left open and ends it, in one hold of the lock its jobs take, whatever the task's
    /// cancellation: a stray task's job cannot begin a transaction in between, which nothing would end (a reviewer:
    /// the next session joined it and reported success, and its closing rollback undid the work).
    func finish() async {
        _ = try? await Task { [self] in try await run(endingSession: true) { $0.rollbackTransaction() } }.value
        end()
    }

    /// Closes a joined transaction's scope, whatever the task's cancellation (cleanup must run).
    private func leaveJoinedTransaction() async {
        _ = try? await Task { [self] in try await run { $0.leaveJoinedTransaction() } }.value
    }

    /// Marks the session over: any later call throws.
    func end() {
        // Under the lock a job runs in: a job already running ends first, and one that starts later sees the end (a
        // reviewer: a stray task's job, checked before the end, ran after the session had given the writer back).
        serial.withLock { _ in _ = ended.set() }
    }

    private func checkActive() throws(SQLCipherError) {
        if ended.isSet {
            throw .api(.misuse, "the writer session has ended: use a session only inside the closure that received it",
                       path: pool.path)
        }
    }

    /// Runs `body` on the writer as a job of the session; `endingSession`: the session ends with it, under the same
    /// hold of the lock (whether `body` ran or not).
    private func run<Result: Sendable>(endingSession: Bool = false, _ body: @escaping @Sendable (Database) throws -> Result)
        async throws -> Result {
        let pool = self.pool
        return try await AsyncJob.run(on: pool.workers, observer: pool.configuration.database.observer, owner: pool,
                                      path: pool.path) { [self] job in
            try serial.withLock { _ in
                try checkActive()
                defer { if endingSession { _ = ended.set() } }
                return try ReentrancyMarker.run(pool, "DatabasePool.writeSession", path: pool.path) {
                    try pool.withGateHeld { database in try job.perform(on: database, body) }
                }
            }
        }
    }
}

extension WriterSession {
    /// The pools whose writer session the current task (or its child tasks) runs.
    @TaskLocal static var activePools: [ObjectIdentifier] = []

    /// Whether the current task runs a writer session of `pool`.
    static func isActive(in pool: DatabasePool) -> Bool {
        activePools.contains(ObjectIdentifier(pool))
    }
}
