// swift-tools-version: 6.2
import PackageDescription

// A downstream package that uses SQLCipher through the SE-0482 artifact bundle build-sqlcipher.sh writes into
// dist/: a binary static library (the engine, libcrypto inside) with its header and module map. No engine
// source, no -lcrypto, no linker flag. Build the artifact first: ./build-sqlcipher.sh
let package = Package(
    name: "ArtifactBundleConsumer",
    targets: [
        .binaryTarget(name: "SQLCipherEngine", path: "../../dist/SQLCipherKit/SQLCipherEngine.artifactbundle"),
        .executableTarget(name: "engine-consumer", dependencies: ["SQLCipherEngine"]),
    ],
    swiftLanguageModes: [.v6]
)
