import CSQLCipher
import Synchronization

/// Interrupts a connection's running statement from any thread or task.
///
/// The interrupted statement fails with ``SQLCipherError/Kind/interrupted`` and its transaction rolls back.
/// After the connection closes, ``interrupt()`` does nothing.
public final class InterruptHandle: Sendable {
    // The connection pointer's bits (0 once the connection is closed): an integer, so the lock can guard it
    // across threads. The lock keeps close and interrupt apart.
    private let connection: Mutex<Int>

    init(_ handle: OpaquePointer) {
        connection = Mutex(Int(bitPattern: handle))
    }

    /// Asks the connection to abandon the statement it is running, as soon as it can.
    public func interrupt() {
        connection.withLock { bits in
            if let handle = OpaquePointer(bitPattern: bits) { sqlite3_interrupt(handle) }
        }
    }

    func invalidate() {
        connection.withLock { $0 = 0 }
    }
}
