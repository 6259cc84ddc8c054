import Foundation
import Testing

@Suite("Reproducible engine", .timeLimit(.minutes(5)))
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
