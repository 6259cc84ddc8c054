#if canImport(Glibc)
import Glibc
#endif
import SQLCipherKit

/// `counter-writer DATABASE WRITER BUSY-TIMEOUT-MS [MAX-SECONDS]`: one of several processes advancing one monotonic counter
/// in a WAL database while a backup copies it. Opens it with the key in RELIABILITY_KEY_HEX, reports
/// `ready WRITER PID`, waits for the parent's "go" line, then commits transactions until the parent sends
/// "stop" (or closes standard input; at most MAX-SECONDS, default 120): each reads `head.n`, inserts the row `n + 1` into `ledger`
/// (its payload starting with RELIABILITY_MARKER, a plaintext marker no file may hold), and sets `head.n` to
/// `n + 1`, two tables in one transaction, so a copy that mixed two moments shows. Reports `commit WRITER N`
/// after each commit has returned, pausing 1 ms before the next; `error WRITER KIND` for a failed one. Ends
/// with `done WRITER COMMITS`.
enum CounterWriter {
    static func run(_ arguments: [String]) {
        guard arguments.count == 3 || arguments.count == 4, let busy = Int64(arguments[2]),
              let limit = arguments.count == 4 ? Int(arguments[3]) : 120 else {
            fail(usage: "counter-writer DATABASE WRITER BUSY-TIMEOUT-MS [MAX-SECONDS]")
        }
        let writer = arguments[1]
        let marker = getenv("RELIABILITY_MARKER").map { String(cString: $0) } ?? "counter-writer-marker"
        let configuration = Database.Configuration(mode: .readWrite, busyTimeout: .milliseconds(busy))
        let db = orFail("open") {
            try Database(path: arguments[0], key: environmentKey("RELIABILITY_KEY_HEX"), configuration: configuration)
        }
        report("ready \(writer) \(getpid())")
        awaitParent()
        var commits = 0
        let started = time(nil)
        while !stopRequested(), time(nil) - started < limit {
            do {
                let next = try db.transaction(.immediate) { () throws -> Int in
                    let next = (try db.scalar(Int.self, "SELECT n FROM head") ?? 0) + 1
                    try db.execute("INSERT INTO ledger(n, writer, payload) VALUES (?, ?, ? || hex(randomblob(200)))",
                                   [next, writer, "\(marker) \(next)"])
                    try db.execute("UPDATE head SET n = ?", [next])
                    return next
                }
                commits += 1
                report("commit \(writer) \(next)")
                usleep(1_000)
            } catch let error as SQLCipherError {
                report("error \(writer) \(error.kind.rawValue)")
            } catch {
                fail("untyped error: \(error)")
            }
        }
        db.close()
        report("done \(writer) \(commits)")
    }

    /// Whether the parent sent a line (or closed standard input): checked without waiting.
    private static func stopRequested() -> Bool {
        var input = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        return poll(&input, 1, 0) > 0
    }
}
