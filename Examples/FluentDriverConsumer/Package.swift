// swift-tools-version: 6.1
import PackageDescription

// A downstream app on FluentKit with an encrypted database: two `.package` lines, the release package and the
// FluentSQLCipherDriver package build-sqlcipher.sh writes beside it (dist/SQLCipherKit/swiftpm/), here by path.
// The tests build it against tagged git repositories of both with `.package(url: "file://…", from:)` lines.
let package = Package(
    name: "FluentDriverConsumer",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: "../../dist/SQLCipherKit/swiftpm/SQLCipherKit"), // SQLCIPHERKIT_DEPENDENCY
        .package(path: "../../dist/SQLCipherKit/swiftpm/FluentSQLCipherDriver"), // DRIVER_DEPENDENCY
    ],
    targets: [
        .executableTarget(
            name: "fluent-consumer",
            dependencies: [
                .product(name: "SQLCipherKit", package: "SQLCipherKit"),
                .product(name: "FluentSQLCipherDriver", package: "FluentSQLCipherDriver"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
