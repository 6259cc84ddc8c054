#if canImport(Glibc)
import Glibc
#endif
import ReliabilitySupport
import SQLCipherKit

/// `disk-full DATABASE JOURNAL-MODE LIMIT-BYTES`: caps the size of every file this process writes at
/// LIMIT-BYTES (RLIMIT_FSIZE, with SIGXFSZ ignored so the write fails instead of killing the process), then
/// commits transactions until one fails. Reports `commit TX ROWS` per commit, then
/// `error KIND EXTENDED-CODE`, then what it sees afterwards in the same connection (`in-transaction yes|no`,
/// `integrity ok|…`, `tally ok|…`).
enum DiskFull {
    static func run(_ arguments: [String]) {
        guard arguments.count == 3, let limit = UInt64(arguments[2]) else {
            fail(usage: "disk-full DATABASE wal|delete LIMIT-BYTES")
        }
        var generator = SplitMix64(seed: environmentSeed())
        let db = orFail("open") {
            try Database(path: arguments[0], key: environmentKey("RELIABILITY_KEY_HEX"), mode: .readWrite)
        }
        orFail("journal mode") { _ = try db.setJournalMode(journalMode(arguments[1])) }
        var tx = orFail("schema") { try Workload.prepare(db) }

        signal(SIGXFSZ, SIG_IGN)
        var cap = rlimit(rlim_cur: rlim_t(limit), rlim_max: rlim_t.max)
        guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &cap) == 0 else { fail("setrlimit failed: errno \(errno)") }
        report("limited \(limit)")

        while true {
            let rows = Int.random(in: 1...12, using: &generator)
            do {
                try Workload.commit(db, tx: tx, rows: rows, maxPayload: 8000, using: &generator)
            } catch let error as SQLCipherError {
                report("error \(error.kind.rawValue) \(error.extendedResultCode)")
                inspect(db)
                return
            } catch {
                fail("untyped error: \(error)")
            }
            report("commit \(tx) \(rows)")
            tx += 1
        }
    }

    /// Reports the connection's state after the failed write, still under the size limit.
    private static func inspect(_ db: Database) {
        report("in-transaction \(db.isInTransaction ? "yes" : "no")")
        do {
            let problems = try db.integrityCheck()
            report(problems.isEmpty ? "integrity ok" : "integrity \(problems.prefix(3).joined(separator: "; "))")
            let counted = try db.scalar(Int.self, "SELECT count(*) FROM item") ?? -1
            let tallied = try db.scalar(Int.self, "SELECT rows FROM tally") ?? -1
            report(counted == tallied ? "tally ok" : "tally \(tallied) but \(counted) rows")
        } catch {
            report("read-error \(error.kind.rawValue) \(error.extendedResultCode)")
        }
    }
}
