import Foundation
import ProcessTestSupport
import Testing

/// dist/ carries x86_64 and aarch64 Linux wherever a binary ships (issue 27). These tests read what the build
/// wrote: every artifact bundle's info.json (one variant per triple, each archive of its triple's machine), what
/// SwiftPM does with it for each triple, the release packages' portability, MANIFEST.json and the SBOM. That the
/// aarch64 engine runs is Tests/Emulation/run-aarch64.sh's part of the test command (qemu-user-static).
@Suite("Both architectures in every binary artifact", .serialized,
       .hangGuard(.minutes(10), hang: "a cross-compiling swift build that waits forever"))
struct CrossArchitectureTests {
    static let host = "x86_64-unknown-linux-gnu"
    static let arm64 = "aarch64-unknown-linux-gnu"
    /// readelf's machine name for each triple's architecture.
    static let machines = [host: "Advanced Micro Devices X86-64", arm64: "AArch64"]
    static let bundles = ["SQLCipherEngine.artifactbundle", "swiftpm/SQLCipherKit/CSQLCipher.artifactbundle",
                          "swiftpm/SQLCipherKit-openssl-inside/CSQLCipher.artifactbundle"]

    /// The ELF machine(s) of a file's objects (an archive's members), as readelf names them.
    static func machine(_ path: String) throws -> String {
        try shell(#"readelf -h "$1" | sed -n 's/^ *Machine: *//p' | sort -u"#, path).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func json(_ path: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
            as? [String: Any], "\(path) is not a JSON object")
    }

    /// Checks one bundle folder: one artifact, a variant per triple (both), each path in its triple's folder,
    /// existing, of its triple's machine, with the headers and module map it names.
    static func checkBundle(_ bundle: String, label: String) throws {
        let info = try json(bundle + "/info.json")
        let artifacts = try #require(info["artifacts"] as? [String: [String: Any]], "\(label): no artifacts")
        #expect(artifacts.count == 1, "\(label): \(artifacts.keys)")
        let variants = try #require(artifacts.values.first?["variants"] as? [[String: Any]], "\(label): no variants")
        var seen: [String] = []
        for variant in variants {
            let triples = variant["supportedTriples"] as? [String] ?? []
            let path = try #require(variant["path"] as? String, "\(label): a variant without a path")
            #expect(triples.count == 1, "\(label): \(path) supports \(triples)")
            guard let triple = triples.first, let expected = machines[triple] else {
                Issue.record("\(label): unexpected triples \(triples) for \(path)")
                continue
            }
            seen.append(triple)
            #expect(path.split(separator: "/").contains(Substring(triple)), "\(label): \(path) is not in a \(triple) folder")
            #expect(FileManager.default.fileExists(atPath: bundle + "/" + path), "\(label): \(path) is missing")
            #expect(try machine(bundle + "/" + path) == expected, "\(label): \(path), named for \(triple), is not \(expected)")
            let metadata = variant["staticLibraryMetadata"] as? [String: Any] ?? [:]
            for header in metadata["headerPaths"] as? [String] ?? [] {
                #expect(FileManager.default.fileExists(atPath: bundle + "/" + header), "\(label): \(header)")
            }
            if let moduleMap = metadata["moduleMapPath"] as? String {
                #expect(FileManager.default.fileExists(atPath: bundle + "/" + moduleMap), "\(label): \(moduleMap)")
            }
        }
        #expect(seen.sorted() == [arm64, host], "\(label): variants for \(seen), want both triples once")
    }

    @Test("every artifact bundle, and every release-asset zip, has one variant per triple, each of its machine")
    func bundlesCarryBothTriples() throws {
        try Repository.requireBuild()
        for bundle in Self.bundles {
            try Self.checkBundle(Repository.dist + "/" + bundle, label: bundle)
        }
        for flavour in ["SQLCipherKit", "SQLCipherKit-openssl-inside"] {
            let folder = try TemporaryDirectory()
            let zip = Repository.dist + "/swiftpm/\(flavour)/release-asset/CSQLCipher.artifactbundle.zip"
            let unzip = try run("/usr/bin/env", ["python3", "-m", "zipfile", "-e", zip, folder.path])
            try #require(unzip.status == 0, "\(unzip)")
            try Self.checkBundle(folder.file("CSQLCipher.artifactbundle"), label: "\(flavour)'s release-asset zip")
        }
    }

    /// A package with one C executable on a copy of the engine bundle, built by SwiftPM for `triple` in `folder`.
    static func probe(in folder: TemporaryDirectory, triple: String?) throws -> (result: ProcessResult, bin: String) {
        let package = folder.file("probe")
        let setup = try shell(#"""
            set -euo pipefail
            mkdir -p "$1/Sources/Probe"
            cp -R "$2" "$1/SQLCipherEngine.artifactbundle"
            cat >"$1/Package.swift" <<'EOF'
            // swift-tools-version: 6.2
            import PackageDescription
            let package = Package(name: "Probe", targets: [
                .binaryTarget(name: "SQLCipherEngine", path: "SQLCipherEngine.artifactbundle"),
                // A C file #includes the header: no module-map autolink, so it names libm itself.
                .executableTarget(name: "Probe", dependencies: ["SQLCipherEngine"], linkerSettings: [.linkedLibrary("m")]),
            ])
            EOF
            cat >"$1/Sources/Probe/main.c" <<'EOF'
            #include "SQLCipherEngine.h"
            #include <stdio.h>
            int main(void) {
                sqlite3 *db;
                sqlite3_stmt *stmt;
                if (sqlite3_open(":memory:", &db) || sqlite3_key_v2(db, "main", "k", 1)) return 1;
                if (sqlite3_prepare_v2(db, "PRAGMA cipher_version", -1, &stmt, 0) || sqlite3_step(stmt) != SQLITE_ROW) return 1;
                printf("probe: cipher_version %s\n", (const char *)sqlite3_column_text(stmt, 0));
                return 0;
            }
            EOF
            """#, package, Repository.dist + "/SQLCipherEngine.artifactbundle")
        try #require(setup.status == 0, "\(setup)")
        var arguments = ["swift", "build", "--package-path", package, "--scratch-path", folder.file("build"), "-v"]
        if let triple { arguments += ["--triple", triple] }
        let result = try run("/usr/bin/env", arguments)
        return (result, folder.file("build") + "/\(triple ?? host)/debug")
    }

    @Test("SwiftPM takes the aarch64 variant from info.json for --triple aarch64: its C objects and the archive are AArch64, and link into a program that runs under qemu")
    func swiftPMPicksTheAArch64Variant() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let (build, bin) = try Self.probe(in: folder, triple: Self.arm64)
        // SwiftPM copies the variant whose supportedTriples holds the triple it builds for next to the objects.
        #expect(build.output.contains("SQLCipherEngine.artifactbundle/SQLCipherEngine/\(Self.arm64)/libsqlcipher.a"),
                "SwiftPM did not take the aarch64 variant: \(build)")
        #expect(!build.output.contains("SQLCipherEngine/\(Self.host)/"), "SwiftPM touched the x86_64 variant: \(build)")
        #expect(try Self.machine(bin + "/libsqlcipher.a") == "AArch64", "the archive SwiftPM linked with")
        #expect(try Self.machine(bin + "/Probe.build/main.c.o") == "AArch64", "the C target SwiftPM compiled")
        if build.status != 0 {
            // Without an aarch64 Swift SDK (this machine's case) only the final link fails: the toolchain has no
            // aarch64 Swift runtime (swiftrt.o) for its link driver. Everything SwiftPM chose is above.
            #expect(build.output.contains("linux/aarch64/swiftrt.o"), "the aarch64 build failed for another reason: \(build)")
        }
        // The objects SwiftPM built for aarch64 and the variant it chose, linked by the cross toolchain, run.
        let link = try run("/usr/bin/env", ["aarch64-linux-gnu-gcc", "-o", folder.file("probe-aarch64"),
                                            bin + "/Probe.build/main.c.o", bin + "/libsqlcipher.a", "-lm", "-lpthread"])
        try #require(link.status == 0, "\(link)")
        let ran = try run("/usr/bin/env", ["qemu-aarch64-static", folder.file("probe-aarch64")])
        let version = try Pin.current.get().cipherVersion
        #expect(ran.status == 0 && ran.output.contains("probe: cipher_version \(version)"), "\(ran)")
    }

    @Test("SwiftPM takes the x86_64 variant for the host triple, and the program runs")
    func swiftPMPicksTheHostVariant() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let (build, bin) = try Self.probe(in: folder, triple: nil)
        try #require(build.status == 0, "\(build)")
        #expect(build.output.contains("SQLCipherEngine/\(Self.host)/libsqlcipher.a"), "\(build)")
        #expect(!build.output.contains("SQLCipherEngine/\(Self.arm64)/"), "SwiftPM touched the aarch64 variant: \(build)")
        #expect(try Self.machine(bin + "/libsqlcipher.a") == Self.machines[Self.host])
        let ran = try run(bin + "/Probe", [])
        #expect(ran.status == 0 && ran.output.contains("probe: cipher_version"), "\(ran)")
    }

    @Test("the release packages' manifests, module maps and Swift sources name no architecture")
    func releasePackagesArePortable() throws {
        try Repository.requireBuild()
        // What would tie a source package to x86_64: a triple or architecture name, an arch condition, a flag.
        let pattern = #"x86_64|x86-64|amd64|i[3-6]86|aarch64|arm64|#if +arch\(|-march|-mcpu|-m64|unsafeFlags|/usr/lib/[a-z0-9_]+-linux-gnu"#
        for flavour in ["SQLCipherKit", "SQLCipherKit-openssl-inside"] {
            let package = Repository.dist + "/swiftpm/" + flavour
            let listing = try shell(#"cd "$1" && find Package.swift release-asset/Package.swift Sources -type f; find CSQLCipher.artifactbundle -name '*.modulemap' -o -name '*.h'"#,
                                    package)
            let files = listing.output.split(separator: "\n").map(String.init)
            #expect(files.contains("Package.swift") && files.contains { $0.hasSuffix(".swift") && $0.hasPrefix("Sources/SQLCipherKit/") },
                    "\(listing)")
            let matches = try run("/usr/bin/env", ["grep", "-nHE", "--", pattern] + files, in: package)
            #expect(matches.status == 1, "\(flavour) names an architecture: \(matches.output)")
        }
    }

    @Test("MANIFEST.json and the SBOM list both triples: each archive's SHA-256 and each architecture's OpenSSL")
    func manifestAndSBOMListBothTriples() throws {
        try Repository.requireBuild()
        let manifest = try Self.json(Repository.dist + "/MANIFEST.json")
        let architectures = try #require(manifest["architectures"] as? [String: [String: Any]], "no architectures")
        #expect(Set(architectures.keys) == [Self.host, Self.arm64], "\(architectures.keys)")
        var opensslVersions: [String: String] = [:]
        for (triple, facts) in architectures {
            let archives = facts["archives"] as? [String: String] ?? [:]
            #expect(archives.count >= 2, "\(triple): \(archives)")
            for (path, hash) in archives {
                #expect(try sha256(Repository.dist + "/" + path) == hash, "\(triple): \(path)")
                #expect(try Self.machine(Repository.dist + "/" + path) == Self.machines[triple], "\(triple): \(path)")
            }
            let openssl = try #require(facts["opensslVersion"] as? String, "\(triple): no OpenSSL version")
            #expect(openssl.hasPrefix("3."), "\(triple): OpenSSL \(openssl)")
            opensslVersions[triple] = openssl
        }
        let armArchive = "lib/\(Self.arm64)/libsqlcipher.a"
        #expect((manifest["archives"] as? [String: String])?[armArchive] == (try sha256(Repository.dist + "/" + armArchive)))

        let sbom = try Self.json(Repository.dist + "/sbom.cdx.json")
        let components = try #require(sbom["components"] as? [[String: Any]])
        func component(_ ref: String) -> [String: Any]? { components.first { $0["bom-ref"] as? String == ref } }
        func property(_ component: [String: Any]?, _ name: String) -> String? {
            (component?["properties"] as? [[String: String]])?.first { $0["name"] == name }?["value"]
        }
        #expect(component("openssl")?["version"] as? String == opensslVersions[Self.host])
        #expect(property(component("openssl"), "sqlcipherkit:targetTriple") == Self.host)
        let armOpenSSL = component("openssl:\(Self.arm64)")
        #expect(armOpenSSL?["version"] as? String == opensslVersions[Self.arm64], "no arm64 OpenSSL in the SBOM")
        #expect((armOpenSSL?["purl"] as? String)?.hasSuffix("?arch=arm64") == true)
        let armEngine = component("artifact:\(armArchive)")
        #expect((armEngine?["hashes"] as? [[String: String]])?.first?["content"] == (try sha256(Repository.dist + "/" + armArchive)))
        #expect(property(armEngine, "sqlcipherkit:targetTriple") == Self.arm64)
        // Folder artifacts: every archive file named with its triple and hashed.
        for bundle in Self.bundles {
            let folderComponent = component("artifact:" + bundle.replacingOccurrences(of: "/CSQLCipher.artifactbundle", with: ""))
            #expect(property(folderComponent, "sqlcipherkit:targetTriples") == "\(Self.arm64) \(Self.host)", "\(bundle)")
            let files = folderComponent?["components"] as? [[String: Any]] ?? []
            for triple in [Self.host, Self.arm64] {
                let file = files.first { ($0["name"] as? String)?.hasSuffix("/\(triple)/libsqlcipher.a") == true }
                #expect(property(file, "sqlcipherkit:targetTriple") == triple, "\(bundle): \(triple)")
                if let name = file?["name"] as? String {
                    #expect((file?["hashes"] as? [[String: String]])?.first?["content"] == (try sha256(Repository.dist + "/" + name)))
                }
            }
        }
        let dependencies = sbom["dependencies"] as? [[String: Any]] ?? []
        let bundleDependencies = dependencies.first { $0["ref"] as? String == "artifact:SQLCipherEngine.artifactbundle" }
        #expect((bundleDependencies?["dependsOn"] as? [String])?.contains("openssl:\(Self.arm64)") == true)
    }

    @Test("verify-symbols.sh reads an aarch64 archive with the cross binutils: the engine passes, one without the codec does not")
    func verifyReadsTheForeignArchive() throws {
        try Repository.requireBuild()
        let engine = Repository.dist + "/lib/\(Self.arm64)/libsqlcipher.a"
        let good = try run(Repository.verifyScript, [engine])
        #expect(good.status == 0 && good.output.contains("SQLCipher codec and keying present"), "\(good)")
        // An aarch64 "engine" with SQLite's entry points and no codec: what a build without SQLITE_HAS_CODEC
        // leaves (verify-symbols.sh checks names, so a stub shows the same as a whole plain SQLite would).
        let folder = try TemporaryDirectory()
        let made = try shell(#"""
            set -e
            cd "$1"
            printf 'int sqlite3_open_v2(void){return 0;}\nint sqlite3_prepare_v2(void){return 0;}\nint sqlite3_step(void){return 0;}\n' >plain.c
            aarch64-linux-gnu-gcc -c plain.c -o plain.o
            aarch64-linux-gnu-ar rcsD libplain.a plain.o
            """#, folder.path)
        try #require(made.status == 0, "\(made)")
        let plain = try run(Repository.verifyScript, [folder.file("libplain.a")])
        #expect(plain.status == 1, "\(plain)")
        #expect(plain.output.contains("SQLCipher symbols not defined"), "\(plain)")
        for symbol in ["sqlite3_key", "sqlite3_key_v2", "sqlite3_rekey_v2", "sqlcipherCodecAttach"] {
            #expect(plain.output.contains(symbol), "\(symbol) not named in \(plain)")
        }
    }
}
