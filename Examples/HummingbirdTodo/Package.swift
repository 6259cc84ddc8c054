// swift-tools-version: 6.2
import PackageDescription

// A Hummingbird 2 app with an encrypted database: a todo list on FluentKit directly (no Vapor), through
// FluentSQLCipherDriver. FluentKit's `Databases` runs as a service of the app's ServiceGroup (it closes the database
// on graceful shutdown); FluentKit's `Migrator` runs before the server starts. The two encryption packages as in
// Examples/FluentDriverConsumer (by path here; the test command, Tests/Examples/run-app-examples.sh, rewrites the
// marked lines to `.package(url: "file://…", from:)` on tagged git repositories of both), plus Hummingbird and
// FluentKit; for what an operator sees, the SQLCipherKitObservability package written beside them,
// swift-prometheus (`/metrics`) and swift-otel (traces). Hummingbird's default traits (its swift-configuration
// support, full Foundation) are off: this app uses neither.
let package = Package(
    name: "HummingbirdTodo",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: "../../dist/SQLCipherKit/swiftpm/SQLCipherKit"), // SQLCIPHERKIT_DEPENDENCY
        .package(path: "../../dist/SQLCipherKit/swiftpm/FluentSQLCipherDriver"), // DRIVER_DEPENDENCY
        .package(path: "../../dist/SQLCipherKit/swiftpm/SQLCipherKitObservability"), // OBSERVABILITY_DEPENDENCY
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/vapor/fluent-kit", from: "1.57.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Traces over OTLP/HTTP only (its gRPC exporter, the default trait beside it, is not built).
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "HummingbirdTodo",
            dependencies: [
                .product(name: "SQLCipherKit", package: "SQLCipherKit"),
                .product(name: "FluentSQLCipherDriver", package: "FluentSQLCipherDriver"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "SQLCipherKitObservability", package: "SQLCipherKitObservability"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "hummingbird-todo",
            dependencies: ["HummingbirdTodo", .product(name: "Hummingbird", package: "hummingbird")]
        ),
        .testTarget(
            name: "HummingbirdTodoTests",
            dependencies: [
                "HummingbirdTodo",
                .product(name: "SQLCipherKit", package: "SQLCipherKit"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "SQLCipherKitObservability", package: "SQLCipherKitObservability"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
