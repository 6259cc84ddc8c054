import Foundation
import ProcessTestSupport
import Testing

/// SQLCipherKit's cost over C, gated in instructions: the same insert / scan / point-select workload
/// (Tests/CallgrindGate) through SQLCipherKit's fast path and through the benchmarks' C loops, on the same engine,
/// each run once under `valgrind --tool=callgrind`, counting only the measured part. Instruction counts do not
/// depend on the machine's load (the same binary and input give the same count, run after run), so this is a
/// regression test that cannot flake, not a timed one. BENCHMARKS.md has the full-size workloads.
@Suite("Callgrind gate: SQLCipherKit / C in instructions", .serialized, .timeLimit(.minutes(20)))
struct CallgrindGateTests {
    /// The ratios this code reached (SQLCipherKit / C: 1.030 plain, 1.021 encrypted on this workload), plus a
    /// margin of 0.02 for toolchain and engine updates. A regression of about 60 instructions per row (insert,
    /// scan and select together) crosses it; the argument-array path gives 1.30 plain, 1.20 encrypted.
    static let budget = (plain: 1.05, encrypted: 1.04)

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

    /// The instructions `binary side protection` executes in its measured part.
    static func instructions(_ binary: String, _ side: String, _ protection: String, folder: String) throws -> Int {
        let valgrind = try #require(which("valgrind"),
                                    "valgrind is missing: ./build-sqlcipher.sh --test-tools installs it")
        let result = try run(valgrind, ["--tool=callgrind", "--callgrind-out-file=\(folder)/\(side)-\(protection).out",
                                        "--toggle-collect=*gateMeasured*", binary, side, protection, folder],
                             // Swift's per-process hash seed would otherwise vary dictionary probes a little.
                             extra: ["SWIFT_DETERMINISTIC_HASHING": "1"])
        try #require(result.status == 0 && result.stdout.contains("ok \(side) \(protection)"), "\(result)")
        let line = try #require(result.stderr.split(separator: "\n").first { $0.contains("Collected : ") },
                                "no count in valgrind's output:\n\(result)")
        return try #require(Int(line.split(separator: " ").last ?? ""), "unreadable count: \(line)")
    }

    @Test("SQLCipherKit's fast path stays within budget of the same C loop, plain and encrypted")
    func instructionRatio() throws {
        let temporary = try TemporaryDirectory(prefix: "sqlcipherkit-callgrind")
        defer { withExtendedLifetime(temporary) {} }
        let folder = temporary.path
        let binary = try Self.buildWorkload(into: folder)
        for (protection, budget) in [("plain", Self.budget.plain), ("encrypted", Self.budget.encrypted)] {
            let kit = try Self.instructions(binary, "kit", protection, folder: folder)
            let c = try Self.instructions(binary, "c", protection, folder: folder)
            let ratio = Double(kit) / Double(c)
            print("callgrind gate, \(protection): SQLCipherKit \(kit), C \(c) instructions, ratio "
                + String(format: "%.4f", ratio) + " (budget \(budget))")
            #expect(ratio <= budget, """
                SQLCipherKit / C on the \(protection) workload is \(String(format: "%.4f", ratio)) (\(kit) vs \(c) \
                instructions), over the budget of \(budget): profile it with Benchmarks/profile.sh
                """)
        }
    }
}
