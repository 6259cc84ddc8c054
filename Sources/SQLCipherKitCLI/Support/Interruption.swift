import SQLCipherKit
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT (Ctrl-C), SIGTERM (systemd's stop, `timeout`), SIGHUP (a dropped ssh session) and SIGQUIT (Ctrl-\)
/// interrupt the running statement instead of killing the process, so the library's cleanup runs: the private
/// folder of a half-written output is removed, a transaction (a rekey's among them) rolls back. The command then
/// fails with the exit status ``ExitStatus/interrupted`` and says what state it left (``ReportingCommand``).
///
/// The signals are taken by one thread of our own that waits for them with `sigwait`, started with
/// `pthread_create`: no Dispatch. A Dispatch signal source runs on a global queue, whose worker threads set their
/// priority with `setpriority`, a system call of systemd's `@resources` group, which the example unit's
/// `SystemCallFilter=~@privileged @resources` forbids: the service was killed with SIGSYS (issue 34).
enum Interruption {
    /// The signals that interrupt a command.
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// The handle the waiting thread interrupts (nil until ``route(to:)``).
    private static let handle = Mutex<InterruptHandle?>(nil)

    /// The first signal taken (0 while none), for the command to report.
    private static let received = Atomic<Int32>(0)

    /// Whether ``start(taking:)`` ran.
    private static let started = Atomic<Bool>(false)

    /// What the waiting thread does with a signal instead of the default (note it as ``signal`` and interrupt
    /// the routed handle): the shell's, which cancels a statement on SIGINT and goes on. Written once by
    /// ``start(taking:)`` before the thread that reads it is created.
    private nonisolated(unsafe) static var taker: (@convention(c) (Int32) -> Void)?

    /// The first interrupting signal this process took, if any.
    static var signal: Int32? {
        let number = received.load(ordering: .acquiring)
        return number == 0 ? nil : number
    }

    /// Throws ``ExitStatus/interrupted`` when a signal came: for a command to stop between two steps of its own
    /// (a signal between two statements interrupts neither).
    static func stopIfSignalled(_ state: String) throws {
        guard let signal else { return }
        throw CommandFailure(message: "stopped by \(name(of: signal)): \(state)", status: .interrupted)
    }

    /// `SIGTERM`, `SIGINT (Ctrl-C)`…
    static func name(of signal: Int32) -> String {
        switch signal {
        case SIGINT: "SIGINT (Ctrl-C)"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP (the terminal or session went away)"
        case SIGQUIT: "SIGQUIT (Ctrl-\\)"
        default: "signal \(signal)"
        }
    }

    /// The set of ``signals``.
    private static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        return set
    }

    /// Takes the interrupting signals on a thread of their own from now on: before a long operation starts, and
    /// before any other thread is created (a progress spinner's among them), so that every thread inherits the
    /// blocked signals and only the waiting thread takes them. Idempotent. A signal taken before ``route(to:)``
    /// is kept and interrupts the handle as soon as it is routed.
    ///
    /// - Parameter taker: What to do with each signal instead of the default (see ``taker``).
    /// - Returns: Whether the waiting thread runs (false: it could not be created, and the signals keep their
    ///   default action).
    @discardableResult
    static func start(taking taker: (@convention(c) (Int32) -> Void)? = nil) -> Bool {
        guard started.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return true
        }
        self.taker = taker
        var set = signalSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { _ in
            var set = Interruption.signalSet()
            while true {
                var number: Int32 = 0
                guard sigwait(&set, &number) == 0 else { continue }
                if let taker = Interruption.taker {
                    taker(number)
                    continue
                }
                _ = Interruption.received.compareExchange(expected: 0, desired: number, ordering: .acquiringAndReleasing)
                Interruption.handle.withLock { $0?.interrupt() }
            }
        }, nil)
        guard created == 0 else {
            // No waiting thread: let the signals end the process as before rather than be ignored.
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// Routes the interrupting signals to `handle` (``start()``s first if needed): the running statement of its
    /// connection is interrupted when one comes, or at once if one came already.
    static func route(to handle: InterruptHandle) {
        start()
        self.handle.withLock { $0 = handle }
        if signal != nil { handle.interrupt() }
    }
}
