import SQLCipherKit

#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C and SIGTERM interrupt the running statement instead of killing the process, so the library's cleanup
/// runs: a half-written temporary file is removed, a transaction rolls back. The command then fails with
/// "interrupted".
///
/// The signals are taken by one thread of our own that waits for them with `sigwait`, started with
/// `pthread_create`: no Dispatch. A Dispatch signal source runs on a global queue, whose worker threads set their
/// priority with `setpriority`, a system call of systemd's `@resources` group, which the example unit's
/// `SystemCallFilter=~@privileged @resources` forbids: the service was killed with SIGSYS (issue 34).
enum Interruption {
    /// The handle the waiting thread interrupts. Written once, by ``route(to:)`` on the main thread, before the
    /// thread that reads it is created (`pthread_create` orders the write before everything the new thread does).
    private nonisolated(unsafe) static var handle: InterruptHandle?

    /// Routes SIGINT and SIGTERM to `handle` for the rest of the process. Call once, from the main thread,
    /// before the long operation starts (and before any other thread is created, so that every thread inherits
    /// the blocked signals and only the waiting thread takes them).
    static func route(to handle: InterruptHandle) {
        guard self.handle == nil else { return }
        self.handle = handle
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { _ in
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGINT)
            sigaddset(&signals, SIGTERM)
            while true {
                var received: Int32 = 0
                if sigwait(&signals, &received) == 0 { Interruption.handle?.interrupt() }
            }
        }, nil)
        if created == 0 {
            pthread_detach(thread)
        } else {
            // No waiting thread: let the signals end the process as before rather than be ignored.
            pthread_sigmask(SIG_UNBLOCK, &signals, nil)
        }
    }
}
