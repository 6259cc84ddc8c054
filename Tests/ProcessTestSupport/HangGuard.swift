// MIT License, The SQLCipherKit authors.
import Foundation
import Synchronization
import Testing

/// A time limit that measures the test it is on, and says which hang it guards (issue 49).
///
/// Swift Testing's `.timeLimit` starts its clock when the test is scheduled: on a busy machine a test whose body
/// waits for one of the cooperative pool's threads (held by other tests' synchronous work) runs out of time before
/// it has run at all. This trait starts its clock when the test's body starts, so it fires only for a test that is
/// itself slow, and its message names the hang it is there to catch:
///
/// ```swift
/// @Suite("Writer sessions", .hangGuard(.minutes(2), hang: "a session that never hands the writer back"))
/// ```
///
/// When it fires it records an issue on the test (the test fails). A synchronous body cannot be cancelled, so if
/// the body has still not returned `grace` later, the guard prints the hang's name and ends the test process: the
/// run fails with the name of what hung instead of waiting forever.
public struct HangGuard: TestTrait, SuiteTrait, TestScoping {
    public let limit: Duration
    public let hang: String
    public let grace: Duration

    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        // Each test case gets its own clock; a suite's scope is only the sum of its tests.
        testCase == nil ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        try await withHangGuard(limit, hang: hang, grace: grace, name: test.name, function)
    }
}

extension Trait where Self == HangGuard {
    /// A limit of `limit` on each test's own running time (from its body's start); `hang` says what it catches.
    public static func hangGuard(_ limit: Duration, hang: String, grace: Duration = .seconds(60)) -> Self {
        HangGuard(limit: limit, hang: hang, grace: grace)
    }
}

/// Runs `body`, recording an issue if it is still running `limit` after it started (`hang` names what that
/// means), and ending the process if it is still running `grace` after that. The clock is the body's own: it
/// starts here, when the body starts, never while the test waited to be scheduled.
///
/// The timer is a child task that sleeps: if the machine is busy it wakes late, never early.
public func withHangGuard(_ limit: Duration, hang: String, grace: Duration = .seconds(60), name: String = "",
                          _ body: () async throws -> Void) async throws {
    let started = ContinuousClock.now
    let recorded = RecordedOnce()
    let message = Comment(rawValue: """
        Time limit of \(limit) exceeded by the test's own running time (its clock started with its body): \
        this limit guards \(hang)
        """)
    let outcome: Result<Void, any Error> = await withTaskGroup(of: Void.self) { group in
        // While the body runs: a body that hangs is reported as it hangs (and ended after `grace`).
        group.addTask {
            do {
                try await Task.sleep(for: limit)
            } catch {
                return // The body finished first.
            }
            if recorded.claim() { Issue.record(message) }
            do {
                try await Task.sleep(for: grace)
            } catch {
                return
            }
            let elapsed = ContinuousClock.now - started
            FileHandle.standardError.write(Data("""
                HANG: \(name.isEmpty ? "a test" : name) still running after \(elapsed) (limit \(limit)): \(hang); \
                ending the test process so that the run fails instead of waiting forever

                """.utf8))
            exit(124)
        }
        let outcome: Result<Void, any Error>
        do {
            try await body()
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        // The verdict does not wait on the timer's wake-up (which a busy machine delays): a body that ran past
        // its limit is reported here, on the body's own clock, if the timer has not reported it yet.
        if ContinuousClock.now - started > limit, recorded.claim() {
            Issue.record(message)
        }
        group.cancelAll()
        await group.waitForAll()
        return outcome
    }
    try outcome.get()
}

/// Whether the guard's issue was recorded: the first claim wins, so the timer and the body's own check record it once.
private final class RecordedOnce: Sendable {
    private let claimed = Mutex(false)

    func claim() -> Bool {
        claimed.withLock { claimed in
            defer { claimed = true }
            return !claimed
        }
    }
}

extension Duration {
    /// `minutes` minutes, the unit the suites' hang guards are written in.
    public static func minutes(_ minutes: Int) -> Duration { .seconds(minutes * 60) }
}
