// swift-tools-version: 6.2
import Foundation
import PackageDescription

// The load benchmark (Benchmarks/Load/run.sh): Examples/VaporTodo's app, served in release mode on three
// databases and driven by wrk over the loopback. A package of its own, so that neither Vapor nor
// fluent-sqlite-driver is a dependency of SQLCipherKit, of its tests or of the other benchmarks.
//
// The app's code is VaporTodo's own: the target VaporTodo below is Sources/VaporTodo, a symbolic link to
// Examples/VaporTodo/Sources/VaporTodo (its model, migration, routes and configure functions, compiled here, not
// copied). It cannot depend on the VaporTodo package itself: that manifest names the release packages under dist/
// (whose driver names SQLCipherKit by its release URL), while a benchmark of this checkout needs this checkout's
// SQLCipherKit and driver by path, as Benchmarks/Package.swift does.
//
// Both engines live in the server's executable: SQLCipher's defines sqlite3_*, sqlite-nio's bundled SQLite
// sqlite_nio_sqlite3_*, so neither can resolve to the other; the server proves at boot which engine it runs on.
let sqlCipherKitRoot = URL(fileURLWithPath: Context.packageDirectory + "/../..").standardizedFileURL
let sqlCipherKitPackage = sqlCipherKitRoot.lastPathComponent

let package = Package(
    name: "SQLCipherKitLoad",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: sqlCipherKitRoot.path),
        .package(name: "FluentSQLCipherDriver", path: "../../Drivers/FluentSQLCipherDriver"),
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),
        .package(url: "https://github.com/vapor/fluent", from: "4.13.0"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver", exact: "4.9.0"),
        // What VaporTodo reports (its TodoObservability and TodoTelemetry): this checkout's bridge by path,
        // swift-prometheus and swift-otel (OTLP/HTTP only), as Examples/VaporTodo names them.
        .package(name: "SQLCipherKitObservability", path: "../../Drivers/SQLCipherKitObservability"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // Examples/VaporTodo/Sources/VaporTodo through the link Sources/VaporTodo.
        .target(
            name: "VaporTodo",
            dependencies: [
                .product(name: "SQLCipherKit", package: sqlCipherKitPackage),
                .product(name: "FluentSQLCipherDriver", package: "FluentSQLCipherDriver"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Fluent", package: "fluent"),
                .product(name: "SQLCipherKitObservability", package: "SQLCipherKitObservability"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The server: VaporTodo's configure on the database TODO_LOAD_DATABASE names, seeded at boot.
        .executableTarget(
            name: "todo-load-server",
            dependencies: [
                "VaporTodo",
                .product(name: "FluentSQLCipherDriver", package: "FluentSQLCipherDriver"),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
                .product(name: "SQLCipherKit", package: sqlCipherKitPackage),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Fluent", package: "fluent"),
            ]
        ),
        // One connection's async writes, grouped or not, for lone-writes.sh (instructions per write under callgrind).
        .executableTarget(
            name: "lone-writes",
            dependencies: [.product(name: "SQLCipherKit", package: sqlCipherKitPackage)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
