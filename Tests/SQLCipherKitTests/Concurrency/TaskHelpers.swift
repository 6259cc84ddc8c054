import Foundation
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
