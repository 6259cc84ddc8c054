#if canImport(Glibc)
import Glibc
#endif
import CSQLCipher
import ReliabilitySupport

/// `process-state-control FOLDER`: the positive control of ``ProcessState`` (the reading the routes and matrix tests
/// trust to see SQL text change the whole process). In this child process of its own, so that no parallel test sees
/// it, it changes each part through the C API, on a connection without SQLCipherKit's guard, one after the other,
/// and prints one line per part: `seen NAME` when ``ProcessState/current()`` differs from what it read just before,
/// `missed NAME` otherwise; it exits 0 only when every part was seen.
enum ProcessStateControl {
    static func run(_ arguments: [String]) -> Never {
        guard let folder = arguments.first else { fail(usage: "process-state-control FOLDER") }
        var db: OpaquePointer?
        guard sqlite3_open(":memory:", &db) == SQLITE_OK else { fail("cannot open an in-memory database") }
        let changes = [("hard_heap_limit", "PRAGMA hard_heap_limit = 900000000"),
                       ("soft_heap_limit", "PRAGMA soft_heap_limit = 800000000"),
                       ("temp_store_directory", "PRAGMA temp_store_directory = '\(folder)'")]
        var missed = 0
        for (name, sql) in changes {
            let before = ProcessState.current()
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { fail("\(sql): \(String(cString: sqlite3_errmsg(db)))") }
            let after = ProcessState.current()
            if after != before {
                report("seen \(name): \(after)")
            } else {
                missed += 1
                report("missed \(name): \(after)")
            }
        }
        sqlite3_close(db)
        exit(missed == 0 ? 0 : 1)
    }
}
