import Foundation
import ProcessTestSupport
import Testing

/// Where the engine's source comes from: a local file, the cache, or the machine's apt mirror; always checked.
@Suite("Pinned source", .hangGuard(.minutes(5), hang: "a fetch from a mirror that never answers"))
struct SourceTests {
    static let pinnedSHA256 = (try? Pin.current.get().sha256) ?? "(no Vendor/build/pin.json: run ./build-sqlcipher.sh)"
    static let tarballName = (try? Pin.current.get().tarball) ?? "(no Vendor/build/pin.json: run ./build-sqlcipher.sh)"

    /// A copy of the genuine tarball with one byte flipped in the middle.
    private func corruptCopy(at path: String) throws {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: Repository.cachedTarball))
        bytes[bytes.count / 2] ^= 0x01
        try writeFile(path, bytes)
    }

    /// Runs `build-sqlcipher.sh fetch` with its cache in `cache` and the given apt configuration.
    private func fetch(_ arguments: [String] = [], cache: String, aptConfig: String = "") throws -> ProcessResult {
        try run(Repository.buildScript, ["fetch"] + arguments,
                environment: ["SQLCIPHERKIT_CACHE_DIR": cache, "SQLCIPHER_TARBALL": "", "APT_CONFIG": aptConfig])
    }

    /// An apt configuration whose only source is a `file:` mirror at `mirror`, and that mirror's pool folder.
    private func fileMirror(in folder: TemporaryDirectory) throws -> (aptConfig: String, pool: String) {
        let pool = folder.file("mirror/pool/main/s/sqlcipher")
        try FileManager.default.createDirectory(atPath: pool, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.file("parts"), withIntermediateDirectories: true)
        try writeFile(folder.file("sources.list"), "deb [trusted=yes] file:\(folder.file("mirror")) stable main\n")
        try writeFile(folder.file("apt.conf"), """
            Dir::Etc::sourcelist "\(folder.file("sources.list"))";
            Dir::Etc::sourceparts "\(folder.file("parts"))";

            """)
        return (folder.file("apt.conf"), pool)
    }

    @Test("a corrupted --source tarball fails the checksum, naming both hashes; the user's file stays")
    func corruptLocalSource() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let tarball = folder.file(Self.tarballName)
        try corruptCopy(at: tarball)
        let actual = try sha256(tarball)
        let result = try fetch(["--source", tarball], cache: folder.file("cache"))
        #expect(result.status == 1, "\(result)")
        #expect(result.output.contains("SHA-256 mismatch"))
        #expect(result.output.contains("expected: \(Self.pinnedSHA256)"))
        #expect(result.output.contains("actual:   \(actual)"))
        #expect(FileManager.default.fileExists(atPath: tarball))
        #expect(!FileManager.default.fileExists(atPath: folder.file("cache/\(Self.tarballName)")))
    }

    @Test("SQLCIPHER_TARBALL=FILE is checked like --source")
    func corruptSourceFromEnvironment() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let tarball = folder.file("elsewhere.tar.gz")
        try corruptCopy(at: tarball)
        let result = try run(Repository.buildScript, ["fetch"],
                             environment: ["SQLCIPHERKIT_CACHE_DIR": folder.file("cache"), "SQLCIPHER_TARBALL": tarball])
        #expect(result.status == 1, "\(result)")
        #expect(result.output.contains("SHA-256 mismatch"))
    }

    @Test("a genuine --source tarball is accepted and cached")
    func genuineLocalSource() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let result = try fetch(["--source", Repository.cachedTarball], cache: folder.file("cache"))
        #expect(result.status == 0, "\(result)")
        #expect(try sha256(folder.file("cache/\(Self.tarballName)")) == Self.pinnedSHA256)
    }

    @Test("a corrupted cached tarball fails and is deleted, so the next run fetches afresh")
    func corruptCache() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let cache = folder.file("cache")
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        try corruptCopy(at: cache + "/" + Self.tarballName)
        let result = try fetch(cache: cache)
        #expect(result.status == 1, "\(result)")
        #expect(result.output.contains("expected: \(Self.pinnedSHA256)"))
        #expect(!FileManager.default.fileExists(atPath: cache + "/" + Self.tarballName))
    }

    @Test("with no cache, the tarball comes from the apt mirror's pool/main/s/sqlcipher/ and is cached")
    func downloadFromMirror() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let (aptConfig, pool) = try fileMirror(in: folder)
        try FileManager.default.copyItem(atPath: Repository.cachedTarball, toPath: pool + "/" + Self.tarballName)
        let result = try fetch(cache: folder.file("cache"), aptConfig: aptConfig)
        #expect(result.status == 0, "\(result)")
        #expect(result.output.contains("downloaded from file:\(folder.file("mirror"))/pool/main/s/sqlcipher/\(Self.tarballName)"),
                "\(result)")
        #expect(try sha256(folder.file("cache/\(Self.tarballName)")) == Self.pinnedSHA256)
    }

    @Test("a mirror serving a tampered tarball fails the checksum and caches nothing")
    func tamperedMirror() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let (aptConfig, pool) = try fileMirror(in: folder)
        try corruptCopy(at: pool + "/" + Self.tarballName)
        let result = try fetch(cache: folder.file("cache"), aptConfig: aptConfig)
        #expect(result.status == 1, "\(result)")
        #expect(result.output.contains("SHA-256 mismatch"))
        let cached = try FileManager.default.contentsOfDirectory(atPath: folder.file("cache"))
        #expect(cached.isEmpty, "left behind: \(cached)")
    }

    @Test("mirrors are read from deb822 .sources and one-line .list files, skipping disabled stanzas")
    func mirrorDiscovery() throws {
        let folder = try TemporaryDirectory()
        let (aptConfig, _) = try fileMirror(in: folder)
        try writeFile(folder.file("parts/debian.sources"), """
            Types: deb
            URIs: file:/srv/first file:/srv/second/
            Suites: stable
            Components: main

            Types: deb
            Enabled: no
            URIs: file:/srv/disabled
            Suites: stable

            """)
        try writeFile(folder.file("parts/extra.list"),
                      "deb-src [arch=amd64 signed-by=/k.gpg] file:/srv/third stable main\n# deb file:/srv/commented x y\n")
        try writeFile(folder.file("parts/old.list.disabled"), "deb file:/srv/ignored stable main\n")
        let result = try run(Repository.buildScript, ["mirrors"], environment: ["APT_CONFIG": aptConfig])
        #expect(result.status == 0, "\(result)")
        let mirrors = ["file:/srv/first", "file:/srv/second", "file:\(folder.file("mirror"))", "file:/srv/third"]
        // The pin's sources in order: each apt: path under every mirror, a plain address as it is.
        var expected: [String] = []
        for source in try Pin.current.get().sources {
            if source.hasPrefix("apt:") {
                expected += mirrors.map { $0 + "/" + source.dropFirst(4) }
            } else {
                expected.append(source)
            }
        }
        #expect(expected.contains("file:/srv/first/pool/main/s/sqlcipher/\(Self.tarballName)"))
        #expect(result.output.split(separator: "\n").map(String.init) == expected)
    }

    @Test("sources are tried in the pin's order: a missing first source falls through to the next one")
    func sourceFallback() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.file("upstream"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Repository.cachedTarball, toPath: folder.file("upstream/release.tgz"))
        let result = try run(Repository.buildScript, ["fetch"], environment: [
            "SQLCIPHERKIT_CACHE_DIR": folder.file("cache"), "SQLCIPHER_TARBALL": "", "APT_CONFIG": "",
            "SQLCIPHERKIT_SOURCES": "file:\(folder.file("gone.tgz")) file:\(folder.file("upstream/release.tgz"))",
        ])
        #expect(result.status == 0, "\(result)")
        #expect(result.output.contains("downloaded from file:\(folder.file("upstream/release.tgz")) (SHA-256 ok)"))
        #expect(try sha256(folder.file("cache/\(Self.tarballName)")) == Self.pinnedSHA256)
    }

    @Test("when no source answers, the failure lists every address tried and tells the user what to do")
    func noSourceAnswers() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let (aptConfig, _) = try fileMirror(in: folder) // a mirror without the file
        let result = try run(Repository.buildScript, ["fetch"], environment: [
            "SQLCIPHERKIT_CACHE_DIR": folder.file("cache"), "SQLCIPHER_TARBALL": "", "APT_CONFIG": aptConfig,
            "SQLCIPHERKIT_SOURCES": "apt:pool/main/s/sqlcipher/\(Self.tarballName) file:\(folder.file("gone.tgz"))",
        ])
        #expect(result.status == 1, "\(result)")
        #expect(result.output.contains("could not obtain \(Self.tarballName)"), "\(result)")
        #expect(result.output.contains("file:\(folder.file("mirror"))/pool/main/s/sqlcipher/\(Self.tarballName)"))
        #expect(result.output.contains("file:\(folder.file("gone.tgz"))"))
        #expect(result.output.contains("./build-sqlcipher.sh --source /path/to/\(Self.tarballName)"))
        #expect(result.output.contains(Self.pinnedSHA256), "the message names the checksum to look for")
        let cached = try FileManager.default.contentsOfDirectory(atPath: folder.file("cache"))
        #expect(cached.isEmpty, "left behind: \(cached)")
    }
}
