/// The C baseline's entry points (Support/RawLoops/raw_loops.inc) as compiled against one engine: CRawSQLCipher's
/// in the SQLCipherKit process, CRawSystemSQLite's in the GRDB process. A table of function pointers, so the Swift
/// that drives them is written once for both.
public struct RawCFunctions: Sendable {
    /// `open(path, key, key_length, &db)`.
    public typealias Open = @convention(c) (UnsafePointer<CChar>?, UnsafeRawPointer?, Int32,
                                            UnsafeMutablePointer<OpaquePointer?>?) -> Int32
    /// `close(db)`.
    public typealias Close = @convention(c) (OpaquePointer?) -> Void
    /// `exec(db, sql)`.
    public typealias Exec = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
    /// `errmsg(db)`.
    public typealias ErrorMessage = @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    /// `query_text(db, sql, buffer, capacity)`.
    public typealias QueryText = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafeMutablePointer<CChar>?,
                                                 Int32) -> Int32
    /// `bulk_insert` and `single_transactions`: (db, insert, begin, commit, count, ids, texts, text length, reals,
    /// blobs, blob length).
    public typealias Insert = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                                              UnsafePointer<CChar>?, Int64, UnsafePointer<Int64>?,
                                              UnsafePointer<CChar>?, Int32, UnsafePointer<Double>?,
                                              UnsafePointer<UInt8>?, Int32) -> Int32
    /// `scan_sum(db, sql, &sum)`.
    public typealias Scan = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafeMutablePointer<Double>?) -> Int32
    /// `point_selects(db, sql, ids, count, &rows, &text bytes, &blob bytes, &real sum, &first bytes)`.
    public typealias PointSelects = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<Int64>?, Int64,
                                                    UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?,
                                                    UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Double>?,
                                                    UnsafeMutablePointer<Int64>?) -> Int32

    /// `cache_misses(db)`: the pages read from the file since the last call (nil: not offered by this engine's
    /// table).
    public typealias CacheMisses = @convention(c) (OpaquePointer?) -> Int64

    let open: Open
    let close: Close
    let exec: Exec
    let errorMessage: ErrorMessage
    let queryText: QueryText
    let bulkInsert: Insert
    let scan: Scan
    let pointSelects: PointSelects
    let singleTransactions: Insert
    let cacheMisses: CacheMisses?

    /// The table of one engine's functions.
    public init(open: Open, close: Close, exec: Exec, errorMessage: ErrorMessage, queryText: QueryText,
                bulkInsert: Insert, scan: Scan, pointSelects: PointSelects, singleTransactions: Insert,
                cacheMisses: CacheMisses? = nil) {
        self.open = open
        self.close = close
        self.exec = exec
        self.errorMessage = errorMessage
        self.queryText = queryText
        self.bulkInsert = bulkInsert
        self.scan = scan
        self.pointSelects = pointSelects
        self.singleTransactions = singleTransactions
        self.cacheMisses = cacheMisses
    }
}

/// A connection of the C baseline, and the four workloads run through it.
public final class RawConnection {
    private let functions: RawCFunctions
    private let handle: OpaquePointer

    /// Opens `path` (creating it) with `keyMaterial`, the bytes `sqlite3_key_v2` receives (nil: no key).
    public init(_ functions: RawCFunctions, path: String, keyMaterial: [UInt8]?) throws {
        self.functions = functions
        var handle: OpaquePointer?
        let code = keyMaterial.map { key in
            key.withUnsafeBytes { functions.open(path, $0.baseAddress, Int32($0.count), &handle) }
        } ?? functions.open(path, nil, 0, &handle)
        guard code == 0, let handle else { throw BenchmarkFailure("C open of \(path) failed with code \(code)") }
        self.handle = handle
    }

    deinit {
        functions.close(handle)
    }

    private func check(_ code: Int32, _ what: String) throws {
        guard code == 0 else {
            let message = functions.errorMessage(handle).map { String(cString: $0) } ?? "?"
            throw BenchmarkFailure("C \(what) failed with code \(code): \(message)")
        }
    }

    /// The pages the connection read from its file (page-cache misses) since the last call, which resets the
    /// count; nil when the engine's table does not offer it.
    public func pagesRead() -> Int? {
        functions.cacheMisses.map { Int($0(handle)) }
    }

    /// Runs SQL, discarding rows.
    public func execute(_ sql: String) throws {
        try check(functions.exec(handle, sql), sql)
    }

    /// The first column of the first row of `sql`, or nil when there is no row.
    public func text(_ sql: String) throws -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let code = functions.queryText(handle, sql, &buffer, Int32(buffer.count))
        if code == 101 { return nil } // SQLITE_DONE: no row
        guard code == 100 else { try check(code, sql); return nil } // SQLITE_ROW
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Workload 1 (`count` rows) or 4 (`count` transactions), measured.
    public func insert(_ rows: Rows, count: Int, oneTransaction: Bool) throws -> Duration {
        let insert = oneTransaction ? functions.bulkInsert : functions.singleTransactions
        var code: Int32 = 0
        let elapsed = rows.ids.withUnsafeBufferPointer { ids in
            rows.flatTexts.withUnsafeBufferPointer { texts in
                rows.reals.withUnsafeBufferPointer { reals in
                    rows.flatBlobs.withUnsafeBufferPointer { blobs in
                        texts.withMemoryRebound(to: CChar.self) { texts in
                            SideBySide.time {
                                code = insert(handle, WorkloadSQL.insert, WorkloadSQL.begin, WorkloadSQL.commit,
                                              Int64(count), ids.baseAddress, texts.baseAddress,
                                              Int32(Rows.textLength), reals.baseAddress, blobs.baseAddress,
                                              Int32(Rows.blobLength))
                            }
                        }
                    }
                }
            }
        }
        try check(code, oneTransaction ? "bulk insert" : "single-row transactions")
        return elapsed
    }

    /// Runs `body`, timed by ``SideBySide/time(_:)`` (and counted by callgrind) only when `timed`.
    private func measure(_ timed: Bool, _ body: () -> Void) -> Duration {
        guard timed else { body(); return .zero }
        return SideBySide.time(body)
    }

    /// Workload 2, measured (`timed`: false for an untimed run, uncounted by the profiles); checks the sum.
    public func scan(_ rows: Rows, timed: Bool = true) throws -> Duration {
        var sum = 0.0
        var code: Int32 = 0
        let elapsed = measure(timed) { code = functions.scan(handle, WorkloadSQL.scan, &sum) }
        try check(code, "scan")
        try Checks.scanSum(sum, rows)
        return elapsed
    }

    /// Workload 3, measured (`timed`: as for ``scan(_:timed:)``); checks what was read.
    public func pointSelects(_ rows: Rows, timed: Bool = true) throws -> Duration {
        var found: Int64 = 0, textBytes: Int64 = 0, blobBytes: Int64 = 0, firstBytes: Int64 = 0
        var realSum = 0.0
        var code: Int32 = 0
        let elapsed = rows.selectIDs.withUnsafeBufferPointer { ids in
            measure(timed) {
                code = functions.pointSelects(handle, WorkloadSQL.pointSelect, ids.baseAddress, Int64(ids.count),
                                              &found, &textBytes, &blobBytes, &realSum, &firstBytes)
            }
        }
        try check(code, "point selects")
        var checksum = PointSelectChecksum()
        checksum.rows = Int(found)
        checksum.textBytes = Int(textBytes)
        checksum.blobBytes = Int(blobBytes)
        checksum.realSum = realSum
        try Checks.pointSelects(checksum, rows)
        return elapsed
    }
}

/// The checks every variant's results go through, so that no variant is fast by doing less.
public enum Checks {
    /// The scan must have summed every row's real.
    public static func scanSum(_ sum: Double, _ rows: Rows) throws {
        guard abs(sum - rows.realSum) <= 1e-6 * abs(rows.realSum) else {
            throw BenchmarkFailure("the scan summed \(sum), not \(rows.realSum)")
        }
    }

    /// The point selects must have read every selected row, whole.
    public static func pointSelects(_ checksum: PointSelectChecksum, _ rows: Rows) throws {
        let expected = PointSelectChecksum.expected(for: rows)
        guard expected.matches(checksum) else {
            throw BenchmarkFailure("the point selects read \(checksum), not \(expected)")
        }
    }

    /// The table must hold `count` rows.
    public static func rowCount(_ found: Int, _ count: Int) throws {
        guard found == count else { throw BenchmarkFailure("the table holds \(found) rows, not \(count)") }
    }
}
