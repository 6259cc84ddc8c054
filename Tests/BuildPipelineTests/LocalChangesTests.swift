import Foundation
import ProcessTestSupport
import Testing

/// SQLCipherKit's local changes to the generated amalgamation (Vendor/sqlcipher.pin, PIN_LOCAL_CHANGES): the
/// build applies each one only where it still fits, stops loudly where it does not (a bump decides again), and
/// records what it applied. The tests run the build's own step (BuildSupport/build/local-changes.sh, sourced the
/// way build-sqlcipher.sh sources it) on copies of the generated source.
@Suite("Local changes to the engine's source",
       .hangGuard(.minutes(5), hang: "a patch step that waits for an answer (patch asking which file)"))
struct LocalChangesTests {
    /// Sources the pin and the step, then applies the pin's local changes (as PIN_LOCAL_CHANGES, or `$3` when set,
    /// one entry a line) to the file `$1` as SQLite `$2`.
    static let applyScript = #"""
        set -euo pipefail
        ROOT=$(pwd)
        PROGRAM=build-sqlcipher.sh
        source Vendor/sqlcipher.pin
        source BuildSupport/common.sh
        source BuildSupport/build/output.sh
        source BuildSupport/build/local-changes.sh
        PIN_SQLITE_VERSION=$2
        if [ -n "${3:-}" ]; then mapfile -t PIN_LOCAL_CHANGES <<<"$3"; fi
        apply_local_changes "$1"
        """#

    static func apply(to file: String, sqliteVersion: String, entries: [String]? = nil) throws -> ProcessResult {
        try run("/bin/bash", ["-c", applyScript, "bash", file, sqliteVersion, entries?.joined(separator: "\n") ?? ""],
                in: Repository.root.path)
    }

    /// The generated source as upstream's text: the build's amalgamation with every local change undone (the
    /// replacement lines put back to the lines they replaced, the record at the end removed).
    /// A copy of upstream's sqlite3.c as SQLCipher's make generated it from the checked tarball, before the pin's
    /// local changes (the build keeps it beside the changed one), in `folder`.
    static func upstreamSource(in folder: TemporaryDirectory, pin: Pin) throws -> String {
        try Repository.requireBuild()
        let upstream = Repository.path("Vendor/build/amalgamation/sqlite3.upstream.c")
        let text = try String(contentsOfFile: upstream, encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        for change in pin.localChanges {
            #expect(lines.contains(change.match), "\(change.name): its line is not in upstream's sqlite3.c")
            #expect(!lines.contains(change.replace), "\(change.name) is already applied in upstream's sqlite3.c")
        }
        #expect(!text.contains("sqlcipherkit_local_changes"), "upstream's sqlite3.c names SQLCipherKit's changes")
        let file = folder.file("sqlite3.c")
        try FileManager.default.copyItem(atPath: upstream, toPath: file)
        return file
    }

    @Test("the pin's local changes apply to the upstream source and give exactly the build's amalgamation")
    func appliesToUpstreamSource() throws {
        let pin = try Pin.current.get()
        #expect(!pin.localChanges.isEmpty, "the pin lists no local change: drop this suite's expectations with it")
        let folder = try TemporaryDirectory()
        let file = try Self.upstreamSource(in: folder, pin: pin)
        let result = try Self.apply(to: file, sqliteVersion: pin.sqliteVersion)
        #expect(result.status == 0, "\(result)")
        for change in pin.localChanges {
            #expect(result.output.contains("local change \(change.name): \(change.function)()"), "\(result)")
        }
        let applied = try String(contentsOfFile: file, encoding: .utf8)
        let built = try String(contentsOfFile: Repository.amalgamation, encoding: .utf8)
        // Compared as a Bool, with the first differing line named (the files are 9 MB each).
        let (appliedLines, builtLines) = (applied.components(separatedBy: "\n"), built.components(separatedBy: "\n"))
        let difference = zip(appliedLines, builtLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? (appliedLines.count == builtLines.count ? nil : min(appliedLines.count, builtLines.count))
        #expect(difference == nil, """
            the step's output differs from Vendor/build/amalgamation/sqlite3.c from line \((difference ?? 0) + 1) on \
            (\(appliedLines.count) lines against \(builtLines.count))
            """)
        let names = pin.localChanges.map(\.name).joined(separator: " ")
        #expect(applied.contains(#"const char *sqlcipherkit_local_changes(void){ return "\#(names)"; }"#))
    }

    @Test("a source where the line is gone (upstream fixed it) stops the build, naming the change and the line")
    func lineGoneStopsTheBuild() throws {
        let pin = try Pin.current.get()
        let folder = try TemporaryDirectory()
        // The build's own amalgamation already carries the changes: to the step it looks like a release in which
        // upstream changed every line the pin's changes match.
        let file = folder.file("sqlite3.c")
        try FileManager.default.copyItem(atPath: Repository.amalgamation, toPath: file)
        let result = try Self.apply(to: file, sqliteVersion: pin.sqliteVersion)
        #expect(result.status == 1, "\(result)")
        let first = try #require(pin.localChanges.first)
        #expect(result.output.contains("\(first.name): the line it changes is not found in the generated sqlite3.c"),
                "\(result)")
        #expect(result.output.contains(first.match), "\(result)")
        #expect(result.output.contains("drop the entry from PIN_LOCAL_CHANGES"), "\(result)")
        #expect(result.output.contains("build-sqlcipher.sh: error: a local change in Vendor/sqlcipher.pin"),
                "\(result)")
        #expect(try String(contentsOfFile: file, encoding: .utf8)
                == String(contentsOfFile: Repository.amalgamation, encoding: .utf8), "a failed step changed the file")
    }

    @Test("a SQLite version the entry does not list stops the build: a bump decides again")
    func otherVersionStopsTheBuild() throws {
        let pin = try Pin.current.get()
        let folder = try TemporaryDirectory()
        let file = try Self.upstreamSource(in: folder, pin: pin)
        let result = try Self.apply(to: file, sqliteVersion: "99.0.0")
        #expect(result.status == 1, "\(result)")
        let first = try #require(pin.localChanges.first)
        #expect(result.output.contains("\(first.name): the pin's SQLite is 99.0.0, but this local change is recorded "
                                       + "for SQLite \(first.sqliteVersions.joined(separator: " ")) only"), "\(result)")
    }

    @Test("a line found twice, a line outside the named function, a malformed entry: each stops the build")
    func ambiguousOrMalformedStopsTheBuild() throws {
        let pin = try Pin.current.get()
        let change = try #require(pin.localChanges.first)
        let folder = try TemporaryDirectory()
        let entry = "\(change.name)|\(pin.sqliteVersion)|a reason"

        let twice = folder.file("twice.c")
        try writeFile(twice, "static int \(change.function)(void){\n\(change.match)\n\(change.match)\n}\n")
        let twiceResult = try Self.apply(to: twice, sqliteVersion: pin.sqliteVersion, entries: [entry])
        #expect(twiceResult.status == 1 && twiceResult.output.contains("found 2 times (lines 2, 3)"),
                "\(twiceResult)")

        let elsewhere = folder.file("elsewhere.c")
        try writeFile(elsewhere, "static int someOtherFunction(void){\n\(change.match)\n}\n")
        let elsewhereResult = try Self.apply(to: elsewhere, sqliteVersion: pin.sqliteVersion, entries: [entry])
        #expect(elsewhereResult.status == 1
                && elsewhereResult.output.contains("is not inside \(change.function)()"), "\(elsewhereResult)")

        let once = folder.file("once.c")
        try writeFile(once, "static int \(change.function)(void){\n\(change.match)\n}\n")
        let malformed = try Self.apply(to: once, sqliteVersion: pin.sqliteVersion,
                                       entries: ["\(change.name)|no reason"])
        #expect(malformed.status == 1 && malformed.output.contains("is not NAME|SQLITE VERSIONS|REASON"),
                "\(malformed)")
        let fits = try Self.apply(to: once, sqliteVersion: pin.sqliteVersion, entries: [entry])
        #expect(fits.status == 0, "\(fits)")
        #expect(try String(contentsOfFile: once, encoding: .utf8).contains("\n\(change.replace)\n"))
    }

    @Test("pin.json, MANIFEST.json and the SBOM list the local changes with their reasons")
    func recordedInManifestAndSBOM() throws {
        try Repository.requireBuild()
        let pin = try Pin.current.get()
        let names = pin.localChanges.map(\.name)
        let manifestData = try #require(FileManager.default.contents(atPath: Repository.dist + "/MANIFEST.json"))
        let manifest = try #require(try JSONSerialization.jsonObject(with: manifestData) as? [String: Any])
        let listed = try #require(manifest["localChanges"] as? [[String: Any]])
        #expect(listed.compactMap { $0["name"] as? String } == names)
        #expect(listed.compactMap { $0["reason"] as? String } == pin.localChanges.map(\.reason))
        #expect(listed.compactMap { $0["sqliteVersions"] as? [String] } == pin.localChanges.map(\.sqliteVersions))

        let sbomData = try #require(FileManager.default.contents(atPath: Repository.dist + "/sbom.cdx.json"))
        let sbom = try #require(try JSONSerialization.jsonObject(with: sbomData) as? [String: Any])
        let components = try #require(sbom["components"] as? [[String: Any]])
        let sqlite = try #require(components.first { $0["bom-ref"] as? String == "sqlite" })
        let patches = try #require((sqlite["pedigree"] as? [String: Any])?["patches"] as? [[String: Any]])
        #expect(patches.count == names.count)
        let resolved = patches.compactMap { ($0["resolves"] as? [[String: Any]])?.first?["name"] as? String }
        #expect(resolved == names)
        let property = (sqlite["properties"] as? [[String: Any]])?
            .first { $0["name"] as? String == "sqlcipherkit:localChanges" }
        #expect(property?["value"] as? String == names.joined(separator: " "))
    }
}
