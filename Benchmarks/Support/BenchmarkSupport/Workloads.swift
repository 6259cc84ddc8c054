import Benchmark
import Foundation

/// The SQL every implementation runs, word for word: the Swift layers and the C loops are handed these strings.
public enum WorkloadSQL {
    /// The table the workloads write and read: an integer key, ~40-byte text, a real and a 64-byte blob.
    public static let createTable = "CREATE TABLE item(id INTEGER PRIMARY KEY, t TEXT NOT NULL, r REAL NOT NULL, b BLOB NOT NULL)"
    /// The prepared insert of workloads 1 and 4.
    public static let insert = "INSERT INTO item(id, t, r, b) VALUES (?, ?, ?, ?)"
    /// Workload 2: every row, summing one column in the caller.
    public static let scan = "SELECT r FROM item"
    /// Workload 3: one row by primary key.
    public static let pointSelect = "SELECT t, r, b FROM item WHERE id = ?"
    /// What SQLCipherKit's `transaction` and GRDB's `inTransaction` run, so the C loops run it too.
    public static let begin = "BEGIN DEFERRED TRANSACTION"
    /// See ``begin``.
    public static let commit = "COMMIT TRANSACTION"
    /// Workload 4's connection settings: write-ahead log, no fsync at each commit (only at checkpoints).
    public static let walNormal = "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL"
}

/// The workloads, named as their benchmarks (package-benchmark sorts benchmarks by name, hence the numbers).
public enum Workload: String, CaseIterable, Sendable {
    /// 100,000 rows in one transaction through one prepared statement.
    case bulkInsert = "1 bulk insert"
    /// Every row of the table, one column summed in the caller.
    case fullScan = "2 full scan"
    /// 100,000 rows by primary key, in a shuffled order, every column read.
    case pointSelects = "3 point selects"
    /// 10,000 transactions of one insert each, WAL with synchronous = NORMAL.
    case transactions = "4 single-row transactions"
}

/// One implementation of a workload, timed by itself: `run` does its own untimed set-up and returns the time of
/// the measured part alone.
public struct Variant {
    /// The custom metric its times are recorded under (its name is the variant's name in the report).
    public let metric: BenchmarkMetric
    /// Runs the variant once: its set-up untimed, then the measured part; returns the measured time.
    public let run: () throws -> Duration

    /// A variant named `name`.
    public init(_ name: String, run: @escaping () throws -> Duration) {
        metric = .custom(name, polarity: .prefersSmaller, useScalingFactor: false)
        self.run = run
    }
}

/// Runs variants side by side in one process. package-benchmark runs every benchmark in a process of its own, one
/// after another; a benchmark here is one workload and each of its iterations is a round that runs every variant
/// once, in an order rotated by one each round. Load from elsewhere on the machine then falls on all variants
/// alike instead of on whichever ran during it, and the ratios of their medians stay stable.
public enum SideBySide {
    /// The measured rounds per benchmark: `BENCHMARK_ROUNDS` (at least 3: package-benchmark exports no samples of
    /// a single round), else 7 (an odd count has a true median).
    public static var rounds: Int {
        ProcessInfo.processInfo.environment["BENCHMARK_ROUNDS"].flatMap { Int($0) }.map { max(3, $0) } ?? 7
    }

    /// A configuration recording one metric per variant, in microseconds: one untimed warm-up round (files
    /// cached, code paged in, fixtures built), then ``rounds`` rounds, with no time limit cutting them short.
    public static func configuration(_ variants: [Variant], rounds: Int = SideBySide.rounds) -> Benchmark.Configuration {
        .init(metrics: variants.map(\.metric),
              units: Dictionary(uniqueKeysWithValues: variants.map { ($0.metric, BenchmarkUnits.count) }),
              warmupIterations: 1, maxDuration: .seconds(3_600), maxIterations: rounds)
    }

    /// Runs one round: every variant once, starting at `benchmark.currentIteration` modulo their count.
    public static func round(_ benchmark: Benchmark, _ variants: [Variant]) throws {
        for offset in variants.indices {
            let variant = variants[(benchmark.currentIteration + offset) % variants.count]
            let elapsed = try variant.run()
            benchmark.measurement(variant.metric, elapsed.wholeMicroseconds)
        }
    }

    /// The time `body` takes. Never inlined: `valgrind --tool=callgrind --toggle-collect='*SideBySide.time*'`
    /// counts exactly the measured code (WorkloadProfile).
    @inline(never)
    public static func time(_ body: () throws -> Void) rethrows -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        return clock.now - start
    }
}

extension Duration {
    /// The duration in whole microseconds.
    public var wholeMicroseconds: Int {
        Int(components.seconds) * 1_000_000 + Int(components.attoseconds / 1_000_000_000_000)
    }
}

/// A failed check or step of a benchmark; the benchmark fails with it.
public struct BenchmarkFailure: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// A failure saying `description`.
    public init(_ description: String) {
        self.description = description
    }
}

/// A private folder for one benchmark process's database files, on the disk TMPDIR names (not tmpfs, unless
/// TMPDIR is one: commits and checkpoints then cost no fsync).
public final class ScratchFolder: Sendable {
    /// The folder's path.
    public let path: String

    /// Creates the folder, in `base` (TMPDIR's folder by default).
    public init(_ name: String, in base: String? = nil) throws {
        path = (base.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory)
            .appendingPathComponent("sqlcipherkit-benchmark-\(name)-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A path in the folder; any file already there, and its journal, WAL and shared-memory files, are removed.
    public func freshFile(_ name: String) -> String {
        let file = path + "/" + name
        for suffix in ["", "-journal", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: file + suffix)
        }
        return file
    }

    /// Removes the folder and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Engine facts a benchmark process proves at run time, written where `BENCHMARK_FACTS_DIR` says (the report
/// quotes them) and always to standard error.
public enum EngineFacts {
    /// Records `line` under `name`, e.g. `EngineFacts.record("SQLCipherKitBenchmarks", "SQLCipher 4.6.1 …")`.
    public static func record(_ name: String, _ line: String) {
        FileHandle.standardError.write(Data("[\(name)] \(line)\n".utf8))
        guard let folder = ProcessInfo.processInfo.environment["BENCHMARK_FACTS_DIR"] else { return }
        let url = URL(fileURLWithPath: folder).appendingPathComponent("\(name).facts")
        // Every benchmark process of a target proves the same facts: the last one's copy is kept.
        try? Data((line + "\n").utf8).write(to: url)
    }

    /// Records a count the report computes with (not a fact it lists) under `name`, e.g. the pages a workload
    /// decrypts: "<name>.count" in `BENCHMARK_FACTS_DIR`.
    public static func recordCount(_ name: String, _ value: Int) {
        FileHandle.standardError.write(Data("[count] \(name): \(value)\n".utf8))
        guard let folder = ProcessInfo.processInfo.environment["BENCHMARK_FACTS_DIR"] else { return }
        let url = URL(fileURLWithPath: folder).appendingPathComponent("\(name).count")
        try? Data("\(value)\n".utf8).write(to: url)
    }
}
