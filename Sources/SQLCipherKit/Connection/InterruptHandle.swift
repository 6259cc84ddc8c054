import CSQLCipher
import Synchronization

/// Interrupts a connection's running statement from any thread or task.
///
/// The interrupted statement fails with ``SQLCipherError/Kind/interrupted`` and its transaction rolls back.
/// After the connection closes, ``interrupt()`` does nothing.
///
/// The library's long operations on whole files (``Database/export(to:key:cipher:replacing:progress:)``,
/// ``Database/backup(to:key:replacing:progress:)``, ``Database/rekey(to:)``, ``Database/migrate(path:key:willRun:)``)
/// also stop for an interrupt that comes between two of their statements, which SQLite alone would forget: they
/// note the handle's count of interrupts when they start and check it at every step.
public final class InterruptHandle: Sendable {
    // The connection pointer's bits (0 once the connection is closed): an integer, so the lock can guard it
    // across threads. The lock keeps close and interrupt apart.
    private let connection: Mutex<Int>
    /// How many times ``interrupt()`` was called.
    private let requests = Atomic<Int>(0)

    init(_ handle: OpaquePointer) {
        connection = Mutex(Int(bitPattern: handle))
    }

    /// Asks the connection to abandon the statement it is running, as soon as it can.
    public func interrupt() {
        requests.add(1, ordering: .sequentiallyConsistent)
        connection.withLock { bits in
            if let handle = OpaquePointer(bitPattern: bits) { sqlite3_interrupt(handle) }
        }
    }

    /// How many times ``interrupt()`` was called so far: a long operation notes it when it starts.
    var requestCount: Int { requests.load(ordering: .sequentiallyConsistent) }

    /// Throws ``SQLCipherError/Kind/interrupted`` (with `message`) if ``interrupt()`` was called since the count was
    /// `mark`.
    func requireNoInterrupt(since mark: Int, _ message: @autoclosure () -> String, path: String) throws(SQLCipherError) {
        guard requestCount != mark else { return }
        throw .api(.interrupted, message(), path: path)
    }

    func invalidate() {
        connection.withLock { $0 = 0 }
    }
}
