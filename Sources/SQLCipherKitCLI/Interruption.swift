import Dispatch
import SQLCipherKit

#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C and SIGTERM interrupt the running statement instead of killing the process, so the library's cleanup
/// runs: a half-written temporary file is removed, a transaction rolls back. The command then fails with
/// "interrupted".
enum Interruption {
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
