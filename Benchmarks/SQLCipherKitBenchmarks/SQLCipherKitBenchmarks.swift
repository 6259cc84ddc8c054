// SQLCipherKit's benchmarks (package-benchmark runs each one below in a process of its own): the four workloads,
// each with SQLCipherKit encrypted and plain and the same loops in C against the same engine, side by side in one
// process, and beside the reads the crypto floor of the pages they decrypt; the same workloads with cipher_memory_security on (which cannot be turned off again in a process);
// point selects with a page cache that holds the database; and opening with a passphrase versus a raw key, and 8 connections versus a pool. Benchmarks/run.sh runs them
// with the GRDB benchmarks and writes BENCHMARKS.md.
import Benchmark
import BenchmarkSupport
import SQLCipherKitWorkloads

let benchmarks: @Sendable () -> Void = {
    let process = BenchmarkProcess()
    let variants = Variants(process: process)

    func register(_ name: String, _ variants: [Variant], rounds: Int = SideBySide.rounds) {
        Benchmark(name, configuration: SideBySide.configuration(variants, rounds: rounds)) { benchmark in
            try SideBySide.round(benchmark, variants)
        } setup: {
            try process.proveEngine()
        } teardown: {
            process.finish()
        }
    }

    for workload in Workload.allCases {
        register(workload.rawValue, variants.measured(workload))
    }
    // Informational: every workload encrypted, with memory security, in a process of its own. Fewer rounds: each
    // one runs all four workloads.
    register("5 memory security", Workload.allCases.map { variants.kit($0, .memorySecurity, name: $0.rawValue) },
             rounds: max(3, SideBySide.rounds / 2))

    // The page-cache curve: workload 3 (each measurement starting with the cache empty) and repeated scans, with
    // caches of 2 to 64 MiB, encrypted and plain. Fewer rounds: each round runs 10 variants.
    register("8 point selects by cache size", Variants.cacheSizes.flatMap { size in
        [variants.pointSelectsWithCache(.encrypted, mebibytes: size), variants.pointSelectsWithCache(.plain, mebibytes: size)]
    }, rounds: max(3, SideBySide.rounds / 2))
    register("9 repeated scans by cache size", Variants.cacheSizes.flatMap { size in
        [variants.repeatedScansWithCache(.encrypted, mebibytes: size),
         variants.repeatedScansWithCache(.plain, mebibytes: size)]
    }, rounds: max(3, SideBySide.rounds / 2))
    // The SHA-256 cipher profile beside SQLCipher 4's default, on the read workloads.
    for workload in [Workload.fullScan, .pointSelects] {
        register("\(workload == .fullScan ? "10" : "11") \(workload.rawValue.dropFirst(2)), SHA-256 profile",
                 [variants.kit(workload, .encrypted), variants.kit(workload, .encryptedSHA256, name: "encrypted, SHA-256"),
                  variants.kit(workload, .plain)])
    }

    let opening = OpeningVariants(scratch: process.scratch)
    register("6 open one connection", opening.oneConnection)
    register("7 open 8 connections", opening.pool)
}
