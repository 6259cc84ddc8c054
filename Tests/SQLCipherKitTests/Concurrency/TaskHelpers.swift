import Foundation
import SQLCipherKit
import Synchronization

// Helpers of the concurrency tests (pools, queues and their async variants).

/// The outcome of an async throwing call.
func outcome<Value>(_ body: () async throws -> Value) async -> Result<Value, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}

extension Result {
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// A value shared between test tasks.
final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func get() -> Value { value.withLock { $0 } }
    func update(_ body: (inout Value) -> Void) { value.withLock { body(&$0) } }
}

/// Runs `body`, which waits synchronously (a barrier write, a semaphore), on a thread of its own and awaits its
/// outcome: the cooperative pool's threads, two on two cores, stay free for the other async tests (issue 49).
func offPool<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// A task executor with one thread of its own (a serial dispatch queue): a busy cooperative pool, or the one of a
/// 1-core machine, for the tasks that prefer it.
final class SerialThreadExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "SQLCipherKitTests.serial")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

/// A reader of `pool` held by a read on a thread of the test's own until ``letGo()``: a close waits for it.
final class HeldReader: Sendable {
    private let letGoFlag = Shared(false)
    private let ended = DispatchSemaphore(value: 0) // off the pool: signalled and waited on threads of the test's own

    /// Starts the read; returns once it holds the reader.
    init(_ pool: DatabasePool) async throws {
        let holding = Shared(false)
        Thread.detachNewThread { [letGoFlag, ended] in
            _ = try? pool.read { _ in
                holding.update { $0 = true }
                while !letGoFlag.get() { usleep(2000) } // off the pool: a thread of the test's own
            }
            ended.signal()
        }
        for _ in 0..<4000 where !holding.get() { try await Task.sleep(for: .milliseconds(5)) }
        guard holding.get() else { throw CancellationError() }
    }

    /// Lets the read end.
    func letGo() { letGoFlag.update { $0 = true } }

    /// Returns once the read has ended.
    func ended() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread { [ended] in
                ended.wait() // off the pool: a thread of its own
                continuation.resume()
            }
        }
    }
}
