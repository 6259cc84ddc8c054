import Foundation
import Synchronization

/// A flag that starts unset and, once set, stays set; read and set from any thread. A pool uses one for "closed"
/// and one for "a close from outside its work: interrupt what runs".
final class OneWayFlag: Sendable {
    private let value = Mutex(false)

    /// Whether ``set()`` has been called.
    var isSet: Bool { value.withLock { $0 } }

    /// Sets the flag; false when it was set already (so exactly one caller sees true).
    func set() -> Bool { value.withLock { isSet in defer { isSet = true }; return !isSet } }
}

/// A latch that starts closed and, once opened, stays open; any number of threads can wait for it. A pool's close
/// opens one when its connections are closed.
final class OneWayLatch: @unchecked Sendable {
    // `isOpen` is only touched holding `condition`.
    private let condition = NSCondition()
    private var isOpen = false

    /// Opens the latch, waking every waiting thread.
    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    /// Returns once the latch is open.
    func wait() {
        condition.lock()
        while !isOpen { condition.wait() }
        condition.unlock()
    }
}
