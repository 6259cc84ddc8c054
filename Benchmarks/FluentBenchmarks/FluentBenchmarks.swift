// A Fluent CRUD workload and concurrent reads on FluentSQLCipherDriver (encrypted) and vapor/fluent-sqlite-driver
// 4.9.0, side by side in one process (package-benchmark runs each benchmark below in a process of its own). Both
// engines live in this executable: SQLCipher's defines sqlite3_*, sqlite-nio's bundled SQLite sqlite_nio_sqlite3_*,
// so neither can resolve to the other; the set-up of every benchmark proves at run time which engine each variant
// runs on (FluentEngineProof) and every measurement checks the file it wrote.
import Benchmark
import BenchmarkSupport
import Foundation
import FluentWorkloads

/// The state of one benchmark process, created when a benchmark starts.
actor FluentProcess {
    private var folder: ScratchFolder?
    private var generated: FluentData?
    private var fixtures: [FluentDriverVariant: OpenFluentDatabase] = [:]
    private var proven = false

    /// The folder of the database files: `FLUENT_BENCHMARK_DIR`, else /dev/shm (a tmpfs: fsync costs nothing, so
    /// the drivers are measured, not the disk; BENCHMARKS.md, Method), else TMPDIR's folder.
    func scratch() throws -> ScratchFolder {
        if let folder { return folder }
        let environment = ProcessInfo.processInfo.environment["FLUENT_BENCHMARK_DIR"]
        let base = environment ?? (FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : nil)
        let created = try ScratchFolder("fluent", in: base)
        folder = created
        return created
    }

    var data: FluentData {
        if let generated { return generated }
        let created = FluentData()
        generated = created
        return created
    }

    func fixture(_ variant: FluentDriverVariant) async throws -> OpenFluentDatabase {
        if let open = fixtures[variant] { return open }
        let open = try await FluentConcurrentReads.fixture(variant, data, folder: try scratch())
        fixtures[variant] = open
        return open
    }

    func proveEngines() async throws {
        guard !proven else { return }
        let facts = try await FluentEngineProof.prove(in: try scratch())
        EngineFacts.record("FluentBenchmarks", facts)
        proven = true
    }

    func finish() async {
        for open in fixtures.values { await open.shutdown() }
        fixtures = [:]
        folder?.remove()
        folder = nil
    }
}

let benchmarks: @Sendable () -> Void = {
    let process = FluentProcess()

    func register(_ name: String, _ variants: [AsyncVariant]) {
        Benchmark(name, configuration: SideBySide.configuration(variants)) { benchmark in
            try await SideBySide.round(benchmark, variants)
        } setup: {
            try await process.proveEngines()
        } teardown: {
            await process.finish()
        }
    }

    register("1 Fluent CRUD", FluentDriverVariant.allCases.map { variant in
        AsyncVariant(variant.rawValue, parts: FluentCRUD.parts) {
            try await FluentCRUD.run(variant, await process.data, folder: try await process.scratch())
        }
    })
    register("2 Fluent concurrent reads", FluentDriverVariant.allCases.flatMap { variant in
        FluentConcurrentReads.taskCounts.map { tasks in
            AsyncVariant(FluentConcurrentReads.name(variant, tasks: tasks)) {
                [try await FluentConcurrentReads.run(try await process.fixture(variant), await process.data, tasks: tasks)]
            }
        }
    })
}
