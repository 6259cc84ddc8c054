// swift-tools-version: 6.1
import PackageDescription

// A downstream app on FluentKit with an encrypted database: two `.package` lines, the release package and the
// FluentSQLCipherDriver package build-sqlcipher.sh writes beside it (dist/SQLCipherKit/swiftpm/), here by path.
// The driver package names SQLCipherKit by URL (SQLCIPHERKIT_PACKAGE_URL at build time, a placeholder by
// default), so this form resolves only once that URL serves the release package; the tests
// (Tests/Examples/run-app-examples.sh) build it against tagged git repositories of both with the driver article's
// `.package(url:, from:)` lines.
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
