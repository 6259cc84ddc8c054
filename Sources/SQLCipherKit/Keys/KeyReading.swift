import Glibc

/// Reading key material from a file descriptor into memory that is wiped afterwards: the one reader of the key
/// sources (file, credential, command output). The bytes never become a `String` or an `Array`; they go from
/// one wiped buffer into the ``Key``'s own wiped storage.
enum KeyReading {
    /// The most bytes a key source may hold: far more than any passphrase or hex key.
    static let limit = 64 * 1024

    /// A buffer of ``limit`` + 1 bytes that is wiped and freed when `body` returns or throws.
    static func withWipedBuffer<Result, Failure: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: limit + 1, alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        defer {
            SecureBytes.wipe(buffer)
            buffer.deallocate()
        }
        return try body(buffer)
    }

    /// Reads `descriptor` to its end and returns the key the bytes hold in `format`.
    ///
    /// - Throws: ``KeySourceError`` of kind ``KeySourceError/Kind/unreadable`` on a read error,
    ///   ``KeySourceError/Kind/tooLarge`` past ``limit`` bytes, ``KeySourceError/Kind/invalidKey`` when the
    ///   bytes are no key of `format`. `what` names the source in the message ("the key file '/etc/app/key'").
    static func key(readingToEnd descriptor: Int32, format: KeyFileFormat, source: String,
                    what: String) throws(KeySourceError) -> Key {
        try withWipedBuffer { (buffer) throws(KeySourceError) in
            var count = 0
            while count <= limit {
                let got = read(descriptor, buffer.baseAddress! + count, limit + 1 - count)
                if got < 0 && errno == EINTR { continue }
                guard got >= 0 else {
                    throw KeySourceError(kind: .unreadable, source: source,
                                         message: "cannot read \(what): \(String(cString: strerror(errno)))")
                }
                if got == 0 { break }
                count += got
            }
            return try key(from: UnsafeRawBufferPointer(rebasing: buffer[0..<count]), format: format,
                           source: source, what: what)
        }
    }

    /// The key `bytes` hold in `format` (at most ``limit`` bytes), with the error a key source throws.
    static func key(from bytes: UnsafeRawBufferPointer, format: KeyFileFormat, source: String,
                    what: String) throws(KeySourceError) -> Key {
        guard bytes.count <= limit else {
            throw KeySourceError(kind: .tooLarge, source: source,
                                 message: "\(what) holds more than \(limit) bytes, more than any key: check that it "
                                    + "is the right one")
        }
        do {
            return try format.key(from: bytes)
        } catch {
            let hint = format == .rawHex
                ? "it must hold 64 hex digits (a raw key) or 96 (a raw key and its salt), and one newline at most"
                : "it must hold the passphrase, and one newline at most after it"
            throw KeySourceError(kind: .invalidKey, source: source,
                                 message: "\(what) holds no \(format == .rawHex ? "raw hex key" : "passphrase"): "
                                    + "\(error.message); \(hint)")
        }
    }

    /// The text of the current `errno`.
    static func errnoText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}
