// The callgrind gate's workload (Tests/PerformanceGateTests/CallgrindGateTests.swift): a few thousand rows
// inserted in one transaction, scanned, and selected one by one by primary key, then a few hundred more rows
// inserted in a transaction each, through SQLCipherKit's fast path
// ("kit") or through the benchmarks' C loops ("c"), on a fresh file, encrypted with a raw key or plain:
//
//   GateWorkload <kit|c> <plain|encrypted> <folder>
//   GateWorkload codec encrypted <folder>
//
// The codec run holds SQLCipher's page codec to the crypto floor: a cold scan of an encrypted file (every page
// read from the file and decrypted by the codec, `sqlite3Codec`), then HMAC-SHA512 + AES-256-CBC through libcrypto
// on as many pages (Benchmarks/Support/RawLoops/crypto_floor.inc, `gatePartCryptoFloor`); it prints the page count.
//
// Only `gateMeasured` is counted (valgrind --toggle-collect='*gateMeasured*'): opening and creating the table
// are not; inside it, each part runs in a function of its own (gatePartInsert, …) for per-part counts. Every result is checked, so neither side is fast by doing less.
import CGateLoops
import Foundation
import SQLCipherKit

let rowCount = 3_000
/// Rows inserted after the point selects, one transaction each (ids rowCount + 1 …).
let transactionCount = 300
let textLength = 40
let blobLength = 64
let createTable = "CREATE TABLE item(id INTEGER PRIMARY KEY, t TEXT NOT NULL, r REAL NOT NULL, b BLOB NOT NULL)"
let insertSQL = "INSERT INTO item(id, t, r, b) VALUES (?, ?, ?, ?)"
let scanSQL = "SELECT r FROM item"
let selectSQL = "SELECT t, r, b FROM item WHERE id = ?"
let beginSQL = "BEGIN DEFERRED TRANSACTION"
let commitSQL = "COMMIT TRANSACTION"

struct Failure: Error, CustomStringConvertible {
    let description: String
}

/// Deterministic rows (a fixed linear congruential generator), and a shuffled order of every id.
struct Fixture {
    let ids: [Int64]
    let texts: [String]
    let reals: [Double]
    let blobs: [[UInt8]]
    let order: [Int64]
    let keyBytes: [UInt8] = (0..<Key.rawKeyLength).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
    var expectedSum: Double { reals.reduce(0, +) }
    /// The raw key as SQLite key material for the C side (`x'…'`).
    var keyMaterial: [UInt8] { Array(("x'" + keyBytes.map { String(format: "%02x", $0) }.joined() + "'").utf8) }
    /// Every row's text back to back, as the C loops take them.
    var flatTexts: [CChar] { texts.flatMap { Array($0.utf8) }.map { CChar(bitPattern: $0) } }
    /// Every row's blob back to back, as the C loops take them.
    var flatBlobs: [UInt8] { blobs.flatMap { $0 } }

    init() {
        var state: UInt64 = 0x5EED_5EED_5EED_5EED
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 11
        }
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ".utf8)
        var texts: [String] = [], reals: [Double] = [], blobs: [[UInt8]] = []
        for _ in 0..<rowCount {
            texts.append(String(decoding: (0..<textLength).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] },
                                as: UTF8.self))
            reals.append(Double(next() % 1_000_000) / 100)
            blobs.append((0..<blobLength).map { _ in UInt8(truncatingIfNeeded: next()) })
        }
        ids = (1...rowCount).map { Int64($0) }
        var order = ids
        // The single-row transactions reuse the first rows' values under new ids.
        for index in stride(from: order.count - 1, to: 0, by: -1) { order.swapAt(index, Int(next() % UInt64(index + 1))) }
        self.texts = texts
        self.reals = reals
        self.blobs = blobs
        self.order = order
    }
}

/// The counted part. Never inlined, so that callgrind can toggle on its symbol.
@inline(never)
func gateMeasured(_ body: () throws -> Void) rethrows {
    try body()
}

// The four parts of the counted part, one symbol each, so that the gate reads each part's own count
// (`callgrind_annotate --inclusive=yes`) and a saving in one part cannot hide a regression in another.
// Each counts its runs in its own slot: identical bodies would be merged into one function by the optimizer.
// nonisolated(unsafe): the workload is a single-threaded program; only its main thread touches the counts.
nonisolated(unsafe) var gatePartRuns = [0, 0, 0, 0, 0, 0]
@inline(never) func gatePartInsert(_ body: () throws -> Void) rethrows { gatePartRuns[0] += 1; try body() }
@inline(never) func gatePartScan(_ body: () throws -> Void) rethrows { gatePartRuns[1] += 1; try body() }
@inline(never) func gatePartSelects(_ body: () throws -> Void) rethrows { gatePartRuns[2] += 1; try body() }
@inline(never) func gatePartTransactions(_ body: () throws -> Void) rethrows { gatePartRuns[3] += 1; try body() }
@inline(never) func gatePartCodecScan(_ body: () throws -> Void) rethrows { gatePartRuns[4] += 1; try body() }
@inline(never) func gatePartCryptoFloor(_ body: () throws -> Void) rethrows { gatePartRuns[5] += 1; try body() }

/// What a run read: the scan's sum, and the rows, text bytes and blob bytes of the point selects.
struct Result: Equatable {
    var sum = 0.0
    var rows = 0
    var textBytes = 0
    var blobBytes = 0
    var transactionRows = 0
}

func runKit(path: String, encrypted: Bool, _ f: Fixture) throws -> Result {
    let (ids, texts, reals, blobs, order, keyBytes) = (f.ids, f.texts, f.reals, f.blobs, f.order, f.keyBytes)
    let database = encrypted ? try Database(path: path, key: .rawKey(keyBytes)) : try Database(unencryptedPath: path)
    try database.execute(createTable)
    var result = Result()
    try gateMeasured {
        let insert = try database.prepare(insertSQL)
        try gatePartInsert {
            try database.transaction {
                for index in ids.indices {
                    try insert.execute(ids[index], texts[index], reals[index], blobs[index])
                }
            }
        }
        try gatePartScan {
            let scan = try database.prepare(scanSQL)
            while try scan.step() {
                result.sum += try scan.column(0, as: Double.self)
            }
        }
        try gatePartSelects {
            let select = try database.prepare(selectSQL)
            for id in order {
                try select.bind(id)
                guard try select.step() else { throw Failure(description: "no row \(id)") }
                result.rows += 1
                result.textBytes += try select.withUnsafeBytes(at: 0) { $0.count }
                result.sum += try select.column(1, as: Double.self)
                result.blobBytes += try select.withUnsafeBytes(at: 2) { $0.count }
            }
        }
        try gatePartTransactions {
            for index in 0..<transactionCount {
                try database.transaction {
                    try insert.execute(Int64(rowCount + 1 + index), texts[index], reals[index], blobs[index])
                }
            }
        }
    }
    result.transactionRows = try database.scalar(Int.self, "SELECT count(*) FROM item WHERE id > \(rowCount)") ?? 0
    database.close()
    return result
}

func runC(path: String, encrypted: Bool, _ f: Fixture) throws -> Result {
    let (ids, reals, order) = (f.ids, f.reals, f.order)
    var db: OpaquePointer?
    let material = f.keyMaterial
    let opened = encrypted
        ? material.withUnsafeBytes { gate_open(path, $0.baseAddress, Int32($0.count), &db) }
        : gate_open(path, nil, 0, &db)
    guard opened == 0, let db else { throw Failure(description: "C open failed with \(opened)") }
    defer { gate_close(db) }
    guard gate_exec(db, createTable) == 0 else { throw Failure(description: "C create failed") }
    var result = Result()
    let (flatTexts, flatBlobs) = (f.flatTexts, f.flatBlobs)
    let transactionIDs = (0..<transactionCount).map { Int64(rowCount + 1 + $0) }
    var codes: [Int32] = []
    var sum = 0.0, selectSum = 0.0
    var found: Int64 = 0, textBytes: Int64 = 0, blobBytes: Int64 = 0, firstBytes: Int64 = 0
    gateMeasured {
        gatePartInsert {
            codes.append(gate_bulk_insert(db, insertSQL, beginSQL, commitSQL, Int64(rowCount), ids, flatTexts,
                                          Int32(textLength), reals, flatBlobs, Int32(blobLength)))
        }
        gatePartScan { codes.append(gate_scan_sum(db, scanSQL, &sum)) }
        gatePartSelects {
            codes.append(gate_point_selects(db, selectSQL, order, Int64(order.count), &found, &textBytes,
                                            &blobBytes, &selectSum, &firstBytes))
        }
        gatePartTransactions {
            codes.append(gate_single_transactions(db, insertSQL, beginSQL, commitSQL, Int64(transactionCount),
                                                  transactionIDs, flatTexts, Int32(textLength), reals, flatBlobs,
                                                  Int32(blobLength)))
        }
    }
    guard codes == [0, 0, 0, 0] else {
        throw Failure(description: "C loops failed with \(codes): \(String(cString: gate_errmsg(db)))")
    }
    result.sum = sum + selectSum
    result.rows = Int(found)
    result.textBytes = Int(textBytes)
    result.blobBytes = Int(blobBytes)
    var counted = [CChar](repeating: 0, count: 32)
    guard gate_query_text(db, "SELECT count(*) FROM item WHERE id > \(rowCount)", &counted, 32) == 100 else {
        throw Failure(description: "C count failed: \(String(cString: gate_errmsg(db)))")
    }
    result.transactionRows = Int(String(decoding: counted.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) ?? 0
    return result
}

/// The codec run: the pages the cold scan decrypted, after checking that the scan and the floor both ran.
func runCodec(path: String, _ f: Fixture) throws -> Int64 {
    var db: OpaquePointer?
    let material = f.keyMaterial
    func open() throws -> OpaquePointer {
        let opened = material.withUnsafeBytes { gate_open(path, $0.baseAddress, Int32($0.count), &db) }
        guard opened == 0, let db else { throw Failure(description: "C open failed with \(opened)") }
        return db
    }
    let writer = try open()
    let created = gate_exec(writer, createTable) == 0
        && gate_bulk_insert(writer, insertSQL, beginSQL, commitSQL, Int64(rowCount), f.ids, f.flatTexts,
                            Int32(textLength), f.reals, f.flatBlobs, Int32(blobLength)) == 0
    gate_close(writer)
    guard created else { throw Failure(description: "C could not write the codec run's file") }
    // A new connection: its page cache is empty, so the scan reads and decrypts every page of the table.
    let reader = try open()
    defer { gate_close(reader) }
    _ = gate_cache_misses(reader)
    var sum = 0.0, pages: Int64 = 0
    var codes: [Int32] = []
    var digest = [UInt8](repeating: 0, count: 64)
    // libcrypto's one-time work (fetching HMAC from its provider store) outside the count, as the codec's own
    // set-up happened at open: both sides are counted per page in their steady state.
    guard gate_crypto_floor(1, 0, &digest) == 0 else { throw Failure(description: "the crypto floor failed") }
    digest = [UInt8](repeating: 0, count: 64)
    gateMeasured {
        gatePartCodecScan {
            codes.append(gate_scan_sum(reader, scanSQL, &sum))
            pages = gate_cache_misses(reader)
        }
        gatePartCryptoFloor { codes.append(gate_crypto_floor(pages, 0, &digest)) }
    }
    guard codes == [0, 0], pages > 0, abs(sum - f.expectedSum) <= 1e-6 * f.expectedSum,
          digest.contains(where: { $0 != 0 }), gatePartRuns == [0, 0, 0, 0, 1, 1] else {
        throw Failure(description:
            "codec run failed: codes \(codes), \(pages) pages, sum \(sum), parts \(gatePartRuns)")
    }
    return pages
}

let arguments = CommandLine.arguments.dropFirst()
if arguments.count == 3, arguments.first == "codec", arguments.dropFirst().first == "encrypted",
   let folder = arguments.last {
    let path = folder + "/gate-codec.db"
    for suffix in ["", "-journal"] { unlink(path + suffix) }
    do {
        print("ok codec encrypted: \(try runCodec(path: path, Fixture())) pages")
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("GateWorkload: \(error)\n".utf8))
        exit(1)
    }
}
guard arguments.count == 3, let side = arguments.first, ["kit", "c"].contains(side),
      let protection = arguments.dropFirst().first, ["plain", "encrypted"].contains(protection),
      let folder = arguments.last
else {
    FileHandle.standardError.write(Data(
        "usage: GateWorkload <kit|c> <plain|encrypted> <folder> | GateWorkload codec encrypted <folder>\n".utf8))
    exit(64)
}
let path = folder + "/gate-\(side)-\(protection).db"
for suffix in ["", "-journal"] { unlink(path + suffix) }
do {
    let encrypted = protection == "encrypted"
    let fixture = Fixture()
    let result = side == "kit" ? try runKit(path: path, encrypted: encrypted, fixture)
        : try runC(path: path, encrypted: encrypted, fixture)
    let expected = Result(sum: 2 * fixture.expectedSum, rows: rowCount, textBytes: rowCount * textLength,
                          blobBytes: rowCount * blobLength, transactionRows: transactionCount)
    guard result.rows == expected.rows, result.textBytes == expected.textBytes,
          result.transactionRows == expected.transactionRows,
          result.blobBytes == expected.blobBytes, abs(result.sum - expected.sum) <= 1e-6 * expected.sum else {
        throw Failure(description: "read \(result), expected \(expected)")
    }
    guard gatePartRuns == [1, 1, 1, 1, 0, 0] else { throw Failure(description: "parts run \(gatePartRuns), not once each") }
    print("ok \(side) \(protection): \(result.rows) rows")
} catch {
    FileHandle.standardError.write(Data("GateWorkload: \(error)\n".utf8))
    exit(1)
}
