// swift-tools-version: 6.1
import Foundation
import PackageDescription

// FluentSQLCipherDriver: SQLKit and FluentKit on SQLCipherKit, so that a Vapor or Hummingbird app gets an encrypted
// SQLite database with one engine in its binary (never sqlite-nio's plain SQLite, nor sqlite-kit).
//
// For development this package depends on SQLCipherKit by path: the repository this folder lives in (build the
// engine first: ./build-sqlcipher.sh). A path dependency is named by its folder, so the name is computed here.
let sqlCipherKitRoot = URL(fileURLWithPath: Context.packageDirectory + "/../..").standardizedFileURL
let sqlCipherKitPackage = sqlCipherKitRoot.lastPathComponent

let package = Package(
    name: "FluentSQLCipherDriver",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "SQLCipherSQLKit", targets: ["SQLCipherSQLKit"]),
        .library(name: "FluentSQLCipherDriver", targets: ["FluentSQLCipherDriver"]),
    ],
    dependencies: [
        .package(path: sqlCipherKitRoot.path),
        .package(url: "https://github.com/vapor/sql-kit", from: "3.36.0"),
        .package(url: "https://github.com/vapor/fluent-kit", from: "1.57.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "SQLCipherSQLKit",
            dependencies: [
                .product(name: "SQLCipherKit", package: sqlCipherKitPackage),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "FluentSQLCipherDriver",
            dependencies: [
                "SQLCipherSQLKit",
                .product(name: "SQLCipherKit", package: sqlCipherKitPackage),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentSQL", package: "fluent-kit"),
                .product(name: "SQLKit", package: "sql-kit"),
            ]
        ),
        .testTarget(
            name: "SQLCipherSQLKitTests",
            dependencies: [
                "SQLCipherSQLKit",
                .product(name: "SQLKitBenchmark", package: "sql-kit"),
                .product(name: "FluentKit", package: "fluent-kit"),
            ]
        ),
        .testTarget(
            name: "FluentSQLCipherDriverTests",
            dependencies: [
                "FluentSQLCipherDriver",
                .product(name: "FluentBenchmark", package: "fluent-kit"),
            ],
            // A database fluent-sqlite-driver wrote (SQL text) and its models as JSON, read through #filePath.
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
