// swift-tools-version: 6.1
import PackageDescription

// Writes the fixture of the driver's compatibility test: a database written by fluent-sqlite-driver (sqlite-nio's
// plain SQLite), dumped as SQL text, and what its models read back as. Not part of the test command and never a
// dependency of the driver: run make-fixture.sh by hand when the models change (it rewrites
// Drivers/FluentSQLCipherDriver/Tests/FluentSQLCipherDriverTests/Fixtures/).
let package = Package(
    name: "FluentSQLiteFixture",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(url: "https://github.com/vapor/fluent-sqlite-driver", exact: "4.9.0"),
        .package(url: "https://github.com/vapor/fluent-kit", from: "1.57.0"),
    ],
    targets: [
        .executableTarget(
            name: "make-fluent-sqlite-fixture",
            dependencies: [
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
                .product(name: "FluentKit", package: "fluent-kit"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
