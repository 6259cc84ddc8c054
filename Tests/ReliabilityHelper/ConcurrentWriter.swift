#if canImport(Glibc)
import Glibc
#endif
import SQLCipherKit

/// `concurrent-writer DATABASE WRITER COUNT BUSY-TIMEOUT-MS`: one of several processes writing the same WAL
/// database at once. Opens it with the busy timeout, reports `ready WRITER PID`, waits for the parent's "go"
/// line (so that every writer starts together), then commits COUNT transactions, each inserting the row
/// (WRITER, SEQUENCE, PID) into `commits`, and reports `commit WRITER SEQUENCE` after each commit has returned,
/// pausing 2 ms before the next.
/// A failed transaction is reported as `error WRITER SEQUENCE KIND EXTENDED-CODE` (rolled back; the next one
/// is tried). Ends with `done WRITER`.
enum ConcurrentWriter {
    static func run(_ arguments: [String]) {
        guard arguments.count == 4, let count = Int(arguments[2]), let busy = Int64(arguments[3]) else {
            fail(usage: "concurrent-writer DATABASE WRITER COUNT BUSY-TIMEOUT-MS")
        }
        let writer = arguments[1], pid = Int(getpid())
        let configuration = Database.Configuration(mode: .readWrite, busyTimeout: .milliseconds(busy))
        let db = orFail("open") {
            try Database(path: arguments[0], key: environmentKey("RELIABILITY_KEY_HEX"), configuration: configuration)
        }
        report("ready \(writer) \(pid)")
        awaitParent()
        for sequence in 1...count {
            do {
                try db.transaction(.immediate) {
                    try db.execute("INSERT INTO commits(writer, sequence, pid, payload) VALUES (?, ?, ?, randomblob(?))",
                                   [writer, sequence, pid, 64 + sequence % 200])
                }
                report("commit \(writer) \(sequence)")
                // A pause between commits: back to back, one writer takes the lock again the moment it lets
                // go, while the others sleep in SQLite's busy handler (1 ms growing to 100 ms), and can finish
                // before they wake: the writers would then commit one after another, not at the same time.
                usleep(2_000)
            } catch let error as SQLCipherError {
                report("error \(writer) \(sequence) \(error.kind.rawValue) \(error.extendedResultCode)")
            } catch {
                fail("untyped error: \(error)")
            }
        }
        db.close()
        report("done \(writer)")
    }
}
