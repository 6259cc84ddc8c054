import Foundation

/// The reader connections of a ``DatabasePool``: each used by one thread at a time.
final class ReaderPool: @unchecked Sendable {
    // Invariant: `available` is only touched with `lock` held; a connection taken out of it belongs to the
    // taking thread until it is put back. `permits` counts the connections in `available`.
    private let lock = NSLock()
    private var available: [Database]
    private var all: [Database]
    private let permits: DispatchSemaphore
    private let count: Int

    init(count: Int, open: () throws(SQLCipherError) -> Database) throws(SQLCipherError) {
        var connections: [Database] = []
        for _ in 0..<count { connections.append(try open()) }
        available = connections
        all = connections
        self.count = count
        permits = DispatchSemaphore(value: count)
    }

    /// Runs `body` with a free reader, waiting for one when all are busy.
    /// `acquired`, when given, is told how long the call waited, the readers in use (this one included), their
    /// number and the number of ``ObservationSequence`` taken with the count; `released`, the readers in use once
    /// this one is back, their number and its number. A reader that `body` closed (itself, or through an observer)
    /// goes back as `replacement`'s new connection when one opens (found by an attacker: the pool kept failing
    /// with "closed" on it).
    func withReader<Result>(acquired: ((Duration, Int, Int, UInt64) -> Void)? = nil,
                            released: ((Int, Int, UInt64) -> Void)? = nil,
                            replacement: () throws(SQLCipherError) -> Database,
                            _ body: (Database) throws -> Result) throws -> Result {
        let started = acquired.map { _ in ContinuousClock.now }
        permits.wait()
        let (reader, inUse, number) = lock.withLock {
            (available.removeLast(), count - available.count, acquired == nil ? 0 : ObservationSequence.shared.next())
        }
        if let acquired, let started {
            // An observer may run no SQL on the reader it is told of.
            reader.callingUserCode(runsNoSQL: true) { acquired(ContinuousClock.now - started, inUse, count, number) }
        }
        defer {
            let returned = reader.isClosed ? replacing(reader, with: replacement) : reader
            let (inUse, number) = lock.withLock { () -> (Int, UInt64) in
                available.append(returned)
                return (count - available.count, released == nil ? 0 : ObservationSequence.shared.next())
            }
            permits.signal()
            released?(inUse, count, number)
        }
        return try body(reader)
    }

    /// A new connection from `open` in place of `reader`, which its user closed; `reader` itself when none opens (its
    /// next user then fails with misuse, and the next release tries again).
    private func replacing(_ reader: Database, with open: () throws(SQLCipherError) -> Database) -> Database {
        guard let fresh = try? open() else { return reader }
        lock.withLock {
            if let index = all.firstIndex(where: { $0 === reader }) { all[index] = fresh }
        }
        return fresh
    }

    /// Runs `body` while holding every reader (no read can run).
    func withAllReaders<Result>(_ body: ([Database]) throws -> Result) throws -> Result {
        for _ in 0..<count { permits.wait() }
        defer { for _ in 0..<count { permits.signal() } }
        return try body(lock.withLock { all })
    }

    /// ``withAllReaders(_:)`` for typed-throwing bodies.
    func withAllReadersTyped(_ body: () throws(SQLCipherError) -> Void) throws(SQLCipherError) {
        for _ in 0..<count { permits.wait() }
        defer { for _ in 0..<count { permits.signal() } }
        try body()
    }

    /// Replaces every reader with a new connection (call while holding all of them).
    func reopenAll(_ open: () throws(SQLCipherError) -> Database) throws(SQLCipherError) {
        var connections: [Database] = []
        for _ in 0..<count { connections.append(try open()) }
        lock.withLock {
            all.forEach { $0.close() }
            all = connections
            available = connections
        }
    }

    /// The kind of key each reader was opened with (for tests: readers of a passphrase pool use the derived raw
    /// key).
    var keyKinds: [Key.Kind?] { lock.withLock { all.map(\.keyKind) } }

    /// Interrupts every reader's running statement.
    func interruptAll() {
        lock.withLock { all.forEach { $0.interruptHandle.interrupt() } }
    }

    /// Closes every reader (call while holding all of them).
    func closeAll() {
        lock.withLock { all.forEach { $0.close() } }
    }
}
