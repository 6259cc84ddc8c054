import Glibc
#if DEBUG
import Synchronization
#endif

/// Key material in memory that this process owns and wipes.
///
/// The bytes live in one heap allocation that nothing else aliases; when the last reference goes away they are
/// overwritten with zeros (by a call the optimiser may not drop) before the memory is freed. The storage is
/// immutable after creation, which is what makes sharing it across threads safe.
final class SecureBytes: @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer

    /// Copies `bytes` into fresh storage.
    init(copying bytes: UnsafeRawBufferPointer) {
        // One byte more than needed, so an empty key still owns a distinct, valid allocation.
        storage = .allocate(byteCount: bytes.count + 1, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        if let base = bytes.baseAddress, bytes.count > 0 {
            storage.baseAddress!.copyMemory(from: base, byteCount: bytes.count)
        }
        count = bytes.count
    }

    /// Creates storage of `count` bytes that `fill` writes in place, so no intermediate copy exists.
    init(count: Int, fill: (UnsafeMutableRawBufferPointer) -> Void) {
        storage = .allocate(byteCount: count + 1, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        self.count = count
        fill(UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// The number of bytes of key material.
    let count: Int

    /// Calls `body` with the key material. The buffer must not escape `body`.
    func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    deinit {
        SecureBytes.wipe(storage)
        #if DEBUG
        SecureBytes.wipeObserver.withLock { $0?(UnsafeRawBufferPointer(storage)) }
        #endif
        storage.deallocate()
    }

    /// Overwrites `buffer` with zeros in a way the compiler cannot elide as a dead store.
    static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        explicit_bzero(base, buffer.count)
    }
}

#if DEBUG
extension SecureBytes {
    /// Test hook (debug builds only): called with every buffer right after it is wiped and before it is
    /// freed, so a test can prove that released key material is zero.
    static let wipeObserver = Mutex<(@Sendable (UnsafeRawBufferPointer) -> Void)?>(nil)
}
#endif
