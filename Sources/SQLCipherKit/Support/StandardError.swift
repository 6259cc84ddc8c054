import Glibc

/// Unbuffered writes to standard error: the one writer the command-line tool and the reliability helper use.
///
/// `package` access: shared inside this package, not part of SQLCipherKit's public API. It calls write(2)
/// directly: the C `stderr` global is not concurrency-safe in Swift 6, and nothing is left in a stdio buffer
/// when a process is killed or exits.
package enum StandardError {
    /// Writes all of `text` to standard error; false when a write failed (the rest is then dropped).
    @discardableResult
    package static func write(_ text: String) -> Bool {
        write(text, toDescriptor: STDERR_FILENO)
    }

    /// Writes all of `text` to `descriptor` the same way (the reliability helper reports on standard output so).
    @discardableResult
    package static func write(_ text: String, toDescriptor descriptor: Int32) -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    private static func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
        #else
        Darwin.write(descriptor, bytes, count)
        #endif
    }
}
