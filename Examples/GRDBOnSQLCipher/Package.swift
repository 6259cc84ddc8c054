// swift-tools-version: 6.2
import PackageDescription

// GRDB.swift on Linux links the system SQLite and has no SQLCipher. Here it runs on SQLCipherKit's engine: the
// artifact bundle's static libsqlcipher.a defines every sqlite3_* function, and a static definition wins over
// the system's shared library at link time, so GRDB's calls land in SQLCipher. GRDB keeps importing its own
// system SQLite module for the declarations; the only SQLCipher function it lacks, sqlite3_key_v2, comes from
// SQLCipherKeying, a tiny C target of ours (importing a second full sqlite3.h beside GRDB's clashes in clang's
// module checks). Build the artifact first: ./build-sqlcipher.sh
let package = Package(
    name: "GRDBOnSQLCipher",
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .binaryTarget(name: "SQLCipherEngine", path: "../../dist/SQLCipherKit/SQLCipherEngine.artifactbundle"),
        .target(name: "SQLCipherKeying"),
        .executableTarget(
            name: "grdb-on-sqlcipher",
            dependencies: [.product(name: "GRDB", package: "GRDB.swift"), "SQLCipherKeying", "SQLCipherEngine"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
