import Foundation
import Synchronization

/// Runs blocking database work for an `async` caller on one of its owner's ``WorkerThreads``, with task
/// cancellation turned into ``SQLCipherError/Kind/interrupted``.
///
/// Not on a Dispatch queue: on Linux a concurrent queue shares its threads with Swift's cooperative pool (as
/// many as there are cores), so a few long statements could occupy every one of them and starve the very tasks
/// that would cancel them or close the pool. That deadlock was seen under load on 2 cores. Nor on a thread of
/// its own per call: 512 concurrent saves would start 512 threads.
///
/// Cancellation before the work starts skips it; during the work it interrupts the connection running it, and
/// only that one: the job says which connection it holds, under the same lock the cancel handler takes. A job
/// that shares its transaction with other jobs (a group commit, ``WriteGroups``) is not interruptible: SQLite rolls
/// back the whole transaction when a writing statement is interrupted, which would undo the other jobs' work. Such
/// a job stops at its next statement instead, and throws when its body returns after a cancel.
final class AsyncJob: Sendable {
    private struct State {
        /// Whether the job's work runs now.
        var running = false
        /// The connection a cancel interrupts while the work runs; nil for work that may not be interrupted.
        var handle: InterruptHandle?
        /// Set by a cancel, and kept: a job run again (a group commit's rerun) stays cancelled.
        var cancelled = false
    }

    private let state = Mutex(State())
    /// What the observer returned as the caller's context, on the caller's task (``ObservationContext``).
    let context: (any Sendable)?

    /// A job of a caller on the current task; `observer` (the connections') gives its context, asked as work of
    /// `owner` (a pool: a close there is nested, found by an attacker: the caller may hold the pool's writer, which a
    /// close from outside would wait for, for ever).
    init(observer: (any DatabaseObserver)? = nil, owner: AnyObject? = nil, path: String = "") {
        var context: (any Sendable)?
        if let observer {
            ReentrancyMarker.runAsWork(of: owner, "the observer's currentContext()", path: path) {
                context = observer.currentContext()
            }
        }
        self.context = context
    }

    /// Runs `work` on one of `workers` and returns its result to the awaiting task; the events of `observer` that
    /// the work causes carry the caller's context.
    static func run<Result: Sendable>(on workers: WorkerThreads, observer: (any DatabaseObserver)?,
                                      owner: AnyObject? = nil, path: String = "",
                                      _ work: @escaping @Sendable (AsyncJob) throws -> Result) async throws -> Result {
        let job = AsyncJob(observer: observer, owner: owner, path: path)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                workers.submit {
                    continuation.resume(with: Swift.Result { try ObservationContext.with(job.context) { try work(job) } })
                }
            }
        } onCancel: {
            job.cancel()
        }
    }

    /// Runs `body` on `database` as this job: cancellation interrupts it only while it runs.
    ///
    /// `sqlite3_interrupt` does nothing between two statements, so the connection also checks for cancellation
    /// before each statement starts, and a progress handler while it runs. When `interruptible` is false (the job
    /// shares its transaction with others), a cancel only stops the next statement from starting, and a body that
    /// returns after a cancel throws ``SQLCipherError/Kind/interrupted``, so that its caller rolls its work back.
    func perform<Result>(on database: Database, interruptible: Bool = true, _ body: (Database) throws -> Result)
        throws -> Result {
        try start(on: interruptible ? database.interruptHandle : nil)
        database.isCancelled = { self.isCancelled }
        defer {
            database.isCancelled = nil
            finish()
            // A connection its body (or an observer) closed is released with the job: its transaction (a writer
            // session's) rolled back, its locks dropped (found by a reviewer).
            database.releaseDeferredClose()
        }
        guard interruptible else {
            let result = try body(database)
            if isCancelled {
                throw SQLCipherError.api(.interrupted, "the task was cancelled while its write ran in a group commit: "
                    + "its work was rolled back", path: database.path)
            }
            return result
        }
        return try database.withProgressHandlerRethrowing(every: 1000, { self.isCancelled }) {
            try body(database)
        }
    }

    /// Whether the task was cancelled.
    var isCancelled: Bool {
        state.withLock { $0.cancelled }
    }

    /// Marks the job as running on the connection behind `handle` (nil: a cancel may not interrupt it); throws when
    /// it was cancelled already.
    func start(on handle: InterruptHandle?) throws(SQLCipherError) {
        let cancelled = state.withLock { state -> Bool in
            if state.cancelled { return true }
            state.running = true
            state.handle = handle
            return false
        }
        if cancelled {
            throw .api(.interrupted, "the task was cancelled before its database work started")
        }
    }

    /// Marks the job as done with its connection: a later cancel no longer touches it.
    func finish() {
        state.withLock { state in
            state.running = false
            state.handle = nil
        }
    }

    /// Marks the job cancelled: skipped if it has not started, interrupted if it runs interruptibly.
    func cancel() {
        state.withLock { state in
            state.cancelled = true
            if state.running, let handle = state.handle { handle.interrupt() }
        }
    }
}
