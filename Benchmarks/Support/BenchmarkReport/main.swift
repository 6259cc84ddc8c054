// Writes BENCHMARKS.md from the samples package-benchmark exported (`--format histogramSamples`), one folder per
// pass of Benchmarks/run.sh:
//
//   BenchmarkReport --output FILE --facts DIR --machine FILE --command TEXT [--notes FILE] [--fluent-only] PASS_DIR...
//
// --fluent-only writes the machine, the Fluent section and its targets alone (run.sh --fluent-only).
//
// Each exported file holds one metric of one benchmark: a header line "<metric> <unit>", then one value per line
// (the variants record microseconds). Medians are taken per pass (and pooled, for the table of times); every
// ratio is a ratio of one pass's medians, shown combined over the passes (geometric mean) with each pass's own
// value after it, so that its stability can be read.
import Foundation

struct Options {
    var output = "BENCHMARKS.md"
    var facts: String?
    var machine: String?
    var command = "Benchmarks/run.sh"
    var notes: String?
    var fluentOnly = false
    var passes: [String] = []
}

func parseOptions() -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst()
    while let argument = arguments.popFirst() {
        switch argument {
        case "--output": options.output = arguments.popFirst() ?? options.output
        case "--facts": options.facts = arguments.popFirst()
        case "--machine": options.machine = arguments.popFirst()
        case "--command": options.command = arguments.popFirst() ?? options.command
        case "--notes": options.notes = arguments.popFirst()
        case "--fluent-only": options.fluentOnly = true
        default: options.passes.append(argument)
        }
    }
    return options
}

/// Samples by target, benchmark and metric, for one pass.
typealias Samples = [String: [String: [String: [Double]]]]

/// The target and benchmark names (package-benchmark names the exported files
/// "<baseline>.<target>.<benchmark>.<metric>.histogram.samples.tsv", with spaces and slashes replaced).
let targets = ["SQLCipherKitBenchmarks", "GRDBBenchmarks", "FluentBenchmarks"]
let benchmarkNames = ["1 bulk insert", "2 full scan", "3 point selects", "4 single-row transactions",
                      "5 memory security", "6 open one connection", "7 open 8 connections",
                      "8 point selects by cache size", "9 repeated scans by cache size",
                      "10 full scan, SHA-256 profile", "11 point selects, SHA-256 profile",
                      "1 Fluent CRUD", "2 Fluent concurrent reads"]
/// The page-cache sizes of benchmarks 8 and 9, in MiB (Variants.cacheSizes).
let cacheSizes = [2, 8, 16, 32, 64]

/// The Fluent variants (Support/FluentWorkloads, FluentDriverVariant), the parts of the CRUD workload
/// (FluentCRUD.parts) and the task counts of the concurrent reads (FluentConcurrentReads.taskCounts).
let fluentEncrypted = "FluentSQLCipherDriver encrypted"
let fluentUnencrypted = "FluentSQLCipherDriver unencrypted"
let fluentSQLite = "fluent-sqlite-driver"
let fluentVariants = [fluentEncrypted, fluentUnencrypted, fluentSQLite]
let fluentParts = ["creates", "queries", "updates", "deletes", "total"]
let fluentTaskCounts = [1, 2, 4]
func fluentReadsMetric(_ variant: String, _ tasks: Int) -> String {
    "\(variant), \(tasks) task\(tasks == 1 ? "" : "s")"
}

/// The variants' metric names (Support/SQLCipherKitWorkloads, GRDBBenchmarks, Support/FluentWorkloads).
let metricNames = ["encrypted", "plain", "raw C encrypted", "raw C plain", "GRDB", "raw C system SQLite",
                   "passphrase", "raw key", "per-connection KDF", "KDF once (pool)", "encrypted, SHA-256",
                   "crypto floor", "crypto, contexts per page"]
    + cacheSizes.flatMap { ["encrypted, \($0) MiB", "plain, \($0) MiB"] } + benchmarkNames
    + fluentVariants.flatMap { variant in fluentParts.map { "\(variant): \($0)" } }
    + fluentVariants.flatMap { variant in fluentTaskCounts.map { fluentReadsMetric(variant, $0) } }

/// A benchmark name as package-benchmark 1.38.1 spells it in file names (`cleanupStringForShellSafety`).
func shellSafe(_ text: String) -> String {
    text.replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: " ", with: "_")
}

func readPass(_ folder: String) throws -> Samples {
    var samples: Samples = [:]
    for file in try FileManager.default.contentsOfDirectory(atPath: folder) where file.hasSuffix(".samples.tsv") {
        guard let target = targets.first(where: { file.contains(".\($0).") }),
              let benchmark = benchmarkNames.first(where: { file.contains(".\(target).\(shellSafe($0)).") }) else {
            continue
        }
        let lines = try String(contentsOfFile: folder + "/" + file, encoding: .utf8).split(separator: "\n")
        guard let header = lines.first else { continue }
        // The header is "<metric> <unit>", and the variants' unit is empty: the metric is the longest known name
        // the header starts with.
        guard let metric = metricNames.filter({ header.hasPrefix($0) }).max(by: { $0.count < $1.count }) else {
            continue
        }
        samples[target, default: [:]][benchmark, default: [:]][metric] = lines.dropFirst().compactMap { Double($0) }
    }
    return samples
}

func median(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(status)
}

let options = parseOptions()
let passes: [Samples] = options.passes.map { folder in
    do {
        return try readPass(folder)
    } catch {
        fail("cannot read \(folder): \(error)", status: 1)
    }
}
if passes.isEmpty {
    fail("usage: BenchmarkReport --output FILE [--facts DIR] [--machine FILE] [--command TEXT] [--notes FILE] PASS_DIR...",
         status: 64)
}

/// The samples of one metric, pooled over the passes (nil pass) or of one pass.
func values(_ target: String, _ benchmark: String, _ metric: String, pass: Int? = nil) -> [Double] {
    let chosen = pass.map { [passes[$0]] } ?? passes
    return chosen.flatMap { $0[target]?[benchmark]?[metric] ?? [] }
}

func medianOf(_ target: String, _ benchmark: String, _ metric: String, pass: Int? = nil) -> Double? {
    median(values(target, benchmark, metric, pass: pass))
}

/// A ratio of medians, per pass, and combined as the geometric mean of the passes' ratios. Not the ratio of the
/// pooled medians: the load on the machine differs between passes, and pooling could pair one variant's median from
/// a busy pass with another's from a quiet one, undoing what running them side by side achieves.
struct Ratio {
    let perPass: [Double?]

    var pooled: Double? {
        let values = perPass.compactMap { $0 }
        guard !values.isEmpty, values.count == perPass.count else { return nil }
        return exp(values.map { log($0) }.reduce(0, +) / Double(values.count))
    }

    var text: String {
        guard let pooled else { return "–" }
        let each = perPass.map { $0.map { String(format: "%.2f", $0) } ?? "–" }.joined(separator: ", ")
        return String(format: "%.2f", pooled) + (perPass.count > 1 ? " (\(each))" : "")
    }
}

typealias Operand = (target: String, benchmark: String, metric: String)

func ratio(_ numerator: Operand, _ denominator: Operand) -> Ratio {
    func of(_ pass: Int?) -> Double? {
        guard let top = medianOf(numerator.target, numerator.benchmark, numerator.metric, pass: pass),
              let bottom = medianOf(denominator.target, denominator.benchmark, denominator.metric, pass: pass),
              bottom > 0 else { return nil }
        return top / bottom
    }
    return Ratio(perPass: passes.indices.map { of($0) })
}

func milliseconds(_ microseconds: Double?) -> String {
    guard let microseconds else { return "–" }
    let value = microseconds / 1000
    return value >= 100 ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value)
        : String(format: "%.2f", value)
}

let kit = "SQLCipherKitBenchmarks"
let grdb = "GRDBBenchmarks"
let fluent = "FluentBenchmarks"
let fluentCRUD = "1 Fluent CRUD"
let fluentReads = "2 Fluent concurrent reads"
let workloads = Array(benchmarkNames.prefix(4))
/// The samples that say how many rounds ran: the first workload's encrypted variant.
let (countedTarget, countedBenchmark, countedMetric) = options.fluentOnly
    ? (fluent, fluentCRUD, "\(fluentEncrypted): total") : (kit, workloads[0], "encrypted")
let sampleCount = values(countedTarget, countedBenchmark, countedMetric).count
let roundsPerPass = passes.first.flatMap { $0[countedTarget]?[countedBenchmark]?[countedMetric]?.count } ?? 0

var report = """
    # Benchmarks

    Three benchmarks, each with its numbers, its method and what they say:

    - **SQLCipherKit, C and GRDB** (`Benchmarks/SQLCipherKitBenchmarks`, `Benchmarks/GRDBBenchmarks`):
      SQLCipherKit's cost over the same engine driven from C, the cost of encryption, and GRDB.swift on the
      system's SQLite for comparison: from [Medians](#medians-milliseconds-all-samples-of-all-passes) to
      [Opening](#opening-milliseconds), then its [Method](#method), [what the ratios say](#what-the-ratios-say),
      [profiles](#profiles-callgrind) and [noise](#noise).
    - **Fluent in process** (`Benchmarks/FluentBenchmarks`): [Fluent](#fluent-fluentsqlcipherdriver-and-fluent-sqlite-driver).
    - **Load over HTTP** (`Benchmarks/Load`, a package of its own):
      [Load](#load-the-vapor-todo-app-under-wrk).

    `Benchmarks/run.sh` generates the first two (the harness is
    [package-benchmark](https://github.com/ordo-one/benchmark) 1.38.1) with the hand-written analysis from
    Benchmarks/ANALYSIS.md; `Benchmarks/Load/run.sh` the last. [Targets](#targets) lists the first two's targets.


    """

report += "## Machine and command\n\n"
if let machine = options.machine, let text = try? String(contentsOfFile: machine, encoding: .utf8) {
    for line in text.split(separator: "\n") { report += "- \(line)\n" }
}
report += "- Command: `\(options.command)` — \(passes.count) pass(es) of \(roundsPerPass) measured rounds each "
    + "(\(sampleCount) samples per variant, pooled)\n"
if let facts = options.facts, let files = try? FileManager.default.contentsOfDirectory(atPath: facts) {
    for file in files.sorted() where file.hasSuffix(".facts") {
        if let text = try? String(contentsOfFile: facts + "/" + file, encoding: .utf8) {
            report += "- Checked at run time by \(file.dropLast(6)): \(text.trimmingCharacters(in: .whitespacesAndNewlines))\n"
        }
    }
}

/// A target of the issue and the ratio that meets it or not: at most `limit` (or at least `limit` when `atLeast`,
/// above it when `above`). A nil ratio says the target could not be measured, and `note` why.
struct Verdict {
    let name: String
    let ratio: Ratio
    let limit: Double
    let atLeast: Bool
    var above = false
    var note: String? = nil
}
var verdicts: [Verdict] = []

if !options.fluentOnly {
report += """

    ## Medians (milliseconds, all samples of all passes)

    | Workload | encrypted | plain | raw C encrypted | raw C plain | encrypted + memory security ¹ | GRDB ² | raw C, system SQLite ² |
    | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |

    """
for workload in workloads {
    let cells = [
        medianOf(kit, workload, "encrypted"), medianOf(kit, workload, "plain"),
        medianOf(kit, workload, "raw C encrypted"), medianOf(kit, workload, "raw C plain"),
        medianOf(kit, "5 memory security", workload), medianOf(grdb, workload, "GRDB"),
        medianOf(grdb, workload, "raw C system SQLite"),
    ].map(milliseconds)
    report += "| \(workload) | " + cells.joined(separator: " | ") + " |\n"
}
report += """

    ¹ Informational; its own process (`cipher_memory_security` cannot be turned off again in a process), so it is
    not interleaved with the other columns. ² Their own process, on the system's SQLite (see Method).


    """

report += """
    ## Ratios of medians

    Each ratio is one pass's median over another median of the same pass; the first figure combines the passes
    (geometric mean), each pass's own follows in parentheses. Targets from the issue in the headers.

    | Workload | encrypted / plain (≤ 1.10 on 1–2, ≤ 1.15 on 3) | SQLCipherKit / raw C, plain (≤ 1.05) | SQLCipherKit / raw C, encrypted (≤ 1.05) | SQLCipherKit plain / GRDB (≤ 1.0) | GRDB / its raw C | raw C plain / raw C system SQLite | memory security / encrypted |
    | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |

    """
for (index, workload) in workloads.enumerated() {
    let encryption = ratio((kit, workload, "encrypted"), (kit, workload, "plain"))
    let layerPlain = ratio((kit, workload, "plain"), (kit, workload, "raw C plain"))
    let layerEncrypted = ratio((kit, workload, "encrypted"), (kit, workload, "raw C encrypted"))
    let versusGRDB = ratio((kit, workload, "plain"), (grdb, workload, "GRDB"))
    let grdbLayer = ratio((grdb, workload, "GRDB"), (grdb, workload, "raw C system SQLite"))
    let engines = ratio((kit, workload, "raw C plain"), (grdb, workload, "raw C system SQLite"))
    let memory = ratio((kit, "5 memory security", workload), (kit, workload, "encrypted"))
    report += "| \(workload) | " + [encryption, layerPlain, layerEncrypted, versusGRDB, grdbLayer, engines, memory]
        .map(\.text).joined(separator: " | ") + " |\n"
    if index < 3 {
        verdicts.append(Verdict(name: "encrypted / plain, \(workload)", ratio: encryption,
                                limit: index < 2 ? 1.10 : 1.15, atLeast: false))
    }
    verdicts.append(Verdict(name: "SQLCipherKit / raw C (plain), \(workload)", ratio: layerPlain, limit: 1.05,
                            atLeast: false))
    verdicts.append(Verdict(name: "SQLCipherKit / raw C (encrypted), \(workload)", ratio: layerEncrypted, limit: 1.05,
                            atLeast: false))
    verdicts.append(Verdict(name: "SQLCipherKit / GRDB (plain), \(workload)", ratio: versusGRDB, limit: 1.0,
                            atLeast: false))
}

/// The pages workload `benchmark` read from its file, counted by the benchmark process ("decrypted pages,
/// <benchmark>.count" in the facts folder), or nil.
func pagesRead(_ benchmark: String) -> Double? {
    guard let facts = options.facts,
          let text = try? String(contentsOfFile: facts + "/decrypted pages, \(benchmark).count", encoding: .utf8)
    else { return nil }
    return Double(text.trimmingCharacters(in: .whitespacesAndNewlines))
}

/// Per pass: (median of `encrypted` − median of `plain`) / median of "crypto floor", in one benchmark.
func extraOverFloor(_ benchmark: String, _ encrypted: String, _ plain: String) -> Ratio {
    Ratio(perPass: passes.indices.map { pass in
        guard let top = medianOf(kit, benchmark, encrypted, pass: pass),
              let bottom = medianOf(kit, benchmark, plain, pass: pass),
              let floor = medianOf(kit, benchmark, "crypto floor", pass: pass), floor > 0 else { return nil }
        return (top - bottom) / floor
    })
}

func microsecondsPerPage(_ microseconds: Double?, _ pages: Double?) -> String {
    guard let microseconds, let pages, pages > 0 else { return "–" }
    return String(format: "%.2f", microseconds / pages)
}

report += """

    ## Encryption against the crypto floor

    What encryption adds per page read, beside what the cryptography itself costs on this machine in the same run:
    the encrypted run's median minus the plain run's, divided by the pages the workload reads from the encrypted
    file (its page-cache misses with the 2,000 KiB cache, counted on the C baseline's connection; the same for
    SQLCipherKit: same SQL, same cache, same file). The plain file has about 1 % fewer pages (4,096 usable bytes
    a page instead of 4,016), so a little of the extra is B-tree work on more pages, not cryptography. The floor: HMAC-SHA512 over the page and
    AES-256-CBC decryption of it through libcrypto (Support/RawLoops/crypto_floor.inc, SQLCipher 4's page layout:
    4,016 data bytes, 16-byte IV, 64-byte HMAC), as many pages, contexts and key schedules reused; "contexts per
    page" sets up a new HMAC and cipher context for every page, as SQLCipher's reference OpenSSL provider calls
    libcrypto (the engine uses SQLCipherKit's provider, which keys the kept contexts for every page and wipes them
    after it). Target from the issue: extra per page ≤ 1.15 × the floor.

    | Workload | pages read | SQLCipherKit extra / page (µs) | raw C extra / page (µs) | crypto floor / page (µs) | contexts per page / page (µs) | SQLCipherKit extra / floor (≤ 1.15) | raw C extra / floor |
    | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |

    """
for workload in [workloads[1], workloads[2]] {
    let pages = pagesRead(workload)
    let kitExtra = medianOf(kit, workload, "encrypted").flatMap { e in medianOf(kit, workload, "plain").map { e - $0 } }
    let rawExtra = medianOf(kit, workload, "raw C encrypted").flatMap { e in
        medianOf(kit, workload, "raw C plain").map { e - $0 }
    }
    let kitRatio = extraOverFloor(workload, "encrypted", "plain")
    let rawRatio = extraOverFloor(workload, "raw C encrypted", "raw C plain")
    report += "| \(workload) | \(pages.map { String(format: "%.0f", $0) } ?? "–") "
        + "| \(microsecondsPerPage(kitExtra, pages)) | \(microsecondsPerPage(rawExtra, pages)) "
        + "| \(microsecondsPerPage(medianOf(kit, workload, "crypto floor"), pages)) "
        + "| \(microsecondsPerPage(medianOf(kit, workload, "crypto, contexts per page"), pages)) "
        + "| \(kitRatio.text) | \(rawRatio.text) |\n"
    verdicts.append(Verdict(name: "encryption extra / crypto floor, \(workload)", ratio: kitRatio, limit: 1.15,
                            atLeast: false))
}

let selectsByCache = "8 point selects by cache size"
let scansByCache = "9 repeated scans by cache size"
report += """

    ## Page cache size

    `Database.Configuration.pageCacheSize` from 2 to 64 MiB (the database is 13 MB; SQLite's default is 2,000 KiB,
    SQLCipherKit's default for encrypted connections 16 MiB). Point selects: workload 3, each measurement starting
    with the cache empty (a fresh connection). Repeated scans: workload 2 three times on one connection after one
    untimed scan. The tables above run every variant with SQLite's 2,000 KiB, as the C baseline does.

    | cache | point selects encrypted (ms) | plain (ms) | encrypted / plain | 3 scans encrypted (ms) | plain (ms) | encrypted / plain |
    | ---: | ---: | ---: | ---: | ---: | ---: | ---: |

    """
for size in cacheSizes {
    let encrypted = "encrypted, \(size) MiB", plain = "plain, \(size) MiB"
    report += "| \(size) MiB | \(milliseconds(medianOf(kit, selectsByCache, encrypted))) "
        + "| \(milliseconds(medianOf(kit, selectsByCache, plain))) "
        + "| \(ratio((kit, selectsByCache, encrypted), (kit, selectsByCache, plain)).text) "
        + "| \(milliseconds(medianOf(kit, scansByCache, encrypted))) | \(milliseconds(medianOf(kit, scansByCache, plain))) "
        + "| \(ratio((kit, scansByCache, encrypted), (kit, scansByCache, plain)).text) |\n"
}
report += """

    ## Cipher profiles

    SQLCipher 4's default (HMAC-SHA512) beside `CipherSettings.sha256` (HMAC-SHA256, PBKDF2-HMAC-SHA256), raw keys,
    SQLite's 2,000 KiB cache, side by side with plain in one process.

    | Workload | encrypted, SHA-512 (ms) | encrypted, SHA-256 (ms) | plain (ms) | SHA-512 / plain | SHA-256 / plain |
    | --- | ---: | ---: | ---: | ---: | ---: |

    """
for benchmark in ["10 full scan, SHA-256 profile", "11 point selects, SHA-256 profile"] {
    report += "| \(benchmark.dropFirst(3).replacingOccurrences(of: ", SHA-256 profile", with: "")) "
        + "| \(milliseconds(medianOf(kit, benchmark, "encrypted"))) "
        + "| \(milliseconds(medianOf(kit, benchmark, "encrypted, SHA-256"))) "
        + "| \(milliseconds(medianOf(kit, benchmark, "plain"))) "
        + "| \(ratio((kit, benchmark, "encrypted"), (kit, benchmark, "plain")).text) "
        + "| \(ratio((kit, benchmark, "encrypted, SHA-256"), (kit, benchmark, "plain")).text) |\n"
}

let open1 = "6 open one connection"
let open8 = "7 open 8 connections"
let passphraseRatio = ratio((kit, open1, "passphrase"), (kit, open1, "raw key"))
let poolRatio = ratio((kit, open8, "per-connection KDF"), (kit, open8, "KDF once (pool)"))
verdicts.append(Verdict(name: "KDF once speed-up, 8 connections", ratio: poolRatio, limit: 6, atLeast: true))
report += """

    ## Opening (milliseconds)

    | Comparison | slow | fast | slow / fast |
    | --- | ---: | ---: | ---: |
    | one connection: passphrase (PBKDF2-HMAC-SHA512 × 256,000) vs raw key | \(milliseconds(medianOf(kit, open1, "passphrase"))) | \(milliseconds(medianOf(kit, open1, "raw key"))) | \(passphraseRatio.text) |
    | 8 connections: each derives the key vs `DatabasePool` (1 writer + 7 readers) deriving it once (target ≥ 6×) | \(milliseconds(medianOf(kit, open8, "per-connection KDF"))) | \(milliseconds(medianOf(kit, open8, "KDF once (pool)"))) | \(poolRatio.text) |

    """
}

/// The Fluent section (FluentBenchmarks): the CRUD workload's parts and the concurrent reads, FluentSQLCipherDriver
/// beside fluent-sqlite-driver, and their targets. The unencrypted variant's column appears when it was measured.
@MainActor func fluentSection() {
    let unencryptedMeasured = !values(fluent, fluentCRUD, "\(fluentUnencrypted): total").isEmpty
    let ours = unencryptedMeasured ? [fluentEncrypted, fluentUnencrypted] : [fluentEncrypted]
    let unmeasured = "the driver has no unencrypted configuration: `.sqlcipher(path:key:)` needs a key, and "
        + "SQLCipherKit's `DatabasePool` has no keyless form"
    let limits = [fluentEncrypted: 1.25, fluentUnencrypted: 1.0]
    let short = [fluentEncrypted: "encrypted", fluentUnencrypted: "unencrypted"]
    let unencryptedText = unencryptedMeasured ? ", FluentSQLCipherDriver unencrypted "
        + "(`.sqlcipher(unencryptedPath:)`: the same pool, engine and settings, no key)" : ""
    report += """

        ## Fluent: FluentSQLCipherDriver and fluent-sqlite-driver

        The same Fluent model, data, queries and rounds on FluentSQLCipherDriver encrypted (`.sqlcipher(path:key:)`, a
        raw key, its default pool: one writer and 4 readers, WAL, synchronous=EXTRA, which in WAL mode syncs as FULL
        does: the WAL at every commit)\(unencryptedText) and on
        vapor/fluent-sqlite-driver 4.9.0 (`.sqlite(.file(path))`: one connection per event loop, on sqlite-nio's
        bundled SQLite with its defaults: rollback journal (DELETE), synchronous=FULL), side by side in one process,
        on a Vapor app's event loops and thread pool (one loop per core); each side's journal mode and synchronous
        setting as its connections report them are in the "Checked at run time by FluentBenchmarks" line above. The
        files on tmpfs, so that the drivers are measured and not the disk's fsync (Method). Targets from the issue:
        FluentSQLCipherDriver unencrypted ≤ 1.00 × fluent-sqlite-driver's time, encrypted ≤ 1.25 ×, concurrent reads
        faster with more readers.

        **CRUD** (milliseconds, medians; ratios per pass as above): on a fresh file, 5,000 rows created in 50 batches of
        100 (`[Model].create(on:)`), 500 filtered queries (a category, a lowest score, best first, 20 rows), 500 models
        updated one by one and 10 bulk updates, 500 models deleted one by one and 10 bulk deletes.


        """
    var header = "| Part | " + (ours + [fluentSQLite]).joined(separator: " | ")
    var rule = "| --- |" + String(repeating: " ---: |", count: ours.count + 1)
    for variant in ours {
        header += " | \(short[variant] ?? variant) / fluent-sqlite-driver (≤ \(String(format: "%.2f", limits[variant] ?? 1)))"
        rule += " ---: |"
    }
    report += header + " |\n" + rule + "\n"
    for part in fluentParts {
        var cells = (ours + [fluentSQLite]).map { milliseconds(medianOf(fluent, fluentCRUD, "\($0): \(part)")) }
        for variant in ours {
            cells.append(ratio((fluent, fluentCRUD, "\(variant): \(part)"), (fluent, fluentCRUD, "\(fluentSQLite): \(part)")).text)
        }
        report += "| \(part == "total" ? "**total**" : part) | " + cells.joined(separator: " | ") + " |\n"
    }
    if !unencryptedMeasured {
        report += "\nFluentSQLCipherDriver unencrypted: not measured (\(unmeasured)).\n"
    }
    for variant in [fluentEncrypted, fluentUnencrypted] {
        let measured = variant == fluentEncrypted || unencryptedMeasured
        verdicts.append(Verdict(
            name: "FluentSQLCipherDriver \(short[variant] ?? variant) / fluent-sqlite-driver, Fluent CRUD total",
            ratio: measured ? ratio((fluent, fluentCRUD, "\(variant): total"), (fluent, fluentCRUD, "\(fluentSQLite): total"))
                : Ratio(perPass: []),
            limit: limits[variant] ?? 1, atLeast: false, note: measured ? nil : "no unencrypted configuration"))
    }

    report += """

        **Concurrent reads** (milliseconds, medians): 1,200 filtered queries shared out among 1, 2 or 4 tasks, each with
        its own `Database` on the next event loop (as concurrent requests get), on a file of 5,000 rows; the time until
        the last task has its rows. Speed-up: the 1-task time over the N-task time, per pass (above 1: faster with
        more readers; this machine has \(ProcessInfo.processInfo.activeProcessorCount) cores).


        """
    header = "| Tasks | " + (ours + [fluentSQLite]).joined(separator: " | ")
    rule = "| ---: |" + String(repeating: " ---: |", count: ours.count + 1)
    for variant in ours {
        header += " | \(short[variant] ?? variant) / fluent-sqlite-driver"
        rule += " ---: |"
    }
    for variant in ours + [fluentSQLite] {
        header += " | \(short[variant] ?? variant) speed-up"
        rule += " ---: |"
    }
    report += header + " |\n" + rule + "\n"
    for tasks in fluentTaskCounts {
        var cells = (ours + [fluentSQLite]).map { milliseconds(medianOf(fluent, fluentReads, fluentReadsMetric($0, tasks))) }
        for variant in ours {
            cells.append(ratio((fluent, fluentReads, fluentReadsMetric(variant, tasks)),
                               (fluent, fluentReads, fluentReadsMetric(fluentSQLite, tasks))).text)
        }
        for variant in ours + [fluentSQLite] {
            cells.append(tasks == 1 ? "1" : ratio((fluent, fluentReads, fluentReadsMetric(variant, 1)),
                                                  (fluent, fluentReads, fluentReadsMetric(variant, tasks))).text)
        }
        report += "| \(tasks) | " + cells.joined(separator: " | ") + " |\n"
    }
    for tasks in fluentTaskCounts {
        verdicts.append(Verdict(
            name: "FluentSQLCipherDriver encrypted / fluent-sqlite-driver, concurrent reads, \(tasks) task\(tasks == 1 ? "" : "s")",
            ratio: ratio((fluent, fluentReads, fluentReadsMetric(fluentEncrypted, tasks)),
                         (fluent, fluentReads, fluentReadsMetric(fluentSQLite, tasks))),
            limit: 1.25, atLeast: false))
    }
    for tasks in fluentTaskCounts.dropFirst() {
        verdicts.append(Verdict(
            name: "FluentSQLCipherDriver encrypted, concurrent reads speed-up, \(tasks) tasks over 1",
            ratio: ratio((fluent, fluentReads, fluentReadsMetric(fluentEncrypted, 1)),
                         (fluent, fluentReads, fluentReadsMetric(fluentEncrypted, tasks))),
            limit: 1.0, atLeast: true, above: true))
    }
}

/// ANALYSIS.md's sections, split at its `## ` headings: the ones whose heading starts with "Fluent" belong to the
/// Fluent benchmark and follow its tables (one section per benchmark, one level down); the rest end the report.
let noteSections: [String] = {
    guard let notes = options.notes, let text = try? String(contentsOfFile: notes, encoding: .utf8) else { return [] }
    var sections: [String] = []
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        if line.hasPrefix("## ") || sections.isEmpty { sections.append("") }
        sections[sections.count - 1] += line + "\n"
    }
    return sections
}()
let fluentNotes = noteSections.filter { $0.hasPrefix("## Fluent") }
let otherNotes = noteSections.filter { !$0.hasPrefix("## Fluent") }

fluentSection()
for section in fluentNotes {
    // One level down: the benchmark's own section holds them.
    report += "\n" + section.split(separator: "\n", omittingEmptySubsequences: false)
        .map { $0.hasPrefix("#") ? "#" + $0 : String($0) }.joined(separator: "\n")
}

report += """

    ## Targets

    | Target | ratio (passes combined) | per pass | met |
    | --- | ---: | --- | --- |

    """
for verdict in verdicts {
    let perPass = verdict.ratio.perPass.map { $0.map { String(format: "%.2f", $0) } ?? "–" }.joined(separator: ", ")
    let met = verdict.ratio.pooled.map {
        verdict.above ? $0 > verdict.limit : verdict.atLeast ? $0 >= verdict.limit : $0 <= verdict.limit
    }
    let limit = (verdict.above ? "> " : verdict.atLeast ? "≥ " : "≤ ") + String(format: "%.2f", verdict.limit)
    report += "| \(verdict.name) (\(limit)) | \(verdict.ratio.pooled.map { String(format: "%.2f", $0) } ?? "–") "
        + "| \(perPass) | \(met.map { $0 ? "yes" : "**no**" } ?? (verdict.note.map { "not measured: \($0)" } ?? "–")) |\n"
}

if !options.fluentOnly, !otherNotes.isEmpty {
    report += "\n" + otherNotes.joined()
}

do {
    try report.write(toFile: options.output, atomically: true, encoding: .utf8)
    print("wrote \(options.output)")
} catch {
    fail("cannot write \(options.output): \(error)", status: 1)
}
