// swift-tools-version: 6.2
import PackageDescription

// GRDB.swift on Linux links the system SQLite and has no SQLCipher. Here it runs on SQLCipherKit's engine with
// two `.package` lines and Swift only: GRDB, and SQLCipherKit's release package (dist/SQLCipherKit/swiftpm/…,
// written by ./build-sqlcipher.sh), whose SQLCipherKeying product brings the engine (a static library that
// defines every sqlite3_* function, so GRDB's calls land in SQLCipher: a static definition wins over the
// system's shared library at link time) and one C function, sqlcipherkeying_key, that keys a connection through
// sqlite3_key_v2 without a second sqlite3.h beside GRDB's (that clashes in clang's module checks).
let package = Package(
    name: "GRDBOnSQLCipher",
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(path: "../../dist/SQLCipherKit/swiftpm/SQLCipherKit"),
    ],
    targets: [
        .executableTarget(
            name: "grdb-on-sqlcipher",
            dependencies: [.product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "SQLCipherKeying", package: "SQLCipherKit")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
