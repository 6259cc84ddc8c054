// swift-tools-version: 6.1
import Foundation
import PackageDescription

// SQLCipherKitObservability: SQLCipherKit's DatabaseObserver mapped to swift-log, swift-metrics and
// swift-distributed-tracing, in a package of its own so that SQLCipherKit itself depends on none of them.
//
// For development this package depends on SQLCipherKit by path: the repository this folder lives in (build the
// engine first: ./build-sqlcipher.sh). A path dependency is named by its folder, so the name is computed here.
let sqlCipherKitRoot = URL(fileURLWithPath: Context.packageDirectory + "/../..").standardizedFileURL
let sqlCipherKitPackage = sqlCipherKitRoot.lastPathComponent

let package = Package(
    name: "SQLCipherKitObservability",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "SQLCipherKitObservability", targets: ["SQLCipherKitObservability"]),
    ],
    dependencies: [
        .package(path: sqlCipherKitRoot.path),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.0"),
    ],
    targets: [
        .target(
            name: "SQLCipherKitObservability",
            dependencies: [
                .product(name: "SQLCipherKit", package: sqlCipherKitPackage),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .testTarget(
            name: "SQLCipherKitObservabilityTests",
            dependencies: [
                "SQLCipherKitObservability",
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
