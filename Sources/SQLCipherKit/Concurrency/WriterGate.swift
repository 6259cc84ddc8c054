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
        var waiters: [(id: UInt64, waiter: Waiter)] = []
        var nextID: UInt64 = 0
        /// Async waits given up (cancelled, timed out) before they were queued.
        var abandoned: [UInt64: SQLCipherError] = [:]
    }

    private let state = Mutex(State())
    private let path: String
    /// Numbers the figures below: taken with them, under the gate's lock.
    private var sequence: ObservationSequence { .shared }
    /// Told, at each release, whether the gate went straight to a waiter (1) or is free (0), with its number.
    private let released: (@Sendable (Int, UInt64) -> Void)?
    /// Told, when a caller starts to wait for the gate, the callers waiting (this one included), with its number.
    private let queued: (@Sendable (Int, UInt64) -> Void)?

    init(path: String, released: (@Sendable (Int, UInt64) -> Void)? = nil,
         queued: (@Sendable (Int, UInt64) -> Void)? = nil) {
        self.path = path
        self.released = released
        self.queued = queued
    }

    /// The number of callers waiting (for tests).
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// The number of callers waiting, with a number that orders it among the gate's figures.
    var numberedWaiterCount: (count: Int, sequence: UInt64) {
        state.withLock { ($0.waiters.count, sequence.next()) }
    }

    /// Takes the gate, blocking this thread while another caller holds it, for at most `timeout` (nil: no limit).
    func acquire(timeout: Duration?) throws(SQLCipherError) {
        let semaphore = DispatchSemaphore(value: 0)
        let waiting: (id: UInt64, depth: Int, number: UInt64)? = state.withLock { state in
            if !state.held {
                state.held = true
                return nil
            }
            let id = state.nextID
            state.nextID += 1
            state.waiters.append((id, .thread(semaphore)))
            return (id, state.waiters.count, queued == nil ? 0 : sequence.next())
        }
        guard let (id, depth, number) = waiting else { return }
        queued?(depth, number)
        let deadline = timeout.map { DispatchTime.now() + .milliseconds(Int(clamping: $0.milliseconds)) } ?? .distantFuture
        if semaphore.wait(timeout: deadline) == .success { return }
        let gaveUp = state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return false }
            state.waiters.remove(at: index)
            return true
        }
        if gaveUp, let timeout { throw timedOut(timeout) }
        // Handed over just as the wait ended: the signal is on its way.
        semaphore.wait()
    }

    /// Takes the gate, suspending the task (no thread waits) while another caller holds it, for at most
    /// `timeout` (nil: no limit). Cancelling the task ends the wait with ``SQLCipherError/Kind/interrupted``.
    /// `reportsQueued`: whether a wait is told to `queued` (not for a group commit's leader, whose write the group's
    /// queue counts).
    func acquire(timeout: Duration?, reportsQueued: Bool = true) async throws(SQLCipherError) {
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
                    let outcome: Result<(depth: Int, number: UInt64)?, SQLCipherError> = state.withLock { state in
                        if let error = state.abandoned.removeValue(forKey: id) { return .failure(error) }
                        if !state.held {
                            state.held = true
                            return .success(nil)
                        }
                        state.waiters.append((id, .task(continuation)))
                        return .success((state.waiters.count, queued == nil || !reportsQueued ? 0 : sequence.next()))
                    }
                    switch outcome {
                    case .success(nil): continuation.resume()
                    case .success(let waiting?): if reportsQueued { queued?(waiting.depth, waiting.number) }
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
        let (next, number): (Waiter?, UInt64) = state.withLock { state in
            let number = released == nil ? 0 : sequence.next()
            guard !state.waiters.isEmpty else {
                state.held = false
                return (nil, number)
            }
            return (state.waiters.removeFirst().waiter, number)
        }
        released?(next == nil ? 0 : 1, number)
        switch next {
        case .thread(let semaphore): semaphore.signal()
        case .task(let continuation): continuation.resume()
        case nil: break
        }
    }

    /// Ends the async wait `id` with `error`, if it still waits (or before it is queued).
    private func abandon(_ id: UInt64, with error: SQLCipherError) {
        let continuation: CheckedContinuation<Void, any Error>? = state.withLock { state in
            if let index = state.waiters.firstIndex(where: { $0.id == id }) {
                guard case .task(let continuation) = state.waiters.remove(at: index).waiter else { return nil }
                return continuation
            }
            if state.nextID > id { state.abandoned[id] = error }
            return nil
        }
        continuation?.resume(throwing: error)
    }

    private func timedOut(_ timeout: Duration) -> SQLCipherError {
        .api(.timedOut, "waited \(timeout) for the pool's writer, which other work held all that time. A writer "
            + "session that awaits work which itself waits for the writer never ends: use the session for that "
            + "work, shorten what holds the writer, or raise DatabasePool.Configuration.writerWaitTimeout",
             path: path)
    }
}
