import Glibc
#if DEBUG
import Synchronization
#endif

/// Key material in memory that this process owns and wipes.
///
/// The bytes live in one heap allocation that nothing else aliases; when the last reference goes away they are
/// overwritten with zeros (by a call the optimiser may not drop) before the memory is freed. The allocation is
/// whole pages, excluded from core dumps (`MADV_DONTDUMP`) while it holds a key. The storage is immutable after
/// creation, which is what makes sharing it across threads safe.
final class SecureBytes: @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer

    /// Whole pages for `count` bytes and one more (so an empty key still owns a distinct, valid allocation),
    /// page-aligned, zeroed and excluded from core dumps.
    private static func allocatePages(for count: Int) -> UnsafeMutableRawBufferPointer {
        let page = max(4096, Int(sysconf(Int32(_SC_PAGESIZE))))
        let size = (count + 1 + page - 1) / page * page
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: page)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        // Where the kernel refuses (not expected), the key is still wiped; only the core exclusion is lost.
        _ = madvise(storage.baseAddress, size, MADV_DONTDUMP)
        return storage
    }

    /// Copies `bytes` into fresh storage.
    init(copying bytes: UnsafeRawBufferPointer) {
        storage = SecureBytes.allocatePages(for: bytes.count)
        if let base = bytes.baseAddress, bytes.count > 0 {
            storage.baseAddress!.copyMemory(from: base, byteCount: bytes.count)
        }
        count = bytes.count
    }

    /// Creates storage of `count` bytes that `fill` writes in place, so no intermediate copy exists.
    init(count: Int, fill: (UnsafeMutableRawBufferPointer) -> Void) {
        storage = SecureBytes.allocatePages(for: count)
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
        // The key and its spare byte (the whole allocation is wiped; a test finds its key by this length).
        SecureBytes.wipeObserver.withLock { $0?(UnsafeRawBufferPointer(rebasing: storage[0..<(count + 1)])) }
        #endif
        // The pages go back to the allocator as ordinary memory.
        _ = madvise(storage.baseAddress, storage.count, MADV_DODUMP)
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
