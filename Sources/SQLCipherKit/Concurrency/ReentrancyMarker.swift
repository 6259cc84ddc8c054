import Glibc

/// Marks, per thread, the pools and queues whose work is running on that thread, so that a closure calling
/// its own ``DatabasePool`` or ``DatabaseQueue`` again fails at once with ``SQLCipherError/Kind/misuse``
/// instead of waiting for a connection the outer call holds (a deadlock). GRDB does the same with a
/// dispatch-specific marker.
///
/// The mark is thread-local (`pthread_getspecific`): a closure runs on the thread that called the pool (the
/// `async` variants call it from a thread of their own), so "this thread is inside the pool" is exactly "this
/// call is nested in one of the pool's closures".
enum ReentrancyMarker {
    /// The owners active on one thread.
    private final class Active {
        var owners: [ObjectIdentifier] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        // The thread's record is released when the thread ends.
        pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            Unmanaged<Active>.fromOpaque(pointer).release()
        }
        return key
    }()

    private static var current: Active {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Active>.fromOpaque(pointer).takeUnretainedValue()
        }
        let active = Active()
        pthread_setspecific(key, Unmanaged.passRetained(active).toOpaque())
        return active
    }

    /// Whether this thread is running work of `owner`.
    static func isActive(_ owner: AnyObject) -> Bool {
        current.owners.contains(ObjectIdentifier(owner))
    }

    /// Runs `body` marked as work of `owner` on this thread; throws ``SQLCipherError/Kind/misuse`` when this
    /// thread is already running work of `owner`.
    static func run<Result>(_ owner: AnyObject, _ description: String, path: String,
                            _ body: () throws -> Result) throws -> Result {
        try enter(owner, description, path: path)
        defer { leave(owner) }
        return try body()
    }

    /// Runs `body` (an observer's event) marked as work of `owner` on this thread, or as it is when the thread already
    /// runs `owner`'s work (or there is no owner): a close of `owner` there is then nested (it returns at once, and
    /// the connections close once no work holds them).
    static func runAsWork(of owner: AnyObject?, _ description: String, path: String, _ body: () -> Void) {
        guard let owner, !isActive(owner) else { return body() }
        _ = try? run(owner, description, path: path, body)
    }

    /// ``run(_:_:path:_:)`` for typed-throwing bodies.
    static func runTyped<Result>(_ owner: AnyObject, _ description: String, path: String,
                                 _ body: () throws(SQLCipherError) -> Result) throws(SQLCipherError) -> Result {
        try enter(owner, description, path: path)
        defer { leave(owner) }
        return try body()
    }

    private static func enter(_ owner: AnyObject, _ description: String, path: String) throws(SQLCipherError) {
        let active = current
        let id = ObjectIdentifier(owner)
        guard !active.owners.contains(id) else {
            throw .api(.misuse, "\(description) was called from inside a closure of the same \(type(of: owner)): "
                + "the outer call holds the connection it would wait for (a deadlock). Use the Database the "
                + "closure receives instead", path: path)
        }
        active.owners.append(id)
    }

    private static func leave(_ owner: AnyObject) {
        let active = current
        if let index = active.owners.lastIndex(of: ObjectIdentifier(owner)) {
            active.owners.remove(at: index)
        }
    }
}
