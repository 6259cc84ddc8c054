// swift-tools-version: 6.1
import PackageDescription

// SQLCipherKit's benchmarks, a package of their own so that neither package-benchmark nor GRDB is a dependency of
// SQLCipherKit or part of its build and tests. Run them with Benchmarks/run.sh (docs/RELIABILITY.md, "Load and speed"; BENCHMARKS.md).
//
// package-benchmark runs the executable targets whose folder sits in a folder named Benchmarks, i.e. the ones
// directly in this folder; each benchmark in a process of its own. Support/ holds what they share.
let benchmarkPlugin: [Target.PluginUsage] = [.plugin(name: "BenchmarkPlugin", package: "benchmark")]

let package = Package(
    name: "SQLCipherKitBenchmarks",
    dependencies: [
        // This checkout's SQLCipherKit. A path dependency keeps its linker flags (-L Vendor/build/lib), which SwiftPM
        // refuses from a dependency by URL; `name:` lets the targets below name it whatever the checkout's folder is.
        .package(name: "SQLCipherKit", path: ".."),
        // package-benchmark, under the repository's current name (its plugin warns about the legacy
        // "package-benchmark" identifier); the MallocInterposer trait is what its 1.38 manifest needs here.
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        // The Fluent benchmark: this checkout's driver (by path, as SQLCipherKit) beside vapor/fluent-sqlite-driver
        // on sqlite-nio's bundled SQLite. They share one executable: sqlite-nio prefixes every SQLite symbol
        // (sqlite_nio_sqlite3_*), so its engine and SQLCipher's cannot resolve to each other (FluentBenchmarks
        // proves it at run time).
        .package(name: "FluentSQLCipherDriver", path: "../Drivers/FluentSQLCipherDriver"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver", exact: "4.9.0"),
        .package(url: "https://github.com/vapor/fluent-kit", from: "1.57.0"),
        .package(url: "https://github.com/vapor/sql-kit", from: "3.36.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
    ],
    targets: [
        // SQLCipherKit encrypted and plain, the C baseline on the same engine, memory security, opening.
        .executableTarget(
            name: "SQLCipherKitBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport", "SQLCipherKitWorkloads",
            ],
            path: "SQLCipherKitBenchmarks",
            plugins: benchmarkPlugin
        ),
        // GRDB and the C baseline on the system's SQLite. Its own executable: SQLCipherKit's static engine defines
        // every sqlite3_* symbol, and in one executable those definitions would win over the system libsqlite3,
        // so GRDB would silently run on SQLCipher. It proves at run time which engine it runs on.
        .executableTarget(
            name: "GRDBBenchmarks",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSupport", "CRawSystemSQLite",
            ],
            path: "GRDBBenchmarks",
            plugins: benchmarkPlugin
        ),
        // A Fluent CRUD workload and concurrent reads on FluentSQLCipherDriver (encrypted) and fluent-sqlite-driver,
        // side by side in one process.
        .executableTarget(
            name: "FluentBenchmarks",
            dependencies: [.product(name: "Benchmark", package: "benchmark"), "BenchmarkSupport", "FluentWorkloads"],
            path: "FluentBenchmarks",
            plugins: benchmarkPlugin
        ),
        // The Fluent model, data, workload phases and the two drivers' set-up and engine proofs.
        .target(
            name: "FluentWorkloads",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "FluentSQLCipherDriver", package: "FluentSQLCipherDriver"),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SQLCipherKit", package: "SQLCipherKit"),
            ],
            path: "Support/FluentWorkloads"
        ),
        // Rows, SQL, side-by-side rounds and the C baseline's driver, shared by both benchmark executables.
        .target(
            name: "BenchmarkSupport",
            dependencies: [.product(name: "Benchmark", package: "benchmark")],
            path: "Support/BenchmarkSupport"
        ),
        // The SQLCipherKit side: its workloads and variants, the opening comparisons, the engine proof.
        .target(
            name: "SQLCipherKitWorkloads",
            dependencies: [.product(name: "SQLCipherKit", package: "SQLCipherKit"), "BenchmarkSupport", "CRawSQLCipher"],
            path: "Support/SQLCipherKitWorkloads"
        ),
        // Runs one variant of one workload once, for valgrind (BENCHMARKS.md, "Profiles").
        .executableTarget(name: "WorkloadProfile", dependencies: ["SQLCipherKitWorkloads", "BenchmarkSupport"],
                          path: "Support/WorkloadProfile"),
        // Support/RawLoops/raw_loops.inc compiled against the engine SQLCipherKit links (the executable links
        // libsqlcipher.a through SQLCipherKit).
        .target(name: "CRawSQLCipher", path: "Support/CRawSQLCipher"),
        // The same file compiled against the system's SQLite (libsqlite3-dev), the engine GRDB runs on.
        .target(name: "CRawSystemSQLite", path: "Support/CRawSystemSQLite", linkerSettings: [.linkedLibrary("sqlite3")]),
        // Turns the exported samples of a run into BENCHMARKS.md (run.sh calls it).
        .executableTarget(name: "BenchmarkReport", path: "Support/BenchmarkReport"),
    ],
    swiftLanguageModes: [.v6]
)
