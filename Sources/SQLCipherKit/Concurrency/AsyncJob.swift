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
/// only that one: the job says which connection it holds, under the same lock the cancel handler takes.
final class AsyncJob: Sendable {
    private enum State {
        case pending
        case running(InterruptHandle)
        case finished
        case cancelled
    }

    private let state = Mutex<State>(.pending)

    /// Runs `work` on one of `workers` and returns its result to the awaiting task.
    static func run<Result: Sendable>(on workers: WorkerThreads,
                                      _ work: @escaping @Sendable (AsyncJob) throws -> Result) async throws -> Result {
        let job = AsyncJob()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                workers.submit {
                    continuation.resume(with: Swift.Result { try work(job) })
                }
            }
        } onCancel: {
            job.cancel()
        }
    }

    /// Runs `body` on `database` as this job: cancellation interrupts it only while it runs.
    ///
    /// `sqlite3_interrupt` does nothing between two statements, so the connection also checks for cancellation
    /// before each statement starts, and a progress handler while it runs.
    func perform<Result>(on database: Database, _ body: (Database) throws -> Result) throws -> Result {
        try start(on: database.interruptHandle)
        database.isCancelled = { self.isCancelled }
        defer {
            database.isCancelled = nil
            finish()
        }
        return try database.withProgressHandlerRethrowing(every: 1000, { self.isCancelled }) {
            try body(database)
        }
    }

    /// Whether the task was cancelled (while the job runs).
    var isCancelled: Bool {
        state.withLock { state in
            if case .cancelled = state { return true }
            return false
        }
    }

    /// Marks the job as running on the connection behind `handle`; throws when it was cancelled already.
    func start(on handle: InterruptHandle) throws(SQLCipherError) {
        let cancelled = state.withLock { state -> Bool in
            if case .cancelled = state { return true }
            state = .running(handle)
            return false
        }
        if cancelled {
            throw .api(.interrupted, "the task was cancelled before its database work started")
        }
    }

    /// Marks the job as done with its connection: a later cancel no longer touches it.
    func finish() {
        state.withLock { $0 = .finished }
    }

    private func cancel() {
        state.withLock { state in
            if case .running(let handle) = state { handle.interrupt() }
            if case .finished = state { return }
            state = .cancelled
        }
    }

}
