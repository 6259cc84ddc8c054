// swift-tools-version: 6.2
import PackageDescription

// A Vapor 4 app with an encrypted database: a todo list on Fluent, through FluentSQLCipherDriver. Two `.package`
// lines for the encryption, the release package and the FluentSQLCipherDriver package build-sqlcipher.sh writes
// beside it (dist/SQLCipherKit/swiftpm/), here by path, plus Vapor and its Fluent integration; and for what an
// operator sees, the SQLCipherKitObservability package written beside them, swift-prometheus (`/metrics`) and
// swift-otel (traces). As for Examples/FluentDriverConsumer, the path form resolves only once
// SQLCIPHERKIT_PACKAGE_URL serves the release package; the test command (Tests/Examples/run-app-examples.sh) builds it
// against tagged git repositories of all three with `.package(url: "file://…", from:)`.
let package = Package(
    name: "VaporTodo",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: "../../dist/SQLCipherKit/swiftpm/SQLCipherKit"), // SQLCIPHERKIT_DEPENDENCY
        .package(path: "../../dist/SQLCipherKit/swiftpm/FluentSQLCipherDriver"), // DRIVER_DEPENDENCY
        .package(path: "../../dist/SQLCipherKit/swiftpm/SQLCipherKitObservability"), // OBSERVABILITY_DEPENDENCY
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),
        .package(url: "https://github.com/vapor/fluent", from: "4.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Traces over OTLP/HTTP only (its gRPC exporter, the default trait beside it, is not built).
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "VaporTodo",
            dependencies: [
                .product(name: "SQLCipherKit", package: "SQLCipherKit"),
                .product(name: "FluentSQLCipherDriver", package: "FluentSQLCipherDriver"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Fluent", package: "fluent"),
                .product(name: "SQLCipherKitObservability", package: "SQLCipherKitObservability"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "vapor-todo",
            dependencies: [
                "VaporTodo", .product(name: "Vapor", package: "vapor"), .product(name: "OTel", package: "swift-otel"),
            ]
        ),
        .testTarget(
            name: "VaporTodoTests",
            dependencies: [
                "VaporTodo",
                .product(name: "SQLCipherKit", package: "SQLCipherKit"),
                .product(name: "VaporTesting", package: "vapor"),
                .product(name: "SQLCipherKitObservability", package: "SQLCipherKitObservability"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
