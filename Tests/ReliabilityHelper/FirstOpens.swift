import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SQLCipherKit

/// `first-opens THREADS`: the process's first database opens, made by THREADS threads at once, each keying an
/// encrypted in-memory database with a raw key and writing to it. SQLite marks itself initialised before it runs
/// SQLCipher's set-up (outside its lock), so without SQLCipherKit's one-time initialisation a thread can key
/// while SQLCipher is still setting up, and fail. Prints `first-opens: N of THREADS opened and wrote` and, for
/// each failure, `failed: KIND MESSAGE`; exits 1 when any failed.
enum FirstOpens {
    static func run(_ arguments: [String]) {
        guard arguments.count == 1, let count = Int(arguments[0]), count > 0 else { fail(usage: "first-opens THREADS") }
        let key = orFail("key") { try Key.rawKey([UInt8](repeating: 0x5a, count: 32)) }
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let failures = Failures()
        for _ in 0..<count {
            done.enter()
            Thread.detachNewThread {
                start.wait()
                do {
                    let db = try Database(path: ":memory:", key: key)
                    try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
                } catch {
                    failures.add((error as? SQLCipherError).map { "\($0.kind) \($0.message)" } ?? "\(error)")
                }
                done.leave()
            }
        }
        for _ in 0..<count { start.signal() }
        done.wait()
        let failed = failures.all
        print("first-opens: \(count - failed.count) of \(count) opened and wrote")
        for failure in failed { print("failed: \(failure)") }
        exit(failed.isEmpty ? 0 : 1)
    }

    /// The failures the threads report.
    final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var messages: [String] = []
        func add(_ message: String) { lock.withLock { messages.append(message) } }
        var all: [String] { lock.withLock { messages } }
    }
}
