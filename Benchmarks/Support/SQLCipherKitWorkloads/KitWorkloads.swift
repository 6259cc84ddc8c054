import BenchmarkSupport
import CRawSQLCipher
import Foundation
import SQLCipherKit

/// The C baseline compiled against the engine SQLCipherKit links, in this same process.
public let rawC = RawCFunctions(open: rawsqlcipher_open, close: rawsqlcipher_close, exec: rawsqlcipher_exec,
                                errorMessage: rawsqlcipher_errmsg, queryText: rawsqlcipher_query_text,
                                bulkInsert: rawsqlcipher_bulk_insert, scan: rawsqlcipher_scan_sum,
                                pointSelects: rawsqlcipher_point_selects,
                                singleTransactions: rawsqlcipher_single_transactions,
                                cacheMisses: rawsqlcipher_cache_misses)

/// The raw key of every encrypted variant: SQLCipher 4 defaults with no key derivation, so the workloads measure
/// page encryption alone (key derivation is the opening benchmarks' subject).
public let rawKeyBytes: [UInt8] = (0..<Key.rawKeyLength).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }

/// The same key as the bytes `sqlite3_key_v2` receives from `Key.rawKey`: `x'` + 64 hex digits + `'`.
public let rawKeyMaterial: [UInt8] = Array(("x'" + rawKeyBytes.map { String(format: "%02x", $0) }.joined() + "'").utf8)

/// How a variant's database is keyed.
public enum Protection: String, CaseIterable, Sendable {
    /// SQLCipher 4 defaults, raw key.
    case encrypted
    /// The same engine, no key: a plain SQLite file.
    case plain
    /// As ``encrypted``, with `cipher_memory_security = ON` (process-wide from then on).
    case memorySecurity
    /// SQLCipher 4 with HMAC-SHA256 and PBKDF2-HMAC-SHA256 (`CipherSettings.sha256`), raw key.
    case encryptedSHA256

    /// SQLite's default page cache, 2,000 KiB, which the C baseline also runs with: the standard workloads compare
    /// the layers on the same cache (SQLCipherKit's default for encrypted connections is larger; see
    /// ``Variants/pointSelectsWithCache(_:mebibytes:)``).
    public static let sqliteDefaultCache = 2_000 * 1024

    /// Opens `path` through SQLCipherKit (untimed in every workload) with a page cache of `cacheBytes`.
    public func open(_ path: String, cacheBytes: Int = Protection.sqliteDefaultCache) throws -> Database {
        var configuration = Database.Configuration(pageCacheSize: cacheBytes)
        switch self {
        case .encrypted:
            return try Database(path: path, key: .rawKey(rawKeyBytes), configuration: configuration)
        case .plain:
            return try Database(unencryptedPath: path, configuration: configuration)
        case .memorySecurity:
            configuration.cipher = CipherSettings(memorySecurity: true)
            return try Database(path: path, key: .rawKey(rawKeyBytes), configuration: configuration)
        case .encryptedSHA256:
            configuration.cipher = .sha256
            return try Database(path: path, key: .rawKey(rawKeyBytes), configuration: configuration)
        }
    }

    /// Opens `path` through the C baseline.
    public func openRaw(_ path: String) throws -> RawConnection {
        switch self {
        case .encrypted: try RawConnection(rawC, path: path, keyMaterial: rawKeyMaterial)
        case .plain: try RawConnection(rawC, path: path, keyMaterial: nil)
        case .memorySecurity, .encryptedSHA256:
            throw BenchmarkFailure("the C baseline runs with SQLCipher 4's defaults only")
        }
    }
}

/// The four workloads through SQLCipherKit's public API, written as its README and documentation show first:
/// a prepared ``Statement`` run with the row's values themselves (``Statement/execute(_:)-(repeat each V)``, bound
/// straight from the caller's storage), ``Statement/step()`` with typed ``Statement/column(_:as:)`` reads and
/// ``Statement/withUnsafeBytes(at:_:)`` for text and blobs read in place (as the C loops read them),
/// ``Database/transaction(_:_:)``.
public enum KitWorkloads {
    /// Workload 1.
    public static func bulkInsert(_ database: Database, _ rows: Rows) throws {
        let insert = try database.prepare(WorkloadSQL.insert)
        try database.transaction {
            for index in rows.ids.indices {
                try insert.execute(rows.ids[index], rows.texts[index], rows.reals[index], rows.blobs[index])
            }
        }
    }

    /// Workload 2.
    public static func scanSum(_ database: Database) throws -> Double {
        let scan = try database.prepare(WorkloadSQL.scan)
        var sum = 0.0
        while try scan.step() {
            sum += try scan.column(0, as: Double.self)
        }
        return sum
    }

    /// Workload 3.
    public static func pointSelects(_ database: Database, _ rows: Rows) throws -> PointSelectChecksum {
        let select = try database.prepare(WorkloadSQL.pointSelect)
        var checksum = PointSelectChecksum()
        for id in rows.selectIDs {
            try select.bind(id)
            guard try select.step() else { throw BenchmarkFailure("no row \(id)") }
            checksum.rows += 1
            checksum.textBytes += try select.withUnsafeBytes(at: 0) { $0.count }
            checksum.realSum += try select.column(1, as: Double.self)
            checksum.blobBytes += try select.withUnsafeBytes(at: 2) { $0.count }
        }
        return checksum
    }

    /// Workload 4.
    public static func singleTransactions(_ database: Database, _ rows: Rows) throws {
        let insert = try database.prepare(WorkloadSQL.insert)
        for index in 0..<Rows.transactionCount {
            try database.transaction {
                try insert.execute(rows.ids[index], rows.texts[index], rows.reals[index], rows.blobs[index])
            }
        }
    }
}

/// The same workloads through SQLCipherKit's convenient forms: an argument array per row
/// (``StatementArguments``, an array of existentials), text and blobs read into `String` and `[UInt8]`. Profiled
/// (WorkloadProfile, "array arguments" variants) to show what the fast path saves; not timed.
public enum ConvenientKitWorkloads {
    /// Workload 1.
    public static func bulkInsert(_ database: Database, _ rows: Rows) throws {
        let insert = try database.prepare(WorkloadSQL.insert)
        try database.transaction {
            for index in rows.ids.indices {
                try insert.execute([rows.ids[index], rows.texts[index], rows.reals[index], rows.blobs[index]])
            }
        }
    }

    /// Workload 3.
    public static func pointSelects(_ database: Database, _ rows: Rows) throws -> PointSelectChecksum {
        let select = try database.prepare(WorkloadSQL.pointSelect)
        var checksum = PointSelectChecksum()
        for id in rows.selectIDs {
            try select.bind([id])
            guard try select.step() else { throw BenchmarkFailure("no row \(id)") }
            let text = try select.column(0, as: String.self)
            let real = try select.column(1, as: Double.self)
            let blob = try select.column(2, as: [UInt8].self)
            checksum.rows += 1
            checksum.textBytes += text.utf8.count
            checksum.realSum += real
            checksum.blobBytes += blob.count
        }
        return checksum
    }

    /// Workload 4.
    public static func singleTransactions(_ database: Database, _ rows: Rows) throws {
        let insert = try database.prepare(WorkloadSQL.insert)
        for index in 0..<Rows.transactionCount {
            try database.transaction {
                try insert.execute([rows.ids[index], rows.texts[index], rows.reals[index], rows.blobs[index]])
            }
        }
    }
}

/// The variants of each workload: SQLCipherKit and the C baseline, each in the given protections. Every run does
/// its own set-up (a fresh file, or a fresh connection to a prepared one) outside the measured part.
public final class Variants {
    private let process: BenchmarkProcess
    private var readFixtures: [Protection: String] = [:]

    /// The variants of the benchmark process `process`.
    public init(process: BenchmarkProcess) {
        self.process = process
    }

    private var rows: Rows { process.rows }

    private func freshFile(_ name: String) throws -> String {
        try process.scratch().freshFile(name)
    }

    /// SQLCipherKit and C variants of `workload`: "encrypted", "plain", "raw C encrypted", "raw C plain".
    public func standard(_ workload: Workload) -> [Variant] {
        [kit(workload, .encrypted), kit(workload, .plain), raw(workload, .encrypted), raw(workload, .plain)]
    }

    /// The standard variants and, for the reads (the scan and the point selects), the crypto floor of the pages
    /// they decrypt, both ways (``cryptoFloor(_:contextsPerPage:)``): what the benchmarks run side by side.
    public func measured(_ workload: Workload) -> [Variant] {
        let reads: Set<Workload> = [.fullScan, .pointSelects]
        return standard(workload)
            + (reads.contains(workload) ? [cryptoFloor(workload), cryptoFloor(workload, contextsPerPage: true)] : [])
    }

    /// The standard variants and, for WorkloadProfile, SQLCipherKit through its convenient forms
    /// (``ConvenientKitWorkloads``), named "<protection>, array arguments".
    public func profiled(_ workload: Workload) -> [Variant] {
        measured(workload) + [Protection.encrypted, .plain].map {
            kit(workload, $0, name: "\($0.rawValue), array arguments", convenient: true)
        }
    }

    /// SQLCipherKit running `workload` with `protection`, named after the protection; `convenient`: through
    /// ``ConvenientKitWorkloads`` (the scan has no convenient form of its own).
    public func kit(_ workload: Workload, _ protection: Protection, name: String? = nil,
                    convenient: Bool = false) -> Variant {
        Variant(name ?? protection.rawValue) { [self] in
            // Generated (once) before anything is timed.
            let rows = rows
            switch workload {
            case .bulkInsert:
                let database = try protection.open(try freshFile("insert-\(protection).db"))
                try database.execute(WorkloadSQL.createTable)
                let elapsed = try SideBySide.time {
                    try convenient ? ConvenientKitWorkloads.bulkInsert(database, rows)
                        : KitWorkloads.bulkInsert(database, rows)
                }
                try Checks.rowCount(database.scalar(Int.self, "SELECT count(*) FROM item") ?? 0, Rows.count)
                return elapsed
            case .fullScan:
                let database = try protection.open(try readFixture(protection))
                var sum = 0.0
                let elapsed = try SideBySide.time { sum = try KitWorkloads.scanSum(database) }
                try Checks.scanSum(sum, rows)
                return elapsed
            case .pointSelects:
                let database = try protection.open(try readFixture(protection))
                var checksum = PointSelectChecksum()
                let elapsed = try SideBySide.time {
                    checksum = try convenient ? ConvenientKitWorkloads.pointSelects(database, rows)
                        : KitWorkloads.pointSelects(database, rows)
                }
                try Checks.pointSelects(checksum, rows)
                return elapsed
            case .transactions:
                let database = try protection.open(try freshFile("transactions-\(protection).db"))
                try database.execute(WorkloadSQL.walNormal)
                try database.execute(WorkloadSQL.createTable)
                let elapsed = try SideBySide.time {
                    try convenient ? ConvenientKitWorkloads.singleTransactions(database, rows)
                        : KitWorkloads.singleTransactions(database, rows)
                }
                try Checks.rowCount(database.scalar(Int.self, "SELECT count(*) FROM item") ?? 0, Rows.transactionCount)
                return elapsed
            }
        }
    }

    /// The page-cache sizes of the curve, in MiB (the database is 13 MB).
    public static let cacheSizes = [2, 8, 16, 32, 64]

    /// Workload 3 through SQLCipherKit with a page cache of `mebibytes`, named "<protection>, <N> MiB". Each
    /// measurement starts with the cache empty (a fresh connection).
    public func pointSelectsWithCache(_ protection: Protection, mebibytes: Int) -> Variant {
        Variant("\(protection.rawValue), \(mebibytes) MiB") { [self] in
            let rows = rows
            let database = try protection.open(try readFixture(protection), cacheBytes: mebibytes << 20)
            var checksum = PointSelectChecksum()
            let elapsed = try SideBySide.time { checksum = try KitWorkloads.pointSelects(database, rows) }
            try Checks.pointSelects(checksum, rows)
            return elapsed
        }
    }

    /// Workload 2 three times on one connection with a page cache of `mebibytes`, after one untimed scan that
    /// fills it, named "<protection>, <N> MiB": a cache that holds the table serves the repeated scans.
    public func repeatedScansWithCache(_ protection: Protection, mebibytes: Int) -> Variant {
        Variant("\(protection.rawValue), \(mebibytes) MiB") { [self] in
            let rows = rows
            let database = try protection.open(try readFixture(protection), cacheBytes: mebibytes << 20)
            try Checks.scanSum(try KitWorkloads.scanSum(database), rows)
            var sums: [Double] = []
            let elapsed = try SideBySide.time {
                for _ in 0..<3 { sums.append(try KitWorkloads.scanSum(database)) }
            }
            for sum in sums { try Checks.scanSum(sum, rows) }
            return elapsed
        }
    }

    /// The crypto floor of the pages `workload` decrypts (the scan or the point selects), named "crypto floor", or,
    /// with `contextsPerPage`, "crypto, contexts per page": HMAC-SHA512 and AES-256-CBC decryption of as many
    /// pages as the encrypted run reads from its file, through libcrypto (Support/RawLoops/crypto_floor.inc).
    /// The floor reuses its contexts and key schedules; the other sets them up for every page, as SQLCipher's
    /// reference OpenSSL provider does.
    public func cryptoFloor(_ workload: Workload, contextsPerPage: Bool = false) -> Variant {
        Variant(contextsPerPage ? "crypto, contexts per page" : "crypto floor") { [self] in
            let pages = try decryptedPages(workload)
            var digest = [UInt8](repeating: 0, count: 64)
            var code: Int32 = 0
            let elapsed = SideBySide.time {
                code = rawsqlcipher_crypto_floor(Int64(pages), contextsPerPage ? 1 : 0, &digest)
            }
            guard code == 0, digest.contains(where: { $0 != 0 }) else {
                throw BenchmarkFailure("libcrypto failed in the crypto floor")
            }
            return elapsed
        }
    }

    private var pagesByWorkload: [Workload: Int] = [:]

    /// The pages `workload` decrypts with SQLite's default cache: the pages it reads from the encrypted file (its
    /// page-cache misses; the same for SQLCipherKit and C: same SQL, same cache, same file), counted once per process
    /// on the C baseline's encrypted connection and recorded for the report ("decrypted pages, <workload>.count").
    /// The plain file has a little fewer pages (4,096 usable bytes a page instead of 4,016): its count is recorded
    /// too ("pages read plain, <workload>.count").
    public func decryptedPages(_ workload: Workload) throws -> Int {
        if let pages = pagesByWorkload[workload] { return pages }
        var counts: [Protection: Int] = [:]
        for protection in [Protection.encrypted, .plain] {
            let connection = try protection.openRaw(try readFixture(protection))
            _ = connection.pagesRead() // opening read page 1
            switch workload {
            case .fullScan: _ = try connection.scan(rows, timed: false)
            case .pointSelects: _ = try connection.pointSelects(rows, timed: false)
            case .bulkInsert, .transactions: throw BenchmarkFailure("the crypto floor is measured on reads only")
            }
            guard let pages = connection.pagesRead(), pages > 0 else {
                throw BenchmarkFailure("the C baseline counted no page read")
            }
            counts[protection] = pages
        }
        let pages = counts[.encrypted] ?? 0
        pagesByWorkload[workload] = pages
        EngineFacts.recordCount("decrypted pages, \(workload.rawValue)", pages)
        EngineFacts.recordCount("pages read plain, \(workload.rawValue)", counts[.plain] ?? 0)
        return pages
    }

    /// The C baseline running `workload` with `protection`, named "raw C <protection>".
    public func raw(_ workload: Workload, _ protection: Protection) -> Variant {
        Variant("raw C \(protection.rawValue)") { [self] in
            let rows = rows
            switch workload {
            case .bulkInsert:
                let connection = try protection.openRaw(try freshFile("insert-raw-\(protection).db"))
                try connection.execute(WorkloadSQL.createTable)
                let elapsed = try connection.insert(rows, count: Rows.count, oneTransaction: true)
                try Checks.rowCount(Int(try connection.text("SELECT count(*) FROM item") ?? "") ?? 0, Rows.count)
                return elapsed
            case .fullScan:
                return try protection.openRaw(try readFixture(protection)).scan(rows)
            case .pointSelects:
                return try protection.openRaw(try readFixture(protection)).pointSelects(rows)
            case .transactions:
                let connection = try protection.openRaw(try freshFile("transactions-raw-\(protection).db"))
                try connection.execute(WorkloadSQL.walNormal)
                try connection.execute(WorkloadSQL.createTable)
                let elapsed = try connection.insert(rows, count: Rows.transactionCount, oneTransaction: false)
                try Checks.rowCount(Int(try connection.text("SELECT count(*) FROM item") ?? "") ?? 0,
                                    Rows.transactionCount)
                return elapsed
            }
        }
    }

    /// The database the scan and the point selects read, written once per process (by the bulk insert, in the
    /// default rollback-journal mode) and shared by SQLCipherKit and the C baseline of the same protection.
    private func readFixture(_ protection: Protection) throws -> String {
        if let path = readFixtures[protection] { return path }
        let path = try freshFile("read-\(protection).db")
        let database = try protection.open(path)
        try database.execute(WorkloadSQL.createTable)
        try KitWorkloads.bulkInsert(database, rows)
        database.close()
        readFixtures[protection] = path
        return path
    }
}
