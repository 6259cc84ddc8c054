import Dispatch
import SQLCipherKit

#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C and SIGTERM interrupt the running statement instead of killing the process, so the library's cleanup
/// runs: a half-written temporary file is removed, a transaction rolls back. The command then fails with
/// "interrupted".
enum Interruption {
    /// Keeps the signal sources alive (a released source stops delivering).
    ///
    /// `nonisolated(unsafe)` is safe because of how it is used: only ``route(to:)`` touches it, which a command
    /// calls from the main thread (ArgumentParser runs `run()` there, synchronously) and at most once per
    /// process, before the long operation starts; the signal handlers never read it. Nothing else can reach it
    /// (`private`), so there is never a concurrent access.
    private nonisolated(unsafe) static var sources: [DispatchSourceSignal] = []

    /// Routes SIGINT and SIGTERM to `handle` for the rest of the process. Call once, from the main thread,
    /// before the long operation starts.
    static func route(to handle: InterruptHandle) {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { handle.interrupt() }
            source.resume()
            sources.append(source)
        }
    }
}
