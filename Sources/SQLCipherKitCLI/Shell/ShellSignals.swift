import SQLCipherKit
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The shell's signals: SIGINT cancels the running statement, SIGTERM, SIGHUP and SIGQUIT end the shell.
///
/// The signals are taken by the CLI's one signal thread (Support/Interruption.swift: blocked in every thread,
/// `sigwait` on a thread of our own, no Dispatch), with ``take(_:)`` as its way of taking them: it only
/// interrupts the connection, counts, and writes a byte to a pipe the main thread polls beside standard input
/// (``wakeDescriptor``), so that a signal that comes while the shell waits for a line is seen at once.
///
/// A second ending signal while the first one has not ended the shell yet (the main thread is stuck in
/// something no interrupt reaches) puts the terminal back and ends the process at once.
enum ShellSignals {
    /// The connection the thread interrupts. Written once by ``start(interrupting:)`` before the thread is
    /// created (`pthread_create` orders the write before everything the new thread does).
    private nonisolated(unsafe) static var handle: InterruptHandle?
    /// The pipe's write end, for the thread; written before the thread is created, as ``handle``.
    private nonisolated(unsafe) static var wakeWriter: Int32 = -1
    /// The pipe's read end: readable once a signal came. -1 before ``start(interrupting:)``.
    nonisolated(unsafe) private(set) static var wakeDescriptor: Int32 = -1

    /// SIGINTs received so far: a statement compares it before and after, to learn it was cancelled even
    /// when the signal came between two statements (where `sqlite3_interrupt` does nothing).
    static let interrupts = Atomic<Int>(0)
    /// The ending signal received (SIGTERM, SIGHUP or SIGQUIT), 0 for none.
    static let endingSignal = Atomic<Int32>(0)

    /// Starts the thread. Call once, from the main thread, after the key was read (the key prompt restores the
    /// terminal on these signals itself) and before any other thread is created.
    ///
    /// - Throws: ``CommandFailure`` when the pipe or the thread cannot be made (the signals then keep their
    ///   default action).
    static func start(interrupting handle: InterruptHandle) throws {
        guard self.handle == nil else { return }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0, ends.allSatisfy({ fcntl($0, F_SETFD, FD_CLOEXEC) == 0
                                                  && fcntl($0, F_SETFL, fcntl($0, F_GETFL) | O_NONBLOCK) == 0 }) else {
            throw CommandFailure(message: "cannot start the shell (no pipe for its signals: "
                + "\(String(cString: strerror(errno)))): close some files and try again", status: .failure)
        }
        self.handle = handle
        wakeDescriptor = ends[0]
        wakeWriter = ends[1]
        // The one signal thread of the CLI (Support/Interruption.swift), with the shell's way of taking a signal.
        guard Interruption.start(taking: { ShellSignals.take($0) }) else {
            throw CommandFailure(message: "cannot start the shell (no thread for its signals): try again",
                                 status: .failure)
        }
    }

    /// What the thread does with one signal.
    static func take(_ number: Int32) {
        if number == SIGINT {
            interrupts.add(1, ordering: .sequentiallyConsistent)
        } else {
            let (exchanged, _) = endingSignal.compareExchange(expected: 0, desired: number,
                                                              ordering: .sequentiallyConsistent)
            if !exchanged {
                // The second ending signal: the first one did not end the shell.
                RawTerminal.restoreAfterSignal()
                _exit(ExitStatus.failure.rawValue)
            }
        }
        handle?.interrupt()
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }

    /// Empties the pipe, so that a signal already handled does not wake the next read.
    static func drainWakeups() {
        guard wakeDescriptor >= 0 else { return }
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(wakeDescriptor, &bytes, bytes.count) > 0 {}
    }
}
