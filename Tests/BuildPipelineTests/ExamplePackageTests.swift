import Foundation
import ProcessTestSupport
import Testing

/// The two SwiftPM consumption routes, each a real package under Examples/ built from dist/ alone: the SE-0482
/// artifact bundle as a binaryTarget, and GRDB.swift 7.10.0 running on that engine instead of the system
/// SQLite. (The swiftc and pkg-config routes are DownstreamTests.) Each example is built by `swift build` in
/// its own folder, run with a key in its environment, and its database file is then checked here.
@Suite("Example packages on the artifact bundle", .serialized,
       .hangGuard(.minutes(10),
                  hang: "an example's swift build or run that waits forever (a package cache lock, a key prompt)"))
struct ExamplePackageTests {
    static let bundle = Repository.dist + "/SQLCipherEngine.artifactbundle"

    /// Builds the example package at Examples/`name` and returns the path of its executable `product`.
    static func build(_ name: String, product: String) throws -> String {
        try Repository.requireBuild()
        let package = Repository.path("Examples/\(name)")
        let result = try run("/usr/bin/env", ["swift", "build", "--package-path", package, "--product", product])
        try #require(result.status == 0, "\(result)")
        let bin = try run("/usr/bin/env", ["swift", "build", "--package-path", package, "--show-bin-path"])
        return bin.output.trimmingCharacters(in: .whitespacesAndNewlines) + "/" + product
    }

    /// Runs `program` on a new database in `folder` with `key` in the environment variable `variable`; checks
    /// the database is encrypted (no plaintext header, no `marker` in its bytes) and returns the output.
    static func runEncrypting(_ program: String, keyVariable variable: String, marker: String,
                              in folder: TemporaryDirectory) throws -> String {
        let key = "example-key-\(UUID().uuidString)"
        let database = folder.file("example.db")
        let result = try run(program, [database], environment: [variable: key])
        #expect(result.status == 0, "\(result)")
        #expect(!result.output.localizedCaseInsensitiveContains(key), "the key was printed")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: database))
        #expect(bytes.count >= 4096)
        #expect(bytes.prefix(16) != Data("SQLite format 3\0".utf8), "the database is plaintext")
        #expect(bytes.range(of: Data(marker.utf8)) == nil, "the marker is readable in the file")
        return result.output
    }

    @Test("The artifact bundle passes SwiftPM's audit: nothing undefined beyond the C library")
    func bundleAudit() throws {
        try Repository.requireBuild()
        let info = try String(contentsOfFile: Self.bundle + "/info.json", encoding: .utf8)
        #expect(info.contains(#""type": "staticLibrary""#))
        let triple = try shell(#"swiftc -print-target-info | sed -n 's/^ *"triple": "\(.*\)",$/\1/p' | head -n1"#)
            .output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(info.contains("\"\(triple)\""), "no variant for this machine's triple \(triple)")
        let audit = try run("/usr/bin/env", ["swift", "package", "--package-path", Repository.root.path,
                                             "experimental-audit-binary-artifact", Self.bundle])
        #expect(audit.status == 0 && audit.output.contains("Artifact is safe to use"), "\(audit)")
        // Only the SQLite API is global: libcrypto's symbols inside are local and cannot clash with an app's.
        let exported = try shell(#"nm -g --defined-only "$1"/SQLCipherEngine/*/libsqlcipher.a | awk 'NF == 3 && $3 !~ /^(sqlite3|sqlcipherkit)_/' | wc -l"#,
                                 Self.bundle)
        #expect(exported.output.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(exported)")
    }

    @Test("Examples/ArtifactBundleConsumer: a binaryTarget on the bundle gets SQLCipher, no -lcrypto, no libsqlite3")
    func artifactBundleConsumer() throws {
        let program = try Self.build("ArtifactBundleConsumer", product: "engine-consumer")
        let folder = try TemporaryDirectory()
        let output = try Self.runEncrypting(program, keyVariable: "ENGINE_CONSUMER_KEY",
                                            marker: "artifact-bundle-marker", in: folder)
        #expect(output.contains("cipher_version \((try Pin.current.get()).cipherVersion)"), "\(output)")
        #expect(output.contains("wrong key refused") && output.contains("marker read back"), "\(output)")
        let libraries = try run("/usr/bin/ldd", [program]).output
        #expect(!libraries.contains("libcrypto") && !libraries.contains("libsqlite3"), "\(libraries)")
    }

    @Test("Examples/GRDBOnSQLCipher: GRDB 7.10.0 keyed in prepareDatabase runs on SQLCipher, file encrypted")
    func grdbOnSQLCipher() throws {
        let program = try Self.build("GRDBOnSQLCipher", product: "grdb-on-sqlcipher")
        let folder = try TemporaryDirectory()
        let output = try Self.runEncrypting(program, keyVariable: "GRDB_ON_SQLCIPHER_KEY", marker: "grdb-marker",
                                            in: folder)
        let pin = try Pin.current.get()
        #expect(output.contains("cipher_version \(pin.cipherVersion)"), "\(output)")
        // The engine's SQLite, not the system's (Debian's is 3.40): the static definitions won at link time.
        #expect(output.contains("sqlite_version \(pin.sqliteVersion)"), "\(output)")
        #expect(output.contains("wrong key refused") && output.contains("records read back 2"), "\(output)")
    }
}
