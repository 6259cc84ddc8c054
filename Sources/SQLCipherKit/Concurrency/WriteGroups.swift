import CSQLCipher
import Foundation
import Synchronization

/// Group commit for a ``DatabasePool``'s `async` writes (what a caller is promised:
/// ``DatabasePool/Configuration/GroupCommit``).
///
/// Each write queues an ``Entry`` and suspends. One waiting task at a time leads: it takes the writer gate, has a
/// worker thread run one group (the entries at the head of the queue, back to back in one transaction, then one
/// commit), releases the gate, so that blocking writers and writer sessions queued at the gate take their turns
/// between groups, and goes on until its own entry is done. Then it hands the lead to the entry at the head of the
/// queue. No other task is started and no thread waits for the gate: the gate is still taken before work is
/// queued on the pool's threads (see ``WorkerThreads``).
final class WriteGroups: Sendable {
    private struct State {
        var queue: [Entry] = []
        /// Whether a task leads (takes the gate and runs groups) now.
        var leading = false
    }

    private let state = Mutex(State())
    let limits: DatabasePool.Configuration.GroupCommit

    init(limits: DatabasePool.Configuration.GroupCommit) {
        self.limits = limits
    }

    /// The number of writes waiting (for tests).
    var queuedCount: Int { state.withLock { $0.queue.count } }

    /// The groups committed so far and the writes they held (for tests: that a workload formed groups at all).
    private let committed = Mutex((groups: 0, writes: 0))
    var statistics: (groups: Int, writes: Int) { committed.withLock { $0 } }

    /// One queued write.
    final class Entry: @unchecked Sendable {
        // Invariants that make the class Sendable: `runsAlone` is only touched under WriteGroups' lock; the body's
        // outcome (in the closures' box) is written by the thread running the group, or by the cancel handler for
        // an entry it took out of the queue, before `finish()`, and read by the waiting task after it wakes (the
        // wake's lock orders the two).
        let job: AsyncJob
        let enqueued = ContinuousClock.now
        /// Set when another entry's failure ended the transaction this entry's work was in: it then runs first in
        /// a transaction of its own, and nothing joins it.
        var runsAlone = false
        private let body: (Database, AsyncJob, Bool) throws -> Void
        private let failure: (any Error) -> Void
        private let wake = Mutex(Wake())

        private struct Wake {
            var leads = false
            var done = false
            var continuation: CheckedContinuation<Void, Never>?
        }

        /// Made on the caller's task: `observer` gives the job its context (``AsyncJob/init(observer:)``).
        init(observer: (any DatabaseObserver)?, pool: DatabasePool,
             body: @escaping (Database, AsyncJob, Bool) throws -> Void, failure: @escaping (any Error) -> Void) {
            job = AsyncJob(observer: observer, owner: pool, path: pool.path)
            self.body = body
            self.failure = failure
        }

        /// Runs the write's body on `database` (interruptible only when it is alone in its transaction so far), with
        /// its caller's context.
        func run(on database: Database, interruptible: Bool) throws {
            try ObservationContext.with(job.context) { try body(database, job, interruptible) }
        }

        /// Records `error` as the write's outcome (before ``finish()``).
        func fail(_ error: any Error) {
            failure(error)
        }

        /// Whether the write's outcome is final.
        var isDone: Bool { wake.withLock { $0.done } }

        /// The outcome is final: wakes the waiting task.
        func finish() { signal { $0.done = true } }

        /// The lead is this entry's task's: wakes it to lead.
        func offerLead() { signal { $0.leads = true } }

        /// Suspends until the entry is done or its task is to lead; returns whether it leads.
        func waitForTurn() async -> Bool {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = wake.withLock { wake -> Bool in
                    if wake.leads || wake.done { return true }
                    wake.continuation = continuation
                    return false
                }
                if now { continuation.resume() }
            }
            return wake.withLock { $0.leads }
        }

        private func signal(_ change: (inout Wake) -> Void) {
            let continuation = wake.withLock { wake -> CheckedContinuation<Void, Never>? in
                change(&wake)
                defer { wake.continuation = nil }
                return wake.continuation
            }
            continuation?.resume()
        }
    }

    /// The outcome of one write, typed.
    private final class Outcome<Result>: @unchecked Sendable {
        // Written before the entry's finish() (or by the leading task itself), read after the wake: see Entry.
        var value: Swift.Result<Result, any Error> = .failure(SQLCipherError.api(.misuse, "the write never ran"))
    }

    /// Queues `body` as a write of `pool`, and returns its result once the commit holding it is durable.
    func submit<Result: Sendable>(to pool: DatabasePool, _ body: @escaping @Sendable (Database) throws -> Result)
        async throws -> Result {
        let outcome = Outcome<Result>()
        let entry = Entry(observer: pool.configuration.database.observer, pool: pool, body: { database, job, interruptible in
            outcome.value = .success(try job.perform(on: database, interruptible: interruptible, body))
        }, failure: { error in
            outcome.value = .failure(error)
        })
        await withTaskCancellationHandler {
            let leads = state.withLock { state -> Bool in
                state.queue.append(entry)
                if state.leading { return false }
                state.leading = true
                return true
            }
            // Every queued write waits for the writer, the leader too (until it gets the gate and takes it out).
            if pool.configuration.database.observer != nil {
                _ = ObservationContext.with(entry.job.context) { pool.writerGate.adjustPending(by: 1) }
            }
            if leads {
                await lead(pool, own: entry)
            } else if await entry.waitForTurn() {
                await lead(pool, own: entry)
            }
        } onCancel: {
            cancel(entry, pool: pool)
        }
        return try outcome.value.get()
    }

    /// A cancel: an entry still queued leaves the queue and fails at once; a running one stops (``AsyncJob``).
    private func cancel(_ entry: Entry, pool: DatabasePool) {
        if remove(entry, pool: pool) {
            entry.fail(SQLCipherError.api(.interrupted, "the task was cancelled while its write waited for the pool's "
                + "writer", path: pool.path))
            entry.finish()
        } else {
            entry.job.cancel()
        }
    }

    /// Takes `entry` out of the queue; false when it is not there (running, done).
    private func remove(_ entry: Entry, pool: DatabasePool) -> Bool {
        let removed = state.withLock { state in
            guard let index = state.queue.firstIndex(where: { $0 === entry }) else { return false }
            state.queue.remove(at: index)
            return true
        }
        if removed, pool.configuration.database.observer != nil {
            _ = ObservationContext.with(entry.job.context) { pool.writerGate.adjustPending(by: -1) }
        }
        return removed
    }

    /// Leads until `own` is done: takes the gate, runs a group on a worker thread, releases the gate; then hands the
    /// lead on.
    private func lead(_ pool: DatabasePool, own: Entry) async {
        while !own.isDone {
            do throws(SQLCipherError) {
                try await pool.writerGate.acquire(timeout: remainingWait(of: own, pool: pool), counted: false)
            } catch {
                // Timed out, or the task was cancelled: this write fails; the next one leads with its own limit.
                if remove(own, pool: pool) {
                    own.fail(error)
                    own.finish()
                }
                break
            }
            // The gate is given back on the worker thread, before the task resumes: a task that shares the lead's
            // executor may be blocked in a close() from outside, which waits for the gate (found by an attacker).
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                pool.workers.submit {
                    self.runGroup(pool)
                    pool.releaseWriter()
                    continuation.resume()
                }
            }
        }
        let next = state.withLock { state -> Entry? in
            guard let first = state.queue.first else {
                state.leading = false
                return nil
            }
            return first
        }
        next?.offerLead()
    }

    /// What is left of the pool's writer wait limit for `entry`, which has waited since it was queued.
    private func remainingWait(of entry: Entry, pool: DatabasePool) -> Duration? {
        pool.configuration.writerWaitTimeout.map { limit in
            max(.zero, limit - (ContinuousClock.now - entry.enqueued))
        }
    }

    /// Runs one group on the writer (the caller holds the gate). When the pool is closed, every queued write
    /// fails.
    private func runGroup(_ pool: DatabasePool) {
        do {
            try pool.withWriterForGroup { database in
                self.runEntries(on: database, pool: pool)
            }
        } catch {
            let queued = state.withLock { state -> [Entry] in
                defer { state.queue.removeAll() }
                return state.queue
            }
            pool.writerGate.adjustPending(by: -queued.count)
            for entry in queued {
                entry.fail(error)
                entry.finish()
            }
        }
    }

    /// The entry at the head of the queue, taken out; nil when there is none, or when it must run alone and the
    /// group is not empty.
    private func next(groupIsEmpty: Bool) -> Entry? {
        state.withLock { state in
            guard let first = state.queue.first, groupIsEmpty || !first.runsAlone else { return nil }
            state.queue.removeFirst()
            return first
        }
    }

    /// Runs the entries at the head of the queue in one transaction, within the group's bounds, and commits once;
    /// each entry is finished (its task woken) only after that commit, or when it fails.
    private func runEntries(on database: Database, pool: DatabasePool) {
        let started = ContinuousClock.now
        var members: [Entry] = []
        var open = false
        var taken = 0
        while taken < limits.maxJobs, !pool.isClosed, let entry = next(groupIsEmpty: members.isEmpty) {
            taken += 1
            let alone = entry.runsAlone
            let jobStarted = ContinuousClock.now
            if let observer = pool.configuration.database.observer {
                // Between the group's entries, its transaction open: the observer may run no SQL on the writer.
                database.callingUserCode(runsNoSQL: true) {
                    let (depth, sequence) = ObservationContext.with(entry.job.context) {
                        pool.writerGate.adjustPending(by: -1)
                    } ?? (0, 0)
                    observer.writerAcquired(PoolWaitEvent(path: pool.path, wait: jobStarted - entry.enqueued,
                                                          queueDepth: depth, inUse: 1, capacity: 1, sequence: sequence,
                                                          context: entry.job.context))
                }
            }
            if !open {
                do {
                    try ObservationContext.with(entry.job.context) { try database.beginTransaction(.immediate) }
                    open = true
                } catch {
                    entry.fail(error)
                    entry.finish()
                    break
                }
            }
            let first = members.isEmpty
            do {
                if first {
                    // Alone in the transaction so far: no savepoint needed, and an interrupt undoes only this work.
                    try entry.run(on: database, interruptible: true)
                    try Self.requireTransactionIntact(database)
                    try Self.checkDeferredForeignKeys(database)
                } else {
                    // The savepoint's own statements belong to this write too (its context).
                    try ObservationContext.with(entry.job.context) {
                        try database.savepoint {
                            try entry.run(on: database, interruptible: false)
                            try Self.checkDeferredForeignKeys(database)
                        }
                    }
                }
                members.append(entry)
            } catch {
                entry.fail(error)
                if first || !database.isInTransaction || database.sqlGuard.transactionEndedUnderScope {
                    // The first entry's work is the whole transaction; or the failure ended the transaction by itself
                    // (RAISE(ROLLBACK), an I/O error, an interrupt, or a write that caught such an error and went on,
                    // maybe beginning another: found by an attacker), which undid the earlier entries' work too: they
                    // run again, each alone, before anything else.
                    ObservationContext.with(entry.job.context) { database.rollbackTransaction() }
                    open = false
                    queueAgainAlone(&members, database: database, pool: pool)
                }
                entry.finish()
            }
            if database.isClosed {
                // The write closed the writer (its own code, or its observer), and the engine rolled the group's
                // transaction back with it: the write fails alone, and the earlier ones run again, each alone, on
                // the writer the pool opens in its place (found by a reviewer: the next write failed on the closed
                // writer).
                if members.last === entry {
                    members.removeLast()
                    entry.fail(SQLCipherError.api(.misuse, "the write closed the pool's writer: nothing of it was "
                        + "committed", path: database.path))
                    entry.finish()
                }
                open = false
                queueAgainAlone(&members, database: database, pool: pool)
                break
            }
            let now = ContinuousClock.now
            if alone || now - started >= limits.maxDuration || now - jobStarted >= limits.maxDuration { break }
        }
        if open {
            // The group's commit (and its transaction, WAL and checkpoint events) is reported with its first write's
            // context: one commit, one trace; the other writes' traces show their own statements.
            let context = members.first?.job.context
            do {
                try ObservationContext.with(context) { try database.commitTransaction() }
                committed.withLock { $0.groups += 1; $0.writes += members.count }
            } catch {
                ObservationContext.with(context) { database.rollbackTransaction() }
                for member in members { member.fail(error) }
            }
        }
        for member in members { member.finish() }
    }

    /// Puts `members`, whose work a rollback undid, back at the head of the queue to run again, each alone.
    private func queueAgainAlone(_ members: inout [Entry], database: Database, pool: DatabasePool) {
        guard !members.isEmpty else { return }
        state.withLock { state in
            for member in members { member.runsAlone = true }
            state.queue.insert(contentsOf: members, at: 0)
        }
        // Queued again: they wait for the writer once more (the observer told so, running no SQL).
        let count = members.count
        _ = database.callingUserCode(runsNoSQL: true) {
            pool.writerGate.adjustPending(by: count)
        }
        members.removeAll()
    }

    /// Throws ``SQLCipherError/Kind/misuse`` when the first write ended the group's transaction and went on (it caught
    /// the error of an `INSERT OR ROLLBACK`): the writes after it would otherwise each run in a transaction of its own.
    static func requireTransactionIntact(_ database: Database) throws(SQLCipherError) {
        guard database.sqlGuard.transactionEndedUnderScope else { return }
        throw .api(.misuse, "the write ended the transaction SQLCipherKit began for it (SQLite rolls it back by itself "
            + "after INSERT OR ROLLBACK, RAISE(ROLLBACK), a full disk, an I/O error or an interrupt) and went on: "
            + "nothing of it was committed", path: database.path)
    }

    /// Throws what a commit would when the work so far leaves a deferred foreign key unresolved: SQLite checks them
    /// only at the commit, which would fail the whole group.
    static func checkDeferredForeignKeys(_ database: Database) throws(SQLCipherError) {
        guard let handle = database.handle else { return }
        var current: Int32 = 0, highest: Int32 = 0
        guard sqlite3_db_status(handle, SQLITE_DBSTATUS_DEFERRED_FKS, &current, &highest, 0) == SQLITE_OK,
              current > 0 else { return }
        throw SQLCipherError(kind: .constraint, resultCode: SQLITE_CONSTRAINT, extendedResultCode: 787,
                             message: "FOREIGN KEY constraint failed", sql: "COMMIT TRANSACTION", path: database.path)
    }
}
