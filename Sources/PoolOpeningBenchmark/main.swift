// Benchmark (not a test): the time to open 8 connections to one passphrase-keyed database, each deriving the
// key itself (what opening 8 connections with the passphrase costs) versus a DatabasePool of 1 writer and 7
// readers that derives it once. Both are measured side by side, alternating, in one run; medians and their
// ratio are printed.
//
//   swift run -c release PoolOpeningBenchmark [rounds]
import Foundation
import SQLCipherKit

let rounds = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 7
let connections = 8
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pool-benchmark-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let path = folder.appendingPathComponent("bench.db").path
let key = try Key.passphrase("benchmark passphrase")

// One database, in WAL mode, as a pool leaves it.
do {
    let setup = try DatabasePool(path: path, key: key, configuration: .init(readerCount: 1))
    try setup.write { try $0.execute("CREATE TABLE t(a); INSERT INTO t VALUES (1)") }
    setup.close()
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

var perConnection: [Double] = []
var derivedOnce: [Double] = []
for _ in 0..<rounds {
    perConnection.append(try seconds {
        var opened: [Database] = []
        for _ in 0..<connections {
            let database = try Database(path: path, key: key)
            _ = try database.scalar(Int.self, "SELECT a FROM t")
            opened.append(database)
        }
        opened.forEach { $0.close() }
    })
    derivedOnce.append(try seconds {
        let pool = try DatabasePool(path: path, key: key, configuration: .init(readerCount: connections - 1))
        _ = try pool.read { try $0.scalar(Int.self, "SELECT a FROM t") }
        pool.close()
    })
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

let facts = try Engine.selfCheck()
print("Opening \(connections) connections to one database keyed with a passphrase (\(facts), \(rounds) rounds)")
print(String(format: "  per-connection KDF: median %.3f s", median(perConnection)))
print(String(format: "  KDF once (pool):    median %.3f s", median(derivedOnce)))
print(String(format: "  speed-up:           %.1fx  (target: >= 6x)", median(perConnection) / median(derivedOnce)))
