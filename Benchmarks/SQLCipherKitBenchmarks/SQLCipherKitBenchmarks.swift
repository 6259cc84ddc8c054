// SQLCipherKit's benchmarks (package-benchmark runs each one below in a process of its own): the four workloads,
// each with SQLCipherKit encrypted and plain and the same loops in C against the same engine, side by side in one
// process; the same workloads with cipher_memory_security on (which cannot be turned off again in a process);
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
        register(workload.rawValue, variants.standard(workload))
    }
    // Informational: every workload encrypted, with memory security, in a process of its own. Fewer rounds: each
    // one runs all four workloads.
    register("5 memory security", Workload.allCases.map { variants.kit($0, .memorySecurity, name: $0.rawValue) },
             rounds: max(3, SideBySide.rounds / 2))

    // Informational: workload 3 again, with a page cache that holds the database (each measurement still starts
    // with it empty: a fresh connection).
    register("8 point selects, 32 MiB cache", [variants.pointSelectsWithLargeCache(.encrypted),
                                               variants.pointSelectsWithLargeCache(.plain)])

    let opening = OpeningVariants(scratch: process.scratch)
    register("6 open one connection", opening.oneConnection)
    register("7 open 8 connections", opening.pool)
}
