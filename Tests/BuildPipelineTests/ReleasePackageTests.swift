import Foundation
import ProcessTestSupport
import Testing

/// The release package (dist/SQLCipherKit/swiftpm/): the whole Swift API through one `.package` line, with the
/// verified engine inside as a binary target and no unsafe flag. Each test builds Examples/ReleasePackageConsumer
/// in a temporary folder against one form of the dependency, runs it, and checks with its own eyes what it did.
@Suite("Release package: the Swift API through one .package line", .serialized,
       .hangGuard(.minutes(20), hang: "a consumer's package resolution or build that waits forever"))
struct ReleasePackageTests {
    static let releaseFolder = Repository.dist + "/swiftpm"
    static let defaultPackage = releaseFolder + "/SQLCipherKit"
    static let opensslInsidePackage = releaseFolder + "/SQLCipherKit-openssl-inside"
    static let consumerExample = Repository.path("Examples/ReleasePackageConsumer")

    /// A copy of the consumer example in `folder` whose SQLCipherKit dependency is `dependency` (a `.package`
    /// expression) from the package whose identity is `identity`.
    static func consumer(in folder: TemporaryDirectory, dependency: String, identity: String = "SQLCipherKit") throws
        -> String {
        let copy = folder.file("consumer")
        #expect(try run("/bin/cp", ["-R", consumerExample, copy]).status == 0)
        try? FileManager.default.removeItem(atPath: copy + "/.build")
        let manifestPath = copy + "/Package.swift"
        let manifest = try String(contentsOfFile: manifestPath, encoding: .utf8)
        let lines = manifest.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.contains("// SQLCIPHERKIT_DEPENDENCY") ? "        \(dependency)," : String(line)
        }
        let rewritten = lines.joined(separator: "\n")
            .replacingOccurrences(of: #"package: "SQLCipherKit")"#, with: "package: \"\(identity)\")")
        #expect(rewritten != manifest && rewritten.contains(dependency), "the dependency line was not replaced")
        try writeFile(manifestPath, rewritten)
        return copy
    }

    /// Builds the consumer at `package`, runs it on a fresh folder with a passphrase, checks the two databases
    /// it wrote are encrypted, and returns its output and `ldd`'s.
    static func buildAndRun(_ package: String, in folder: TemporaryDirectory) throws -> (output: String, ldd: String) {
        let build = try run("/usr/bin/env", ["swift", "build", "--package-path", package])
        try #require(build.status == 0, "\(build)")
        #expect(!build.output.contains("unsafe"), "\(build)")
        let bin = try run("/usr/bin/env", ["swift", "build", "--package-path", package, "--show-bin-path"])
        let program = bin.output.trimmingCharacters(in: .whitespacesAndNewlines) + "/release-consumer"
        let data = folder.file("data")
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let key = "release-key-\(UUID().uuidString)", marker = "release-marker-\(UUID().uuidString)"
        let result = try run(program, [data, marker], environment: ["RELEASE_CONSUMER_KEY": key])
        #expect(result.status == 0, "\(result)")
        #expect(result.output.contains("cipher_version \((try Pin.current.get()).cipherVersion)"), "\(result)")
        #expect(result.output.contains("pool read back true"), "\(result)")
        #expect(result.output.contains("queue read back true"), "\(result)")
        #expect(result.output.contains("wrong key refused"), "\(result)")
        #expect(!result.output.lowercased().contains(key.lowercased()), "the key was printed")
        for database in ["pool.db", "queue.db"] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: data + "/" + database))
            #expect(bytes.count >= 4096, "\(database)")
            #expect(bytes.prefix(16) != Data("SQLite format 3\0".utf8), "\(database) is plaintext")
            #expect(bytes.range(of: Data(marker.utf8)) == nil, "the marker is readable in \(database)")
        }
        let ldd = try run("/usr/bin/ldd", [program]).output
        #expect(!ldd.contains("libsqlite3"), "\(ldd)")
        return (result.output, ldd)
    }

    /// Issue 48: the dependency line is the release README's own, pasted with only its URL filled in, and the
    /// repository is tagged with the version the build wrote (`Engine.sqlcipherKitVersion`): a README that names
    /// another version, or a repository name whose identity its `package:` does not match, fails here.
    @Test("a consumer with only the release README's .package line (its URL filled in) builds and runs the Swift API on SQLCipher")
    func versionedDependency() throws {
        try Repository.requireBuild()
        let version = try Pin.current.get().sqlcipherKitVersion
        let folder = try TemporaryDirectory()
        // The release package as a release repository would hold it: a git repository named as the README says,
        // tagged.
        let repository = folder.file("SQLCipherKit")
        let git = try shell(#"""
            set -euo pipefail
            cp -R "$1" "$2"
            cd "$2"
            git init -q
            git add -A
            git -c user.name=release -c user.email=release@example.invalid commit -q -m "SQLCipherKit release"
            git tag "$3"
            """#, Self.defaultPackage, repository, version)
        try #require(git.status == 0, "\(git)")
        let readme = try String(contentsOfFile: Self.defaultPackage + "/README.md", encoding: .utf8)
        let pasted = try #require(readme.split(separator: "\n").first { $0.contains(".package(url:") },
                                  "the release README has no .package line")
        let readmeURL = "https://your.host/SQLCipherKit"
        try #require(pasted.contains("\"\(readmeURL)\""), "the README's line names another URL: \(pasted)")
        let dependency = String(pasted.drop { $0 != "." }.prefix { $0 != "]" })
            .replacingOccurrences(of: readmeURL, with: "file://\(repository)")
        #expect(dependency.hasSuffix(")"), "\(pasted)")
        // Its product line names the package as the repository's URL does (the consumer's manifest says the same).
        #expect(readme.contains(#".product(name: "SQLCipherKit", package: "SQLCipherKit")"#), "\(readme)")
        let consumer = try Self.consumer(in: folder, dependency: dependency)
        let (_, ldd) = try Self.buildAndRun(consumer, in: folder)
        // The default variant links the system's libcrypto (its security updates reach the app).
        #expect(ldd.contains("libcrypto"), "\(ldd)")
        let resolved = try String(contentsOfFile: consumer + "/Package.resolved", encoding: .utf8)
        #expect(resolved.contains(#""version" : "\#(version)""#), "\(resolved)")
    }

    @Test("the same consumer with .package(path:) on the openssl-inside variant: self-contained, no libcrypto")
    func pathDependencyOpenSSLInside() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let consumer = try Self.consumer(in: folder, dependency: #".package(path: "\#(Self.opensslInsidePackage)")"#,
                                         identity: "SQLCipherKit-openssl-inside")
        let (_, ldd) = try Self.buildAndRun(consumer, in: folder)
        #expect(!ldd.contains("libcrypto"), "libcrypto is folded into this variant: \(ldd)")
    }

    @Test("the release package: no unsafeFlags, licence, notices, README; the release-asset checksum is the zip's")
    func releasePackageContents() throws {
        try Repository.requireBuild()
        for package in [Self.defaultPackage, Self.opensslInsidePackage] {
            let manifest = try String(contentsOfFile: package + "/Package.swift", encoding: .utf8)
            #expect(!manifest.contains("unsafeFlags"), "\(package)")
            #expect(manifest.contains(#".binaryTarget(name: "CSQLCipher", path: "CSQLCipher.artifactbundle")"#))
            for product in ["SQLCipherKit", "SQLCipherEngine", "SQLCipherKeying"] {
                #expect(manifest.contains(".library(name: \"\(product)\""), "\(product) in \(package)")
            }
            let notices = try String(contentsOfFile: package + "/THIRD_PARTY_NOTICES.txt", encoding: .utf8)
            #expect(notices.contains("ZETETIC LLC"), "SQLCipher's licence text")
            #expect(notices.contains("The author disclaims copyright to this source code"), "SQLite's blessing")
            #expect(notices.contains("Licence: Apache-2.0") == package.hasSuffix("openssl-inside"), "OpenSSL's notice where folded in, only there")
            #expect(try String(contentsOfFile: package + "/LICENSE", encoding: .utf8).contains("MIT License"))
            #expect(FileManager.default.fileExists(atPath: package + "/README.md"))
            let zip = package + "/release-asset/CSQLCipher.artifactbundle.zip"
            let checksum = try run("/usr/bin/env", ["swift", "package", "--package-path", package, "compute-checksum", zip])
            #expect(checksum.status == 0, "\(checksum)")
            let asset = try String(contentsOfFile: package + "/release-asset/Package.swift", encoding: .utf8)
            let expected = checksum.output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(expected.count == 64 && asset.contains(#"checksum: "\#(expected)""#), "\(asset)")
            #expect(asset.contains(".binaryTarget(name: \"CSQLCipher\", url: "))
        }
    }

    @Test("every dist/ artifact carries the notices of what is inside it")
    func noticesBesideEveryArtifact() throws {
        try Repository.requireBuild()
        let expectations: [(file: String, must: [String], mustNot: [String])] = [
            ("lib/libSQLCipherKit.a.NOTICES.txt", ["MIT License", "ZETETIC LLC", "disclaims copyright"], ["Licence: Apache-2.0"]),
            ("lib/libsqlcipher.a.NOTICES.txt", ["ZETETIC LLC", "disclaims copyright"], ["Licence: Apache-2.0"]),
            ("bin/sqlcipherkit.NOTICES.txt", ["ZETETIC LLC", "Swift runtime", "swift-argument-parser"], []),
            ("SQLCipherEngine.artifactbundle/THIRD_PARTY_NOTICES.txt", ["ZETETIC LLC", "OpenSSL libcrypto"], []),
            ("LICENSE", ["MIT License", "The SQLCipherKit authors"], []),
        ]
        for (file, must, mustNot) in expectations {
            let text = try String(contentsOfFile: Repository.dist + "/" + file, encoding: .utf8)
            for phrase in must { #expect(text.contains(phrase), "\(file) lacks \(phrase)") }
            for phrase in mustNot { #expect(!text.contains(phrase), "\(file) holds \(phrase)") }
        }
        // The CLI's Foundation carries ICU: its own section (heading, licence line), holding ICU's own text
        // (Unicode's copyright and the permission notice), not a phrase other licences contain as well.
        let cli = try String(contentsOfFile: Repository.dist + "/bin/sqlcipherkit.NOTICES.txt", encoding: .utf8)
        let icu = Self.noticeSection(cli, titled: "ICU code and data inside Foundation (Unicode, Inc.)")
        #expect(icu?.licence == "Licence: Unicode / ICU licence", "no ICU section in the CLI's notices")
        #expect(icu?.body.contains("Upstream-Name: ICU") == true, "the ICU section lacks ICU's licence text")
        #expect(icu?.body.contains(/Copyright.* Unicode, Inc\./) == true, "the ICU section lacks Unicode's copyright")
        #expect(icu?.body.contains("Permission is hereby granted") == true,
                "the ICU section lacks its permission notice")
    }

    /// The section of a notices file (BuildSupport/notices.py: a rule, the title, the licence line, a rule, then
    /// the texts up to the next rule) whose title is `title`: its licence line and body, or nil.
    static func noticeSection(_ text: String, titled title: String) -> (licence: String, body: String)? {
        let rule = String(repeating: "=", count: 100)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.indices.first(where: { index in
            index >= 1 && index + 2 < lines.count && lines[index - 1] == rule && lines[index] == title
                && lines[index + 2] == rule
        }) else { return nil }
        let body = lines[(start + 3)...].prefix { $0 != rule }
        return (lines[start + 1], body.joined(separator: "\n"))
    }

    @Test("the SBOM validates against CycloneDX's schema (cyclonedx-python-lib), and a broken copy does not")
    func sbomValidates() throws {
        try Repository.requireBuild()
        let venv = Repository.path("Vendor/build/sbom-venv")
        let requirement = "cyclonedx-python-lib[json-validation]==11.12.0"
        let setup = try shell(#"""
            set -euo pipefail
            if ! "$1/bin/python" -c 'import cyclonedx.validation.json' 2>/dev/null \
                || ! grep -qxF "$2" "$1/requirement.txt" 2>/dev/null; then
                rm -rf "$1"
                python3 -m venv "$1"
                "$1/bin/pip" install -q --disable-pip-version-check "$2"
                echo "$2" >"$1/requirement.txt"
            fi
            """#, venv, requirement)
        try #require(setup.status == 0, "the validator could not be installed from PyPI: \(setup)")
        let sbomPath = Repository.dist + "/sbom.cdx.json"
        let validator = Repository.path("Tests/BuildPipelineTests/python/validate_sbom.py")
        let valid = try run(venv + "/bin/python", [validator, sbomPath])
        #expect(valid.status == 0 && valid.output.contains("VALID"), "\(valid)")

        let sbom = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sbomPath)))
            as? [String: Any])
        let components = try #require(sbom["components"] as? [[String: Any]])
        let pin = try Pin.current.get()
        let sqlcipher = try #require(components.first { $0["bom-ref"] as? String == "sqlcipher" })
        #expect(sqlcipher["version"] as? String == pin.sqlcipherVersion)
        #expect((sqlcipher["hashes"] as? [[String: String]])?.first?["content"] == pin.sha256)
        #expect(components.first { $0["bom-ref"] as? String == "sqlite" }?["version"] as? String == pin.sqliteVersion)
        #expect(components.contains { $0["bom-ref"] as? String == "openssl" })
        #expect(components.contains { $0["bom-ref"] as? String == "swiftpm:swift-argument-parser" })
        let merged = try #require(components.first { $0["bom-ref"] as? String == "artifact:lib/libSQLCipherKit.a" })
        #expect((merged["hashes"] as? [[String: String]])?.first?["content"]
            == (try sha256(Repository.dist + "/lib/libSQLCipherKit.a")))
        // The Fluent driver's package: each of its files hashed; it needs the release package and the two Swift
        // packages it requires and does not ship.
        let driver = try #require(components.first {
            $0["bom-ref"] as? String == "artifact:swiftpm/FluentSQLCipherDriver" })
        let driverFiles = driver["components"] as? [[String: Any]] ?? []
        #expect(driverFiles.contains { ($0["name"] as? String)?.hasSuffix("/Package.swift") == true })
        #expect(driverFiles.allSatisfy { ($0["hashes"] as? [[String: String]])?.first?["content"]?.count == 64 })
        for name in ["sql-kit", "fluent-kit"] {
            let requirement = components.first { $0["bom-ref"] as? String == "swiftpm-requirement:\(name)" }
            #expect(requirement?["scope"] as? String == "excluded", "\(name)")
        }
        let driverNeeds = (sbom["dependencies"] as? [[String: Any]] ?? [])
            .first { $0["ref"] as? String == "artifact:swiftpm/FluentSQLCipherDriver" }?["dependsOn"] as? [String] ?? []
        #expect(Set(driverNeeds).isSuperset(of: ["artifact:swiftpm/SQLCipherKit", "swiftpm-requirement:sql-kit",
                                                 "swiftpm-requirement:fluent-kit", "swiftpm-requirement:swift-log"]),
                "\(driverNeeds)")
        // One component per bom-ref: swift-log, which the driver and the bridge both require, is listed once.
        let references = components.compactMap { $0["bom-ref"] as? String }
        #expect(Set(references).count == references.count,
                "\(Dictionary(grouping: references, by: { $0 }).filter { $0.value.count > 1 }.keys)")

        // The observability bridge's package: the release package and its three Swift packages, not shipped.
        let bridgeNeeds = (sbom["dependencies"] as? [[String: Any]] ?? [])
            .first { $0["ref"] as? String == "artifact:swiftpm/SQLCipherKitObservability" }?["dependsOn"] as? [String]
            ?? []
        #expect(Set(bridgeNeeds) == ["sqlcipherkit", "artifact:swiftpm/SQLCipherKit", "swiftpm-requirement:swift-log",
                                     "swiftpm-requirement:swift-metrics",
                                     "swiftpm-requirement:swift-distributed-tracing"], "\(bridgeNeeds)")

        // The control: the validator is not a rubber stamp.
        let folder = try TemporaryDirectory()
        var broken = sbom
        var brokenComponents = components
        brokenComponents[0]["hashes"] = [["alg": "SHA-256", "content": "not-a-hash"]]
        broken["components"] = brokenComponents
        try writeFile(folder.file("broken.json"), JSONSerialization.data(withJSONObject: broken))
        let invalid = try run(venv + "/bin/python", [validator, folder.file("broken.json")])
        #expect(invalid.status == 1 && invalid.output.contains("INVALID"), "\(invalid)")
    }
}
