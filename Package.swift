// swift-tools-version: 6.1
import PackageDescription

// build-sqlcipher.sh compiles the pinned SQLCipher into this folder (gitignored). SwiftPM builds of this
// package (tests, the CLI) link that engine from here; the distributed artifact in dist/ carries it inside
// libSQLCipherKit.a instead, so downstream consumers need neither this path nor any flag.
let engineLibraryDirectory = Context.packageDirectory + "/Vendor/build/lib"

let package = Package(
    name: "SQLCipherKit",
    products: [
        .library(name: "SQLCipherKit", type: .static, targets: ["SQLCipherKit"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLCipher", path: "Sources/CSQLCipher"),
        .target(
            name: "SQLCipherKit",
            dependencies: ["CSQLCipher"],
            linkerSettings: [
                .unsafeFlags(["-L", engineLibraryDirectory]),
                .linkedLibrary("sqlcipher"),
            ]
        ),
        .testTarget(name: "SQLCipherKitTests", dependencies: ["SQLCipherKit"]),
        .testTarget(name: "BuildPipelineTests"),
    ],
    swiftLanguageModes: [.v6]
)
