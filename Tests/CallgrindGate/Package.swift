// swift-tools-version: 6.1
import PackageDescription

// The workload of the callgrind gate (Tests/PerformanceGateTests): the same small insert / scan / point-select
// loop through SQLCipherKit's fast path and in C, on the same engine, in one executable. A package of its own so
// that the gate test can build it in release mode (the test bundle itself is a debug build) without touching the
// main package's build folder.
let package = Package(
    name: "CallgrindGate",
    dependencies: [.package(name: "SQLCipherKit", path: "../..")],
    targets: [
        .executableTarget(name: "GateWorkload",
                          dependencies: [.product(name: "SQLCipherKit", package: "SQLCipherKit"), "CGateLoops"]),
        // Benchmarks/Support/RawLoops/raw_loops.inc (the benchmarks' C baseline) against the engine's sqlite3.h.
        .target(name: "CGateLoops"),
    ],
    swiftLanguageModes: [.v6]
)
