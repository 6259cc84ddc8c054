import Foundation

/// A small, fixed set of threads that run the blocking database work of `async` calls (see ``AsyncJob``).
///
/// A thread is started only when work arrives and every thread already started is busy, up to `limit`; further
/// work waits in a queue, first in, first out. So 512 concurrent `async` saves on a pool use at most `limit`
/// threads, not 512. Not Swift's cooperative pool nor a Dispatch queue: blocking work there could occupy every
/// cooperative thread (as many as there are cores) and starve the tasks that would cancel it or close the pool.
///
/// An owner (a pool or a queue) sizes it so that its work never waits for a thread held by work that waits for
/// it: connections are taken *before* work is queued (the writer asynchronously, see ``WriterGate``), and at
/// most one job per connection runs.
final class WorkerThreads: @unchecked Sendable {
    // Invariant: every stored var is only touched while `condition` is locked.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0
    private var started = 0
    private var idle = 0
    private var stopped = false
    /// The most threads this set starts.
    let limit: Int
    /// The name each thread carries (seen in debuggers and `/proc`).
    private let name: String

    init(limit: Int, name: String) {
        self.limit = max(1, limit)
        self.name = name
    }

    /// The number of threads started so far and still running (for tests).
    var threadCount: Int { condition.withLock { started } }

    /// Queues `job`; a free thread runs it, or a new one when every thread is busy and fewer than ``limit`` run.
    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        let startsThread = idle == 0 && started < limit
        if startsThread { started += 1 }
        condition.signal()
        condition.unlock()
        if startsThread {
            let thread = Thread { [self] in run() }
            thread.name = name
            thread.start()
        }
    }

    /// Lets the threads finish the queued work and end (the owner is going away).
    func stop() {
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
    }

    private func run() {
        while let job = next() {
            job()
        }
    }

    /// The next job, waiting while there is none; nil when the set is stopped and the queue is empty.
    private func next() -> (@Sendable () -> Void)? {
        condition.lock()
        defer { condition.unlock() }
        while head == jobs.count {
            if stopped {
                started -= 1
                return nil
            }
            idle += 1
            condition.wait()
            idle -= 1
        }
        let job = jobs[head]
        head += 1
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        }
        return job
    }
}
