#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PowerLossVFS
import ReliabilitySupport
@testable import SQLCipherKit

/// `power-loss KIND FOLDER`: a workload on `FOLDER/power.db` through the power-cut simulator (PowerLossVFS),
/// which cuts the power at the event POWERLOSS_CUT (0: at the end) and exits. KIND is the API and journal mode:
/// `database-delete`, `database-wal`, `queue-delete`, `queue-wal`, `pool` (WAL, with a reader thread reading
/// while the writer writes), or `pool-groups` (a pool's group commit: ``groupWriters`` tasks write at once through
/// the `async` write, each transaction numbering itself from the tally, so that the pool groups them; no other
/// step). The steps, drawn from RELIABILITY_SEED: transactions (``Workload``, most of them),
/// checkpoints (WAL), rekeys between the two keys, backups to `FOLDER/backup-N.db` and VACUUM, as far as the API
/// offers them (a queue: transactions only; a pool: no VACUUM and no explicit checkpoint, it checkpoints itself).
///
/// Reports, each after the step has returned: `ready TX`, `commit TX ROWS`, `rekeying K` / `rekeyed K` (K: 0 for
/// RELIABILITY_KEY_HEX, 1 for RELIABILITY_NEW_KEY_HEX), `backup N LASTTX K`, `checkpoint`, `vacuum`, then
/// `events N` at the end; the VFS writes `power cut at event N (…)` as it cuts. POWERLOSS_POLICY: 0 random
/// (default), 1 drop every unsynced write, 2 keep them all; POWERLOSS_STEPS (default 40);
/// POWERLOSS_SYNCHRONOUS (off, normal, full or extra) overrides the library's default, for the negative controls;
/// POWERLOSS_DIRECT=1 runs the workload on the default VFS with no cut, to tell a simulator artifact from a bug.
enum PowerLoss {
    /// One connection, one queue or one pool, behind the operations the workload needs.
    enum Target {
        case database(Database)
        case queue(DatabaseQueue)
        case pool(DatabasePool)

        /// Runs `body` as the API runs writes: a queue's and a pool's in a transaction (``Workload`` then commits a
        /// savepoint inside it), a connection's as they come.
        func write<R>(_ body: (Database) throws -> R) throws -> R {
            switch self {
            case .database(let db): return try body(db)
            case .queue(let queue): return try queue.write(body)
            case .pool(let pool): return try pool.write(body)
            }
        }

        /// The connection, for what runs outside any transaction (VACUUM, an explicit checkpoint): a plain
        /// ``Database`` only; a queue and a pool offer no such access (a pool checkpoints on its own).
        var connection: Database? {
            if case .database(let db) = self { return db }
            return nil
        }

        /// Rekeys: a connection and a pool can; a queue has no rekey.
        func rekey(to key: Key) throws -> Bool {
            switch self {
            case .database(let db): try db.rekey(to: key)
            case .queue: return false
            case .pool(let pool): try pool.rekey(to: key)
            }
            return true
        }

        /// Backs up: a connection and a pool can; a queue runs every closure in a transaction, where a backup
        /// cannot start.
        func backup(to path: String, key: Key) throws -> Bool {
            switch self {
            case .database(let db): try db.backup(to: path, key: key)
            case .queue: return false
            case .pool(let pool): try pool.backup(to: path, key: key)
            }
            return true
        }
    }

    static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    static func run(_ arguments: [String]) {
        guard arguments.count == 2 else {
            fail(usage: "power-loss database-delete|database-wal|queue-delete|queue-wal|pool|pool-groups FOLDER")
        }
        let kind = arguments[0], folder = arguments[1], path = folder + "/power.db"
        let keys = [environmentKey("RELIABILITY_KEY_HEX"), environmentKey("RELIABILITY_NEW_KEY_HEX")]
        let seed = environmentSeed()
        var generator = SplitMix64(seed: seed)
        let policy = Int32(environment("POWERLOSS_POLICY").flatMap { Int32($0) } ?? 0)
        let cut = environment("POWERLOSS_CUT").flatMap { Int64($0) } ?? 0
        let steps = environment("POWERLOSS_STEPS").flatMap { Int($0) } ?? 40
        var configuration = Database.Configuration()
        if let name = environment("POWERLOSS_SYNCHRONOUS") {
            guard let level = Database.Synchronous(rawValue: name.uppercased()) else { fail("POWERLOSS_SYNCHRONOUS: \(name)?") }
            configuration.synchronous = level
        }
        // POWERLOSS_DIRECT=1: the same workload on the default VFS, no cut (tells a simulator artifact from a bug).
        let direct = environment("POWERLOSS_DIRECT") == "1"
        guard direct || powerloss_install(seed, policy) == 0 else { fail("cannot install the power-loss VFS") }

        // The set-up, before the cuts begin: the database, its journal mode, its tables, a few transactions.
        let wal = kind.hasSuffix("wal") || kind.hasPrefix("pool")
        if kind.hasPrefix("queue") {
            // A queue's closures run in a transaction, where the journal mode cannot change: set it first.
            orFail("journal mode") {
                let db = try Database(path: path, key: keys[0], configuration: configuration)
                _ = try db.setJournalMode(wal ? .wal : .delete)
                db.close()
            }
        }
        let target: Target = orFail("open") {
            switch kind {
            case "database-delete", "database-wal":
                return .database(try Database(path: path, key: keys[0], configuration: configuration))
            case "queue-delete", "queue-wal":
                return .queue(try DatabaseQueue(path: path, key: keys[0], configuration: configuration))
            case "pool", "pool-groups":
                return .pool(try DatabasePool(path: path, key: keys[0],
                                              configuration: .init(readerCount: 2, database: configuration)))
            default:
                fail(usage: "power-loss: unknown kind \(kind)")
            }
        }
        if let db = target.connection { orFail("journal mode") { _ = try db.setJournalMode(wal ? .wal : .delete) } }
        var tx = orFail("set-up") {
            try target.write { db in
                // Small, so that checkpoints also run on their own, after commits.
                if wal { try db.execute("PRAGMA wal_autocheckpoint = 32") }
                return try Workload.prepare(db)
            }
        }
        for _ in 0..<3 {
            orFail("set-up transaction \(tx)") {
                try target.write { try Workload.commit($0, tx: tx, rows: 5, maxPayload: 400, using: &generator) }
            }
            tx += 1
        }
        if case .pool(let pool) = target { startReader(pool) }
        if !direct { powerloss_arm(cut) }
        report("ready \(tx)")
        if kind == "pool-groups", case .pool(let pool) = target {
            writeInGroups(pool, steps: steps, seed: seed)
            let statistics = pool.groupCommitStatistics
            report("groups \(statistics.groups) writes \(statistics.writes)")
            finish(direct: direct)
        }

        var keyIndex = 0, backups = 0
        for _ in 0..<steps {
            let draw = Int.random(in: 0..<100, using: &generator)
            switch draw {
            case 78..<84 where wal && target.connection != nil:
                orFail("checkpoint") { try target.connection?.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
                report("checkpoint")
            case 84..<89 where target.connection != nil || kind == "pool":
                let next = 1 - keyIndex
                report("rekeying \(next)")
                _ = orFail("rekey") { try target.rekey(to: keys[next]) }
                keyIndex = next
                report("rekeyed \(next)")
            case 89..<95 where target.connection != nil || kind == "pool":
                backups += 1
                _ = orFail("backup") { try target.backup(to: folder + "/backup-\(backups).db", key: keys[keyIndex]) }
                report("backup \(backups) \(tx - 1) \(keyIndex)")
            case 95..<100 where target.connection != nil:
                orFail("vacuum") { try target.connection?.execute("VACUUM") }
                report("vacuum")
            default:
                let rows = Int.random(in: 1...12, using: &generator)
                orFail("transaction \(tx)") {
                    try target.write { try Workload.commit($0, tx: tx, rows: rows, maxPayload: 800, using: &generator) }
                }
                report("commit \(tx) \(rows)")
                tx += 1
            }
        }
        finish(direct: direct)
    }

    /// Reports the events and cuts the power at the end of the workload (or, direct, exits).
    static func finish(direct: Bool) -> Never {
        if direct {
            report("events 0")
            _exit(0)  // not exit: the reader thread is still reading, and exit handlers would run under it
        }
        report("events \(powerloss_events())")
        powerloss_cut_now()
        fail("the power cut returned")
    }

    /// The writer tasks of `pool-groups`.
    static let groupWriters = 8

    /// `pool-groups`: ``groupWriters`` tasks share `steps` transactions through the pool's `async` write, which
    /// groups the ones that wait together into one commit. Each transaction takes the next number from the tally
    /// inside its write (so the numbers follow the commit order) and is reported after its write returns.
    static func writeInGroups(_ pool: DatabasePool, steps: Int, seed: UInt64) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await withTaskGroup(of: Void.self) { group in
                for writer in 0..<groupWriters {
                    group.addTask {
                        for _ in stride(from: writer, to: steps, by: groupWriters) {
                            do {
                                let (tx, rows) = try await pool.write { db -> (Int, Int) in
                                    let tx = (try db.scalar(Int.self, "SELECT lastTx FROM tally") ?? 0) + 1
                                    var generator = SplitMix64(seed: seed &+ UInt64(tx) &* 0x9E37_79B9)
                                    let rows = Int.random(in: 1...12, using: &generator)
                                    try Workload.commit(db, tx: tx, rows: rows, maxPayload: 800, using: &generator)
                                    return (tx, rows)
                                }
                                report("commit \(tx) \(rows)")
                            } catch {
                                fail("a grouped transaction failed: \(error)")
                            }
                        }
                    }
                }
            }
            done.signal()
        }
        done.wait()
    }

    /// Reads on its own thread while the writer writes, as a pool's readers do in an app; a failed read fails the
    /// child (before the cut, nothing may go wrong).
    static func startReader(_ pool: DatabasePool) {
        Thread.detachNewThread {
            while true {
                do {
                    _ = try pool.read { try $0.scalar(Int.self, "SELECT count(*) FROM item") }
                } catch {
                    fail("a read failed: \(error)")
                }
            }
        }
    }
}
