import ReliabilitySupport
import SQLCipherKit

/// `write DATABASE JOURNAL-MODE`: commits transactions until killed, reporting `commit TX ROWS` after each
/// commit has returned.
enum WriteLoop {
    static func run(_ arguments: [String]) {
        guard arguments.count == 2 else { fail(usage: "write DATABASE wal|delete") }
        var generator = SplitMix64(seed: environmentSeed())
        let db = orFail("open") { try Database(path: arguments[0], key: environmentKey("RELIABILITY_KEY_HEX")) }
        orFail("journal mode") {
            _ = try db.setJournalMode(journalMode(arguments[1]))
            // Frequent checkpoints, so that kills also land inside them.
            try db.execute("PRAGMA wal_autocheckpoint = 64")
        }
        var tx = orFail("schema") { try Workload.prepare(db) }
        report("ready \(tx)")
        while true {
            let rows = Int.random(in: 1...20, using: &generator)
            orFail("transaction \(tx)") {
                try Workload.commit(db, tx: tx, rows: rows, maxPayload: 1500, using: &generator)
            }
            report("commit \(tx) \(rows)")
            tx += 1
        }
    }
}
