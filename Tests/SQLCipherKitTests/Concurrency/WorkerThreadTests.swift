import Foundation
import ProcessTestSupport
import Testing
@testable import SQLCipherKit

@Suite("Worker threads of async calls",
       .hangGuard(.minutes(2), hang: "an async call whose worker thread never resumes its caller"))
struct WorkerThreadTests {
    /// The number of threads of this process.
    private func threadCount() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count
    }

    @Test("64 concurrent async reads on a 2-reader pool do not start a thread each")
    func asyncCallsShareThreads() async throws {
        let folder = try TemporaryDirectory()
        let pool = try DatabasePool(path: folder.file("threads.db"), key: .rawKey([UInt8](repeating: 6, count: 32)),
                                    configuration: .init(readerCount: 2))
        let calls = 64
        // The kernel's id of each thread that ran a call's work (/proc/thread-self: PID/task/TID; not reused soon,
        // unlike pthread_t). Counting the threads that did the work, rather than the process's threads, keeps
        // other suites' threads out.
        let threads = Shared<Set<String>>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<calls {
                group.addTask {
                    try await pool.read { _ in
                        let thread = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? "?"
                        threads.update { $0.insert(thread) }
                        usleep(2_000) // off the pool: a pool read's body runs on the library's worker thread
                    }
                }
            }
            try await group.waitForAll()
        }
        // The pool's threads: at most one per connection (2 readers and the writer).
        #expect(threads.get().count <= 3, "\(threads.get().count) threads ran \(calls) calls")
        #expect(pool.workers.threadCount <= 3)
        pool.close()
    }

    @Test("a worker set starts threads only as work needs them, up to its limit, and ends them when stopped")
    func workerSetLimit() async throws {
        let workers = WorkerThreads(limit: 2, name: "test-workers")
        let release = DispatchSemaphore(value: 0) // off the pool: only the worker threads under test wait on it
        let done = Shared(0)
        for _ in 0..<10 {
            workers.submit {
                release.wait() // off the pool: a WorkerThreads job runs on the worker threads under test
                done.update { $0 += 1 }
            }
        }
        #expect(workers.threadCount == 2)
        for _ in 0..<10 { release.signal() }
        while done.get() < 10 { try await Task.sleep(for: .milliseconds(5)) }
        workers.stop()
        while workers.threadCount > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(workers.threadCount == 0)
    }
}
