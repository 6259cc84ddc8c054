import Foundation

/// One connection shared safely between threads and tasks: every access is serialized.
///
/// ```swift
/// let queue = try DatabaseQueue(path: path, key: key)
/// try queue.write { db in try db.execute("INSERT INTO note(body) VALUES (?)", ["hi"]) }
/// let count = try await queue.read { db in try db.scalar(Int.self, "SELECT count(*) FROM note") }
/// ```
///
/// ``write(_:)-7o0rf`` runs its closure in a transaction (rolled back if it throws); ``read(_:)-26av5`` runs its
/// closure in a read transaction, so it sees one consistent state. The `async` variants run on the queue's one worker
/// thread, never blocking Swift's cooperative threads; cancelling the task interrupts its statement.
///
/// An acknowledged write survives a power cut: the connection is opened with ``Database/Synchronous/extra``
/// (``Database/Configuration/synchronous``; <doc:Durability>).
///
/// A closure must use the ``Database`` it receives: calling ``read(_:)-26av5`` or ``write(_:)-7o0rf`` of the same
/// queue from inside it throws ``SQLCipherError/Kind/misuse`` (it would nest a transaction in the outer one).
public final class DatabaseQueue: @unchecked Sendable {
    // Invariant: `database` is only touched while `lock` is held. That is what makes the class Sendable. A
    // closure that calls read or write again on the same queue throws .misuse (ReentrancyMarker); the lock is
    // recursive so that close() from inside a closure still works.
    private let lock = NSRecursiveLock()
    private var database: Database?
    /// Runs the `async` calls' work: one thread, as the connection serves one call at a time.
    private let workers = WorkerThreads(limit: 1, name: "SQLCipherKit.DatabaseQueue")

    /// The database file's path.
    public let path: String
    /// The configuration the connection was opened with.
    public let configuration: Database.Configuration

    /// Opens the connection; see ``Database/init(path:key:configuration:)``.
    public init(path: String, key: Key, configuration: Database.Configuration = .init()) throws(SQLCipherError) {
        let database = try Database(path: path, key: key, configuration: configuration)
        self.path = path
        self.configuration = configuration
        self.database = database
    }

    /// Runs `body` with the connection, in a transaction: committed when `body` returns, rolled back when it
    /// throws.
    public func write<Result>(_ body: (Database) throws -> Result) throws -> Result {
        try withDatabase { database in try database.transaction(.immediate) { try body(database) } }
    }

    /// Runs `body` with the connection, in a read transaction (one consistent snapshot).
    public func read<Result>(_ body: (Database) throws -> Result) throws -> Result {
        try withDatabase { database in try database.transaction(.deferred) { try body(database) } }
    }

    /// ``write(_:)`` for `async` callers.
    public func write<Result: Sendable>(_ body: @escaping @Sendable (Database) throws -> Result) async throws -> Result {
        try await AsyncJob.run(on: workers, observer: configuration.observer) { job in
            try self.write { database in try job.perform(on: database, body) }
        }
    }

    /// ``read(_:)`` for `async` callers.
    public func read<Result: Sendable>(_ body: @escaping @Sendable (Database) throws -> Result) async throws -> Result {
        try await AsyncJob.run(on: workers, observer: configuration.observer) { job in
            try self.read { database in try job.perform(on: database, body) }
        }
    }

    /// Closes the connection; later reads and writes throw ``SQLCipherError/Kind/misuse``. Work running now
    /// finishes first.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        database?.close()
        database = nil
    }

    deinit {
        workers.stop()
    }

    private func withDatabase<Result>(_ body: (Database) throws -> Result) throws -> Result {
        try ReentrancyMarker.run(self, "DatabaseQueue.read/write", path: path) {
            try withLockedDatabase(body)
        }
    }

    private func withLockedDatabase<Result>(_ body: (Database) throws -> Result) throws -> Result {
        lock.lock()
        defer { lock.unlock() }
        guard let database else { throw SQLCipherError.api(.misuse, "the database queue is closed", path: path) }
        return try body(database)
    }
}
