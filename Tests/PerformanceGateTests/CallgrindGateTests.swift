import Foundation
import ProcessTestSupport
import Testing

/// SQLCipherKit's cost over C, gated in instructions: the same insert / scan / point-select workload
/// (Tests/CallgrindGate) through SQLCipherKit's fast path and through the benchmarks' C loops, on the same engine,
/// each run once under `valgrind --tool=callgrind`, counting only the measured part. Instruction counts do not
/// depend on the machine's load (the same binary and input give the same count, run after run), so this is a
/// regression test that cannot flake, not a timed one. BENCHMARKS.md has the full-size workloads.
@Suite("Callgrind gate: SQLCipherKit / C in instructions", .serialized,
       .hangGuard(.minutes(20), hang: "a workload that never ends under valgrind"))
struct CallgrindGateTests {
    /// The parts of the workload (GateWorkload's `gatePart…` functions), each gated on its own so that a saving in
    /// one part (transactions prepare BEGIN and COMMIT once, C's loop does not) cannot hide a regression in another.
    static let parts = ["Insert", "Scan", "Selects", "Transactions"]

    /// The ratios this code reached per part (SQLCipherKit / C on this workload: plain 1.052, 1.061, 1.014, 0.883;
    /// encrypted 1.025, 1.061, 1.015, 0.997), plus a margin of 0.02 for toolchain and engine updates. The
    /// argument-array binding path gives 1.65 plain and 1.31 encrypted on the inserts; `execute(_:)` building each
    /// statement's text with Foundation's trimming (BEGIN and COMMIT prepared every time) gave 3.42 plain and 1.07
    /// encrypted on the transactions.
    static let budgets: [String: [String: Double]] = [
        "plain": ["Insert": 1.07, "Scan": 1.08, "Selects": 1.035, "Transactions": 0.91],
        "encrypted": ["Insert": 1.045, "Scan": 1.08, "Selects": 1.035, "Transactions": 1.02],
    ]

    static let gatePackage = Repository.path("Tests/CallgrindGate")

    /// Runs `executable` with this process's environment plus `extra`.
    static func run(_ executable: String, _ arguments: [String], extra: [String: String] = [:]) throws
        -> ProcessResult {
        var environment = ProcessInfo.processInfo.environment
        environment.merge(extra) { _, new in new }
        return try runProcess(executable, arguments, environment: environment, timeout: 900)
    }

    /// The path of `tool` on PATH, or nil.
    static func which(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(tool)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Builds the workload in release mode and returns a copy without DWARF (valgrind 3.19 cannot read the
    /// toolchain's DWARF 5) in `folder`.
    static func buildWorkload(into folder: String) throws -> String {
        let build = try run("/usr/bin/env", ["swift", "build", "-c", "release", "--package-path", gatePackage,
                                             "--product", "GateWorkload"])
        try #require(build.status == 0, "the gate workload did not build:\n\(build)")
        let binary = folder + "/GateWorkload"
        try FileManager.default.copyItem(atPath: gatePackage + "/.build/release/GateWorkload", toPath: binary)
        let strip = try run("/usr/bin/env", ["strip", "-g", binary])
        try #require(strip.status == 0, "\(strip)")
        return binary
    }

    /// Runs `binary side protection folder` under callgrind, counting `gateMeasured` only; returns its standard
    /// output and the inclusive instruction count of every function whose line contains one of `symbols` (keyed
    /// by that symbol: a function that runs once, or the sum over its calls).
    static func inclusiveCounts(_ binary: String, _ side: String, _ protection: String, folder: String,
                                symbols: [String]) throws -> (stdout: String, counts: [String: Int]) {
        let valgrind = try #require(which("valgrind"),
                                    "valgrind is missing: ./build-sqlcipher.sh --test-tools installs it")
        let output = "\(folder)/\(side)-\(protection).out"
        let result = try run(valgrind, ["--tool=callgrind", "--callgrind-out-file=\(output)",
                                        "--toggle-collect=*gateMeasured*", binary, side, protection, folder],
                             // Swift's per-process hash seed would otherwise vary dictionary probes a little.
                             extra: ["SWIFT_DETERMINISTIC_HASHING": "1"])
        try #require(result.status == 0 && result.stdout.contains("ok \(side) \(protection)"), "\(result)")
        let annotate = try run("/usr/bin/env", ["callgrind_annotate", "--inclusive=yes", "--threshold=100", output])
        try #require(annotate.status == 0, "\(annotate)")
        var counts: [String: Int] = [:]
        for line in annotate.stdout.split(separator: "\n") {
            guard let symbol = symbols.first(where: { line.contains($0) }),
                  let number = line.split(separator: " ").first.map({ $0.replacingOccurrences(of: ",", with: "") }),
                  let count = Int(number) else { continue }
            counts[symbol] = count
        }
        try #require(Set(counts.keys) == Set(symbols), "not every function counted in:\n\(annotate.stdout.prefix(4000))")
        return (result.stdout, counts)
    }

    /// The instructions `binary side protection` executes in each part of its measured part (each part function
    /// runs once, so its inclusive count is the part's).
    static func instructions(_ binary: String, _ side: String, _ protection: String, folder: String) throws
        -> [String: Int] {
        let symbols = parts.map { "gatePart\($0)yy" }
        let counts = try inclusiveCounts(binary, side, protection, folder: folder, symbols: symbols).counts
        return Dictionary(uniqueKeysWithValues: zip(parts, symbols).map { ($0, counts[$1] ?? 0) })
    }

    @Test("SQLCipherKit's fast path stays within budget of the same C loop, part by part, plain and encrypted")
    func instructionRatio() throws {
        let temporary = try TemporaryDirectory(prefix: "sqlcipherkit-callgrind")
        defer { withExtendedLifetime(temporary) {} }
        let folder = temporary.path
        let binary = try Self.buildWorkload(into: folder)
        for protection in ["plain", "encrypted"] {
            let kit = try Self.instructions(binary, "kit", protection, folder: folder)
            let c = try Self.instructions(binary, "c", protection, folder: folder)
            for part in Self.parts {
                let (kitCount, cCount) = (kit[part] ?? 0, c[part] ?? 1)
                let ratio = Double(kitCount) / Double(cCount)
                let budget = Self.budgets[protection]?[part] ?? 0
                print("callgrind gate, \(protection), \(part): SQLCipherKit \(kitCount), C \(cCount) instructions, "
                    + "ratio " + String(format: "%.4f", ratio) + " (budget \(budget))")
                #expect(ratio <= budget, """
                    SQLCipherKit / C on the \(protection) \(part.lowercased()) part is \(String(format: "%.4f", ratio)) \
                    (\(kitCount) vs \(cCount) instructions), over the budget of \(budget): profile it with \
                    Benchmarks/profile.sh
                    """)
            }
        }
    }

    /// SQLCipher's page codec (`sqlite3Codec`, everything it calls included) per page decrypted, over the crypto
    /// floor per page: HMAC-SHA512 + AES-256-CBC through libcrypto with contexts and keys set up once
    /// (Benchmarks/Support/RawLoops/crypto_floor.inc). Reached with SQLCipherKit's provider
    /// (BuildSupport/engine/sqlcipherkit_provider.c): 1.074 on this workload (98,108 against 91,364 instructions a
    /// page: the HMAC keyed for every page, two more SHA-512 blocks; SQLCipher's own copies, masking and constant-time
    /// comparison), plus a margin of 0.02. SQLCipher's reference provider, which fetches, allocates and keys
    /// libcrypto's contexts for every page, gives 1.254 (114,636 a page); this provider's first form, through EVP's
    /// digest and cipher calls, gave 1.118.
    static let codecBudget = 1.095

    @Test("SQLCipher's page codec costs at most the budget over the crypto floor, per page, in instructions")
    func codecOverCryptoFloor() throws {
        let temporary = try TemporaryDirectory(prefix: "sqlcipherkit-callgrind")
        defer { withExtendedLifetime(temporary) {} }
        let binary = try Self.buildWorkload(into: temporary.path)
        let codec = ":sqlite3Codec ", floor = "gatePartCryptoFlooryy"
        let (stdout, counts) = try Self.inclusiveCounts(binary, "codec", "encrypted", folder: temporary.path,
                                                        symbols: [codec, floor])
        let pages = try #require(stdout.split(separator: " ").compactMap { Int($0) }.first, "no page count in \(stdout)")
        try #require(pages >= 50, "the cold scan decrypted only \(pages) pages")
        let (codecPerPage, floorPerPage) = (Double(counts[codec] ?? 0) / Double(pages), Double(counts[floor] ?? 1) / Double(pages))
        let ratio = codecPerPage / floorPerPage
        print("callgrind gate, codec: \(pages) pages, codec \(Int(codecPerPage)) instructions a page, crypto floor "
            + "\(Int(floorPerPage)), ratio " + String(format: "%.4f", ratio) + " (budget \(Self.codecBudget))")
        #expect(ratio <= Self.codecBudget, """
            SQLCipher's codec costs \(String(format: "%.4f", ratio))x the crypto floor per page (\(Int(codecPerPage)) vs \
            \(Int(floorPerPage)) instructions), over the budget of \(Self.codecBudget): is SQLCipherKit's provider \
            (-DSQLCIPHER_CRYPTO_CUSTOM in Vendor/sqlcipher.pin) still the one compiled in?
            """)
    }
}
