import Synchronization

/// A flag that starts unset and, once set, stays set; read and set from any thread. A pool uses one for "closed"
/// and one to stop the thread that interrupts its connections while they close.
final class OneWayFlag: Sendable {
    private let value = Mutex(false)

    /// Whether ``set()`` has been called.
    var isSet: Bool { value.withLock { $0 } }

    /// Sets the flag; false when it was set already (so exactly one caller sees true).
    func set() -> Bool { value.withLock { isSet in defer { isSet = true }; return !isSet } }
}
