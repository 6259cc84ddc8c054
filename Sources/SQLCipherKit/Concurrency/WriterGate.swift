import Foundation
import Synchronization

/// The right to use a ``DatabasePool``'s writer: held by one caller at a time, handed to the waiters first come,
/// first served.
///
/// Unlike a lock it is not tied to a thread, so an `async` writer session can hold it across `await`s, and an
/// `async` caller waits for it without occupying any thread. Every wait has a limit
/// (``DatabasePool/Configuration/writerWaitTimeout``): a wait that would never end (a session awaiting work that
/// itself waits for the writer) fails with ``SQLCipherError/Kind/timedOut`` instead of hanging silently.
final class WriterGate: Sendable {
    private enum Waiter {
        case thread(DispatchSemaphore)
        case task(CheckedContinuation<Void, any Error>)
    }

    private struct State {
        var held = false
        /// `counted`: the wait counts among ``pending`` (not a group commit's leader, nor a close or a rekey).
        var waiters: [(id: UInt64, waiter: Waiter, counted: Bool)] = []
        var nextID: UInt64 = 0
        /// Async waits given up (cancelled, timed out) before they were queued.
        var abandoned: [UInt64: SQLCipherError] = [:]
        /// The writes waiting for the writer, kept for the pool's observer only: the counted waiters here, and the
        /// writes a group commit has queued (``adjustPending(by:)``). One count under one lock, so that every
        /// figure the observer gets is of the same queue.
        var pending = 0
    }

    /// The writes waiting for the writer, and the number that orders it among the pool's figures.
    typealias PendingFigure = (count: Int, sequence: UInt64)

    private let state = Mutex(State())
    private let path: String
    /// Numbers the figures below: taken with them, under the gate's lock.
    private var sequence: ObservationSequence { .shared }
    /// Told, at each release, whether the gate went straight to a waiter (1) or is free (0), with its number.
    private let released: (@Sendable (Int, UInt64) -> Void)?
    /// Told the writes waiting (``State/pending``), with its number, each time a wait begins, or ends without the
    /// writer (given up, cancelled, handed over); nil: nothing is counted.
    private let pendingChanged: (@Sendable (Int, UInt64) -> Void)?

    init(path: String, released: (@Sendable (Int, UInt64) -> Void)? = nil,
         pendingChanged: (@Sendable (Int, UInt64) -> Void)? = nil) {
        self.path = path
        self.released = released
        self.pendingChanged = pendingChanged
    }

    /// The number of callers waiting (for tests).
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// The writes waiting for the writer, with a number that orders it among the gate's figures.
    var numberedPending: PendingFigure {
        state.withLock { ($0.pending, sequence.next()) }
    }

    /// Adds `delta` to the writes waiting (a group commit's queue changed), and tells the observer; nothing without one.
    /// Returns the new count and its number.
    @discardableResult
    func adjustPending(by delta: Int) -> PendingFigure? {
        guard delta != 0, pendingChanged != nil, let figure = state.withLock({ changePending(&$0, by: delta) }) else {
            return nil
        }
        report(figure)
        return figure
    }

    /// Under the lock: `pending` moved by `delta`, numbered; nil when nothing is counted (no observer).
    private func changePending(_ state: inout State, by delta: Int) -> PendingFigure? {
        guard pendingChanged != nil else { return nil }
        state.pending += delta
        return (state.pending, sequence.next())
    }

    /// Tells the observer a figure read under the lock.
    private func report(_ figure: PendingFigure?) {
        if let figure { pendingChanged?(figure.count, figure.sequence) }
    }

    /// Takes the gate, blocking this thread while another caller holds it, for at most `timeout` (nil: no limit).
    /// `counted`: whether the wait counts among the writes waiting (not a close's or a rekey's).
    func acquire(timeout: Duration?, counted: Bool = true) throws(SQLCipherError) {
        let semaphore = DispatchSemaphore(value: 0)
        let waiting: (id: UInt64, figure: PendingFigure?)? = state.withLock { state in
            if !state.held {
                state.held = true
                return nil
            }
            let id = state.nextID
            state.nextID += 1
            state.waiters.append((id, .thread(semaphore), counted))
            return (id, counted ? changePending(&state, by: 1) : nil)
        }
        guard let (id, figure) = waiting else { return }
        report(figure)
        let deadline = timeout.map { DispatchTime.now() + .milliseconds(Int(clamping: $0.milliseconds)) } ?? .distantFuture
        if semaphore.wait(timeout: deadline) == .success { return }
        let (gaveUp, left) = state.withLock { state -> (Bool, PendingFigure?) in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return (false, nil) }
            let waiter = state.waiters.remove(at: index)
            return (true, waiter.counted ? changePending(&state, by: -1) : nil)
        }
        report(left)
        if gaveUp, let timeout { throw timedOut(timeout) }
        // Handed over just as the wait ended: the signal is on its way.
        semaphore.wait()
    }

    /// Takes the gate, suspending the task (no thread waits) while another caller holds it, for at most
    /// `timeout` (nil: no limit). Cancelling the task ends the wait with ``SQLCipherError/Kind/interrupted``.
    /// `counted`: whether the wait counts among the writes waiting (not a group commit's leader, whose write the
    /// group's queue counts).
    func acquire(timeout: Duration?, counted: Bool = true) async throws(SQLCipherError) {
        // A free gate is taken at once: no timer, no continuation.
        let id: UInt64? = state.withLock { state in
            if !state.held {
                state.held = true
                return nil
            }
            defer { state.nextID += 1 }
            return state.nextID
        }
        guard let id else { return }
        let timer = timeout.map { timeout in
            Task { [self] in
                try await Task.sleep(for: timeout)
                abandon(id, with: timedOut(timeout))
            }
        }
        defer {
            timer?.cancel()
            _ = state.withLock { $0.abandoned.removeValue(forKey: id) }
        }
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let outcome: Result<(waits: Bool, figure: PendingFigure?), SQLCipherError> =
                        state.withLock { state in
                            if let error = state.abandoned.removeValue(forKey: id) { return .failure(error) }
                            if !state.held {
                                state.held = true
                                return .success((false, nil))
                            }
                            state.waiters.append((id, .task(continuation), counted))
                            return .success((true, counted ? changePending(&state, by: 1) : nil))
                        }
                    switch outcome {
                    case .success((false, _)): continuation.resume()
                    case .success((true, let figure)): report(figure)
                    case .failure(let error): continuation.resume(throwing: error)
                    }
                }
            } onCancel: {
                abandon(id, with: .api(.interrupted, "the task was cancelled while it waited for the pool's writer",
                                       path: path))
            }
        } catch let error as SQLCipherError {
            throw error
        } catch {
            throw .api(.interrupted, "the wait for the pool's writer ended: \(error)", path: path)
        }
    }

    /// Gives the gate to the next waiter, or frees it.
    func release() {
        let (next, number, left): (Waiter?, UInt64, PendingFigure?) = state.withLock { state in
            let number = released == nil ? 0 : sequence.next()
            guard !state.waiters.isEmpty else {
                state.held = false
                return (nil, number, nil)
            }
            let waiter = state.waiters.removeFirst()
            return (waiter.waiter, number, waiter.counted ? changePending(&state, by: -1) : nil)
        }
        released?(next == nil ? 0 : 1, number)
        report(left)
        switch next {
        case .thread(let semaphore): semaphore.signal()
        case .task(let continuation): continuation.resume()
        case nil: break
        }
    }

    /// Ends the async wait `id` with `error`, if it still waits (or before it is queued).
    private func abandon(_ id: UInt64, with error: SQLCipherError) {
        let (continuation, left): (CheckedContinuation<Void, any Error>?, PendingFigure?) =
            state.withLock { state in
                if let index = state.waiters.firstIndex(where: { $0.id == id }) {
                    let waiter = state.waiters.remove(at: index)
                    let left = waiter.counted ? changePending(&state, by: -1) : nil
                    guard case .task(let continuation) = waiter.waiter else { return (nil, left) }
                    return (continuation, left)
                }
                if state.nextID > id { state.abandoned[id] = error }
                return (nil, nil)
            }
        report(left)
        continuation?.resume(throwing: error)
    }

    private func timedOut(_ timeout: Duration) -> SQLCipherError {
        .api(.timedOut, "waited \(timeout) for the pool's writer, which other work held all that time. A writer "
            + "session that awaits work which itself waits for the writer never ends: use the session for that "
            + "work, shorten what holds the writer, or raise DatabasePool.Configuration.writerWaitTimeout",
             path: path)
    }
}
