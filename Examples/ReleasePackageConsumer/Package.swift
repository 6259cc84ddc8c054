// swift-tools-version: 6.2
import PackageDescription

// A downstream app that adds SQLCipherKit the way Swift developers add any library: one `.package` line. Here
// the line names the release package build-sqlcipher.sh writes (dist/SQLCipherKit/swiftpm/SQLCipherKit) by path; the tests
// also build this app against a tagged git repository of that folder with `.package(url: "file://…", from:)`,
// the form in which SwiftPM refuses unsafe flags, and against the openssl-inside variant.
let package = Package(
    name: "ReleasePackageConsumer",
    dependencies: [
        .package(path: "../../dist/SQLCipherKit/swiftpm/SQLCipherKit"), // SQLCIPHERKIT_DEPENDENCY
    ],
    targets: [
        .executableTarget(
            name: "release-consumer",
            dependencies: [.product(name: "SQLCipherKit", package: "SQLCipherKit")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
