// swift-tools-version: 6.1
import PackageDescription

// build-sqlcipher.sh compiles the pinned SQLCipher into this folder (gitignored). SwiftPM builds of this
// package (tests, the CLI) link that engine from here; the distributed artifact in dist/ carries it inside
// libSQLCipherKit.a instead, so downstream consumers need neither this path nor any flag.
// Tests/Sanitized/run-sanitized.sh points SQLCIPHERKIT_ENGINE_LIB_DIR at the same engine built with AddressSanitizer
// and UndefinedBehaviorSanitizer, for its own build folder (.build-sanitized).
let engineLibraryDirectory = Context.environment["SQLCIPHERKIT_ENGINE_LIB_DIR"]
    ?? Context.packageDirectory + "/Vendor/build/lib"

let package = Package(
    name: "SQLCipherKit",
    products: [
        .library(name: "SQLCipherKit", type: .static, targets: ["SQLCipherKit"]),
        .executable(name: "sqlcipherkit", targets: ["SQLCipherKitCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .systemLibrary(name: "CSQLCipher", path: "Sources/CSQLCipher"),
        .target(
            name: "SQLCipherKit",
            dependencies: ["CSQLCipher"],
            linkerSettings: [
                .unsafeFlags(["-L", engineLibraryDirectory]),
                .linkedLibrary("sqlcipher"),
            ]
        ),
        // The command-line tool: a thin layer over SQLCipherKit, with no SQL or keying logic of its own.
        .executableTarget(
            name: "SQLCipherKitCLI",
            dependencies: ["SQLCipherKit", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // The child process the reliability tests kill, starve of disk space and inspect; a test tool, not a product
        // (Sources/ holds only what ships).
        .executableTarget(name: "ReliabilityHelper", dependencies: ["SQLCipherKit", "ReliabilitySupport", "PowerLossVFS"],
                          path: "Tests/ReliabilityHelper"),
        // The power-cut simulator the helper's power-loss workload runs on (a SQLite VFS shim, in C); not a product.
        .target(name: "PowerLossVFS", path: "Tests/Support/PowerLossVFS"),
        // What the helper and the tests share (the seeded generator, the crash workload and its checker); not a
        // product.
        .target(name: "ReliabilitySupport", dependencies: ["SQLCipherKit"], path: "Tests/ReliabilitySupport"),
        // Depends on ReliabilityHelper and SQLCipherKitCLI so that SwiftPM builds both next to the test bundle
        // (the multi-process test runs them side by side).
        .testTarget(name: "SQLCipherKitTests",
                    dependencies: ["SQLCipherKit", "ReliabilityHelper", "ReliabilitySupport", "ProcessTestSupport",
                                   "SQLCipherKitCLI"]),
        // python/ holds the SBOM validator the tests run in a virtual environment of their own.
        .testTarget(name: "BuildPipelineTests", dependencies: ["ProcessTestSupport"], exclude: ["python"]),
        // Spawns the built sqlcipherkit executable (the dependency makes SwiftPM build it first).
        .testTarget(name: "CLITests", dependencies: ["SQLCipherKit", "SQLCipherKitCLI", "ProcessTestSupport"]),
        // SQLCipherKit / C in instructions under callgrind (builds and runs Tests/CallgrindGate, a package of its
        // own, in release mode).
        .testTarget(name: "PerformanceGateTests", dependencies: ["ProcessTestSupport"]),
        // What the test targets share: running child processes (and the built CLI), the repository root, the temporary
        // folder, reading and writing files, and the pin (Vendor/build/pin.json).
        .target(name: "ProcessTestSupport", path: "Tests/ProcessTestSupport"),
        // Files exchanged with an independently built SQLCipher (the sqlcipher3 wheel in a virtual environment
        // the tests create); the CLI dependency builds sqlcipherkit next to the test bundle. python/ holds the
        // other side's script, run from the source tree.
        .testTarget(name: "InteropTests", dependencies: ["SQLCipherKit", "SQLCipherKitCLI", "ProcessTestSupport"],
                    exclude: ["python"]),
    ],
    swiftLanguageModes: [.v6]
)
