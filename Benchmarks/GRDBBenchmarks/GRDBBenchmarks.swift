// GRDB.swift 7.10.0 on the system's SQLite, and the same C loops as SQLCipherKit's baseline compiled against that
// SQLite, side by side in one process (package-benchmark runs each benchmark in a process of its own). GRDB gets the
// same rows and SQL as SQLCipherKit's "plain" variant, which runs in SQLCipherKitBenchmarks: the two engines cannot
// share an executable (Package.swift), so BENCHMARKS.md also compares each to its own C baseline.
import Benchmark
import BenchmarkSupport
import CRawSystemSQLite
import Foundation
import GRDB

/// The C baseline compiled against the system's SQLite, in this same process.
let rawSystem = RawCFunctions(open: rawsystem_open, close: rawsystem_close, exec: rawsystem_exec,
                              errorMessage: rawsystem_errmsg, queryText: rawsystem_query_text,
                              bulkInsert: rawsystem_bulk_insert, scan: rawsystem_scan_sum,
                              pointSelects: rawsystem_point_selects,
                              singleTransactions: rawsystem_single_transactions)

/// The four workloads through GRDB's public API, at the level of SQLCipherKit's: a prepared `Statement` with
/// `execute(arguments:)` and array arguments, `fetchCursor` with throwing typed reads (`decode(_:atIndex:)`),
/// `inTransaction(.deferred)`.
enum GRDBWorkloads {
    static func bulkInsert(_ queue: DatabaseQueue, _ rows: Rows, _ blobs: [Data]) throws {
        try queue.inDatabase { db in
            let insert = try db.makeStatement(sql: WorkloadSQL.insert)
            try db.inTransaction(.deferred) {
                for index in rows.ids.indices {
                    try insert.execute(arguments: [rows.ids[index], rows.texts[index], rows.reals[index], blobs[index]])
                }
                return .commit
            }
        }
    }

    static func scanSum(_ queue: DatabaseQueue) throws -> Double {
        try queue.inDatabase { db in
            let cursor = try Double.fetchCursor(db, sql: WorkloadSQL.scan)
            var sum = 0.0
            while let real = try cursor.next() {
                sum += real
            }
            return sum
        }
    }

    static func pointSelects(_ queue: DatabaseQueue, _ rows: Rows) throws -> PointSelectChecksum {
        try queue.inDatabase { db in
            let select = try db.makeStatement(sql: WorkloadSQL.pointSelect)
            var checksum = PointSelectChecksum()
            for id in rows.selectIDs {
                // A cursor's row reads straight from the statement (no copy, as SQLCipherKit's column reads), so
                // it is only valid while the cursor lives.
                let cursor = try Row.fetchCursor(select, arguments: [id])
                try withExtendedLifetime(cursor) {
                    guard let row = try cursor.next() else { throw BenchmarkFailure("no row \(id)") }
                    let text = try row.decode(String.self, atIndex: 0)
                    let real = try row.decode(Double.self, atIndex: 1)
                    let blob = try row.decode(Data.self, atIndex: 2)
                    checksum.rows += 1
                    checksum.textBytes += text.utf8.count
                    checksum.realSum += real
                    checksum.blobBytes += blob.count
                }
            }
            return checksum
        }
    }

    static func singleTransactions(_ queue: DatabaseQueue, _ rows: Rows, _ blobs: [Data]) throws {
        try queue.inDatabase { db in
            let insert = try db.makeStatement(sql: WorkloadSQL.insert)
            for index in 0..<Rows.transactionCount {
                try db.inTransaction(.deferred) {
                    try insert.execute(arguments: [rows.ids[index], rows.texts[index], rows.reals[index], blobs[index]])
                    return .commit
                }
            }
        }
    }
}

/// The state of one benchmark process, created when a benchmark starts.
final class GRDBProcess {
    private var folder: ScratchFolder?
    private var generated: (rows: Rows, blobs: [Data])?
    private var readFixture: String?
    private var proven = false

    func scratch() throws -> ScratchFolder {
        if let folder { return folder }
        let created = try ScratchFolder("grdb")
        folder = created
        return created
    }

    /// The rows, and their blobs as `Data` (GRDB's blob type), generated before anything is timed.
    var rows: (rows: Rows, blobs: [Data]) {
        if let generated { return generated }
        let rows = Rows()
        let created = (rows, rows.blobs.map { Data($0) })
        generated = created
        return created
    }

    /// The database the scan and the point selects read, written once by GRDB and shared with the C baseline.
    func fixture() throws -> String {
        if let readFixture { return readFixture }
        let path = try scratch().freshFile("read.db")
        let queue = try DatabaseQueue(path: path)
        try queue.inDatabase { try $0.execute(sql: WorkloadSQL.createTable) }
        try GRDBWorkloads.bulkInsert(queue, rows.rows, rows.blobs)
        try queue.close()
        readFixture = path
        return path
    }

    /// Proves that GRDB and the C baseline both run on the system's plain SQLite, not on SQLCipher (whose static
    /// engine would win if it were linked into this executable), and records the facts.
    func proveEngine() throws {
        guard !proven else { return }
        let queue = try DatabaseQueue()
        let (version, cipher) = try queue.inDatabase { db in
            (try String.fetchOne(db, sql: "SELECT sqlite_version()") ?? "",
             try String.fetchOne(db, sql: "PRAGMA cipher_version"))
        }
        let raw = try RawConnection(rawSystem, path: ":memory:", keyMaterial: nil)
        let rawVersion = try raw.text("SELECT sqlite_version()") ?? ""
        let rawCipher = try raw.text("PRAGMA cipher_version")
        guard cipher == nil, rawCipher == nil, version == rawVersion, !version.isEmpty else {
            throw BenchmarkFailure("GRDB's engine is not the system's plain SQLite: sqlite_version \(version), "
                + "cipher_version \(cipher ?? "none"); C baseline: \(rawVersion), \(rawCipher ?? "none")")
        }
        EngineFacts.record("GRDBBenchmarks", "GRDB and its C baseline: SQLite \(version) (the system's libsqlite3), "
            + "PRAGMA cipher_version returns no row")
        proven = true
    }

    func finish() {
        folder?.remove()
        folder = nil
    }
}

let benchmarks: @Sendable () -> Void = {
    let process = GRDBProcess()

    func grdb(_ workload: Workload) -> Variant {
        Variant("GRDB") {
            let (rows, blobs) = process.rows
            switch workload {
            case .bulkInsert:
                let queue = try DatabaseQueue(path: try process.scratch().freshFile("insert.db"))
                try queue.inDatabase { try $0.execute(sql: WorkloadSQL.createTable) }
                let elapsed = try SideBySide.time { try GRDBWorkloads.bulkInsert(queue, rows, blobs) }
                try Checks.rowCount(try queue.inDatabase { try Int.fetchOne($0, sql: "SELECT count(*) FROM item") } ?? 0,
                                    Rows.count)
                return elapsed
            case .fullScan:
                let queue = try DatabaseQueue(path: try process.fixture())
                var sum = 0.0
                let elapsed = try SideBySide.time { sum = try GRDBWorkloads.scanSum(queue) }
                try Checks.scanSum(sum, rows)
                return elapsed
            case .pointSelects:
                let queue = try DatabaseQueue(path: try process.fixture())
                var checksum = PointSelectChecksum()
                let elapsed = try SideBySide.time { checksum = try GRDBWorkloads.pointSelects(queue, rows) }
                try Checks.pointSelects(checksum, rows)
                return elapsed
            case .transactions:
                let queue = try DatabaseQueue(path: try process.scratch().freshFile("transactions.db"))
                try queue.inDatabase { db in
                    try db.execute(sql: WorkloadSQL.walNormal)
                    try db.execute(sql: WorkloadSQL.createTable)
                }
                let elapsed = try SideBySide.time { try GRDBWorkloads.singleTransactions(queue, rows, blobs) }
                try Checks.rowCount(try queue.inDatabase { try Int.fetchOne($0, sql: "SELECT count(*) FROM item") } ?? 0,
                                    Rows.transactionCount)
                return elapsed
            }
        }
    }

    func raw(_ workload: Workload) -> Variant {
        Variant("raw C system SQLite") {
            let rows = process.rows.rows
            switch workload {
            case .bulkInsert:
                let connection = try RawConnection(rawSystem, path: try process.scratch().freshFile("insert-raw.db"),
                                                   keyMaterial: nil)
                try connection.execute(WorkloadSQL.createTable)
                let elapsed = try connection.insert(rows, count: Rows.count, oneTransaction: true)
                try Checks.rowCount(Int(try connection.text("SELECT count(*) FROM item") ?? "") ?? 0, Rows.count)
                return elapsed
            case .fullScan:
                return try RawConnection(rawSystem, path: try process.fixture(), keyMaterial: nil).scan(rows)
            case .pointSelects:
                return try RawConnection(rawSystem, path: try process.fixture(), keyMaterial: nil).pointSelects(rows)
            case .transactions:
                let connection = try RawConnection(rawSystem,
                                                   path: try process.scratch().freshFile("transactions-raw.db"),
                                                   keyMaterial: nil)
                try connection.execute(WorkloadSQL.walNormal)
                try connection.execute(WorkloadSQL.createTable)
                let elapsed = try connection.insert(rows, count: Rows.transactionCount, oneTransaction: false)
                try Checks.rowCount(Int(try connection.text("SELECT count(*) FROM item") ?? "") ?? 0,
                                    Rows.transactionCount)
                return elapsed
            }
        }
    }

    for workload in Workload.allCases {
        let variants = [grdb(workload), raw(workload)]
        Benchmark(workload.rawValue, configuration: SideBySide.configuration(variants)) { benchmark in
            try SideBySide.round(benchmark, variants)
        } setup: {
            try process.proveEngine()
        } teardown: {
            process.finish()
        }
    }
}
