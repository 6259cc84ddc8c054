import Foundation
import ProcessTestSupport
import Testing

// A limit, not a timing: compiling the engine takes about a minute alone, several on a loaded machine.
@Suite("Reproducible engine", .timeLimit(.minutes(15)))
struct ReproducibilityTests {
    @Test("a clean engine build in another folder gives a byte-identical libsqlcipher.a")
    func engineIsByteIdentical() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let result = try run(Repository.buildScript, ["engine", "--source", Repository.cachedTarball],
                             environment: ["SQLCIPHERKIT_BUILD_DIR": folder.file("build"),
                                           "SQLCIPHERKIT_CACHE_DIR": folder.file("cache")])
        #expect(result.status == 0, "\(result)")
        let rebuilt = folder.file("build/lib/libsqlcipher.a")
        #expect(try sha256(rebuilt) == (try sha256(Repository.engineArchive)))
        // The build path must not leak into the object.
        // strings must read the archive: a failure there (no such file) must not count as "no match".
        let strings = try shell(#"set -o pipefail; strings "$1" | { grep -c "$2" || true; }"#, rebuilt, folder.path)
        #expect(strings.status == 0, "\(strings)")
        #expect(strings.output.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(strings)")
    }

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

/// The whole artifact, not only the engine: a second checkout in another folder builds the same bytes.
@Suite("Reproducible artifact across checkouts", .timeLimit(.minutes(20)))
struct CheckoutReproducibilityTests {
    /// What must come out byte-identical: the merged archive, the engine, the artifact bundle (every file of
    /// it) and the manifest that records their checksums.
    static let identicalFiles = ["lib/libSQLCipherKit.a", "lib/libsqlcipher.a", "MANIFEST.json"]

    @Test("a clean build in a second checkout gives a byte-identical libSQLCipherKit.a and artifact bundle")
    func artifactIsByteIdenticalAcrossCheckouts() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let checkout = folder.file("second checkout")
        // The files this work tree builds from (tracked, and new ones not ignored), as they are now.
        let copy = try shell(#"""
            set -euo pipefail
            mkdir -p "$2"
            cd "$1"
            git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
                [ -e "$f" ] || continue
                mkdir -p "$2/$(dirname "$f")" && cp -p "$f" "$2/$f"
            done
            # The engine is proven reproducible on its own (above); reuse it, so this test spends its time on
            # the Swift side. Its stamps say it is up to date, so the second build does not recompile it.
            mkdir -p "$2/Vendor/build"
            cp -a Vendor/build/amalgamation Vendor/build/include Vendor/build/lib Vendor/build/*.stamp "$2/Vendor/build/"
            """#, Repository.root.path, checkout)
        #expect(copy.status == 0, "\(copy)")
        let build = try run(checkout + "/build-sqlcipher.sh", ["--source", Repository.cachedTarball])
        #expect(build.status == 0, "\(build)")
        #expect(build.output.contains("up to date (pin, flags and compiler unchanged)"), "\(build)")
        let second = checkout + "/dist/SQLCipherKit"
        var compared = 0
        for file in Self.identicalFiles {
            #expect(try sha256(second + "/" + file) == (try sha256(Repository.dist + "/" + file)), "\(file) differs")
            compared += 1
        }
        let bundle = "SQLCipherEngine.artifactbundle"
        let listing = try shell(#"cd "$1" && find . -type f | LC_ALL=C sort"#, Repository.dist + "/" + bundle)
        let bundleFiles = listing.output.split(separator: "\n").map(String.init)
        #expect(bundleFiles.count >= 4, "\(listing)")
        for file in bundleFiles {
            let relative = bundle + "/" + file.dropFirst(2)
            #expect(try sha256(second + "/" + relative) == (try sha256(Repository.dist + "/" + relative)),
                    "\(relative) differs")
            compared += 1
        }
        // The second checkout's path must not be inside what it built.
        let leaked = try shell(#"grep -rlF "$1" "$2/lib" "$2/SQLCipherEngine.artifactbundle" || true"#, checkout, second)
        #expect(leaked.output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(leaked)")
        print("REPRODUCIBLE: \(compared) files byte-identical across checkouts")
    }
}
