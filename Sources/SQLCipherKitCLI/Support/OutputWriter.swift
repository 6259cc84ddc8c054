#if canImport(Glibc)
import Glibc
#endif

/// Writes a command's output to a file descriptor and fails when the output cannot be written.
///
/// `print` drops a failed write silently: `sqlcipherkit query … > /dev/full` exited 0 with nothing written
/// (issue 44). Every byte a command prints as its result goes through one of these instead: the text is
/// buffered, written with `write(2)` (retried after `EINTR` and short writes), and the first failure is thrown
/// as a ``CommandFailure`` that names the system's reason, "No space left on device" for a full disk.
///
/// ```swift
/// let output = OutputWriter.standardOutput
/// try output.write("ok\n")
/// try output.flush()   // before the command returns: a failure at exit would go unseen
/// ```
///
/// Nothing else in the process may write to the same descriptor through `print` meanwhile (the two buffers
/// would interleave). Not thread-safe: one writer per thread that prints.
final class OutputWriter {
    /// The descriptor written to.
    let descriptor: Int32
    /// Whether ``close()`` closes the descriptor (a file the writer opened, not standard output).
    private let ownsDescriptor: Bool
    /// Bytes not yet written.
    private var buffer: [UInt8] = []
    /// Whether ``close()`` has run (a descriptor is closed once only).
    private var isClosed = false
    /// Written out once it holds this many bytes, so that a long result streams instead of piling up.
    private static let flushThreshold = 64 * 1024

    /// A writer on standard output.
    static var standardOutput: OutputWriter { OutputWriter(descriptor: STDOUT_FILENO, ownsDescriptor: false) }

    /// A writer on `descriptor`; with `ownsDescriptor`, ``close()`` closes it.
    init(descriptor: Int32, ownsDescriptor: Bool) {
        self.descriptor = descriptor
        self.ownsDescriptor = ownsDescriptor
    }

    /// Appends `text`, writing the buffer out once it is large.
    ///
    /// - Throws: ``CommandFailure`` when the buffer had to be written and could not be.
    func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= Self.flushThreshold { try flush() }
    }

    /// Appends `text` and a newline.
    func line(_ text: String) throws {
        try write(text)
        try write("\n")
    }

    /// Writes out everything buffered.
    ///
    /// - Throws: ``CommandFailure`` ("cannot write the output (No space left on device): …") when a write
    ///   fails; what was not written is dropped, so that a later flush does not repeat it.
    func flush() throws {
        defer { buffer.removeAll(keepingCapacity: true) }
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { bytes in
                Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw Self.failure(errno: written < 0 ? errno : EIO) }
            offset += written
        }
        // A file's data is written; for a descriptor whose writes are delayed (NFS), fsync would report late
        // errors, but standard output is often a pipe or a terminal, where fsync fails with EINVAL: not asked.
    }

    /// Writes out what is buffered and, for a file the writer opened, closes it (reporting `close`'s error,
    /// the last chance to learn that a delayed write failed).
    func close() throws {
        guard !isClosed else { return }
        defer { isClosed = true }
        do {
            try flush()
        } catch {
            if ownsDescriptor { _ = Glibc.close(descriptor) }
            throw error
        }
        guard ownsDescriptor else { return }
        if Glibc.close(descriptor) != 0 && errno != EINTR { throw Self.failure(errno: errno) }
    }

    /// The one-sentence failure for a write that failed with `code`: the system's reason, then what to do.
    static func failure(errno code: Int32) -> CommandFailure {
        let reason = String(cString: strerror(code))
        let advice = code == ENOSPC || code == EDQUOT ? "free some space or send the output elsewhere"
            : "check where the output goes (a closed pipe, a full or read-only device)"
        return CommandFailure(message: "cannot write the output (\(reason)): \(advice)", status: .failure)
    }

    deinit {
        // A writer dropped without close(): its descriptor must not leak (its write errors are then lost).
        if ownsDescriptor && !isClosed { _ = Glibc.close(descriptor) }
    }
}

/// Writes `text` and a newline to standard output at once: `print` for a command's result lines, failing the
/// command when the line cannot be written (a full disk, a closed pipe).
func printOutput(_ text: String) throws {
    let output = OutputWriter.standardOutput
    try output.line(text)
    try output.flush()
}
