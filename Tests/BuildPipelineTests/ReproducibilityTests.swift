import Foundation
import ProcessTestSupport
import Testing

// The engine's reproducibility across folders is proven by the second checkout below, which builds its engine from
// nothing: a second engine build here would only repeat it, for a minute of compiling.
@Suite("Reproducible engine",
       .hangGuard(.minutes(15), hang: "a build step that waits forever (a lock of the package cache, a prompt)"))
struct ReproducibilityTests {
    @Test("a second run reuses the amalgamation and the engine (stamps)")
    func rebuildSkipsUnchangedWork() throws {
        try Repository.requireBuild()
        // On a copy of the build folder: other suites read the real one meanwhile.
        let folder = try TemporaryDirectory()
        let copy = try shell(#"cp -a "$1" "$2/build""#, Repository.path("Vendor/build"), folder.path)
        #expect(copy.status == 0, "\(copy)")
        let result = try run(Repository.buildScript, ["engine"],
                             environment: ["SQLCIPHERKIT_BUILD_DIR": folder.file("build")])
        #expect(result.status == 0, "\(result)")
        #expect(result.output.contains("up to date (pin unchanged)"), "\(result)")
        #expect(result.output.contains("up to date (pin, flags and compiler unchanged)"), "\(result)")
    }
}

/// The whole artifact, engine included: a second checkout in another folder builds everything from nothing (its own
/// amalgamation, engine, Swift build and merge, from the cached tarball) and must produce the same bytes.
@Suite("Reproducible artifact across checkouts",
       .hangGuard(.minutes(20),
                  hang: "a second checkout's build that waits forever (a lock of the package cache, a prompt)"))
struct CheckoutReproducibilityTests {
    /// What must come out byte-identical: the merged archive, the engine of each triple (x86_64, and aarch64
    /// cross-compiled), the artifact bundle (every file of it, both variants), each release package's engine
    /// bundle variants, release-asset zip and checksum, and the manifest that records their checksums.
    static let identicalFiles = ["lib/libSQLCipherKit.a", "lib/libsqlcipher.a",
                                 "lib/aarch64-unknown-linux-gnu/libsqlcipher.a", "MANIFEST.json"]
        + ["SQLCipherKit", "SQLCipherKit-openssl-inside"].flatMap { flavour in
            ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"].map {
                "swiftpm/\(flavour)/CSQLCipher.artifactbundle/CSQLCipher/\($0)/libsqlcipher.a"
            } + ["swiftpm/\(flavour)/release-asset/CSQLCipher.artifactbundle.zip",
                 "swiftpm/\(flavour)/release-asset/CSQLCipher.artifactbundle.zip.sha256"]
        }

    @Test("a clean build in a second checkout gives byte-identical engines (x86_64, aarch64), libSQLCipherKit.a, artifact bundle and release assets")
    func artifactIsByteIdenticalAcrossCheckouts() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let checkout = folder.file("second checkout")
        // The files this work tree builds from (tracked, and new ones not ignored), as they are now; nothing of
        // Vendor/build (gitignored): the second checkout compiles its engine itself.
        let copy = try shell(#"""
            set -euo pipefail
            mkdir -p "$2"
            cd "$1"
            git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
                [ -e "$f" ] || [ -L "$f" ] || continue
                # -P: a tracked symbolic link (Benchmarks/Load/Sources/VaporTodo) is copied as the link it is.
                mkdir -p "$2/$(dirname "$f")" && cp -pP "$f" "$2/$f"
            done
            """#, Repository.root.path, checkout)
        #expect(copy.status == 0, "\(copy)")
        #expect(!FileManager.default.fileExists(atPath: checkout + "/Vendor/build"), "the checkout is not from nothing")
        let build = try run(checkout + "/build-sqlcipher.sh", ["--source", Repository.cachedTarball])
        try #require(build.status == 0, "\(build)")
        // Built, not found up to date: the amalgamation generated and the engine compiled in the checkout.
        #expect(build.output.contains("generated sqlite3.c"), "\(build)")
        #expect(!build.output.contains("up to date (pin"), "\(build)")
        #expect(build.output.contains(#/ -c .* sqlite3\.c/#), "the engine was not compiled: \(build)")
        #expect(build.output.contains(#/aarch64-linux-gnu-gcc -c .* sqlite3\.c/#), "the aarch64 engine was not compiled: \(build)")
        let second = checkout + "/dist/SQLCipherKit"
        let bundle = "SQLCipherEngine.artifactbundle"
        let listing = try shell(#"cd "$1" && find . -type f | LC_ALL=C sort"#, Repository.dist + "/" + bundle)
        let bundleFiles = listing.output.split(separator: "\n").map { bundle + "/" + $0.dropFirst(2) }
        #expect(bundleFiles.count >= 5, "\(listing)")
        #expect(bundleFiles.contains { $0.hasSuffix("/aarch64-unknown-linux-gnu/libsqlcipher.a") }, "\(listing)")
        var identical: [String] = [], different: [String] = []
        for file in Self.identicalFiles + bundleFiles {
            let same = try sha256(second + "/" + file) == (try sha256(Repository.dist + "/" + file))
            if same { identical.append(file) } else { different.append(file) }
        }
        #expect(different.isEmpty, "\(different.count) files differ across checkouts: \(different)")
        // The second checkout's path must not be inside what it built.
        let leaked = try shell(#"grep -rlF "$1" "$2/lib" "$2/SQLCipherEngine.artifactbundle" || true"#, checkout, second)
        #expect(leaked.output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(leaked)")
        if different.isEmpty {
            print("REPRODUCIBLE: \(identical.count) files byte-identical across checkouts, each built from nothing")
        }
    }
}
