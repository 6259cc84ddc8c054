import Foundation
import ProcessTestSupport
import Testing

/// SQLCipherKit's crypto provider against SQLCipher's reference one (issue 24): the switch that builds either
/// (`build-sqlcipher.sh --crypto-provider`), the differential and known-answer test of the provider functions,
/// and the file matrix between engines built with each. The scripts in `Tests/CryptoProvider/` do the building
/// (the reference engine is cached in `Vendor/build/engine-reference/`: about 3 minutes the first time).
/// Serialized: they share that engine and `Vendor/build/crypto-provider/`.
@Suite("Crypto provider: switch, differential, file matrix", .serialized)
struct CryptoProviderTests {
    static let folder = Repository.path("Tests/CryptoProvider")

    /// The JSON object in `path`.
    static func json(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("--crypto-provider reference builds SQLCipher's own provider, and pin.json, the archive and the glue say so")
    func referenceSwitch() throws {
        let built = try run(Self.folder + "/engine.sh", ["reference"])
        #expect(built.status == 0, "\(built)")
        let dir = built.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let pin = try Self.json(dir + "/pin.json")
        #expect(pin["cryptoProvider"] as? String == "reference")
        let flags = try #require(pin["compileFlags"] as? [String])
        #expect(flags.contains("-DSQLCIPHER_CRYPTO_OPENSSL"))
        #expect(!flags.contains { $0.hasPrefix("-DSQLCIPHER_CRYPTO_CUSTOM") })
        let symbols = try shell(#"nm -g --defined-only "$1" | awk '{print $NF}'"#, dir + "/lib/libsqlcipher.a").output
            .split(separator: "\n").map(String.init)
        #expect(symbols.contains("sqlcipher_openssl_setup"))
        #expect(!symbols.contains("sqlcipherkit_openssl_setup"))
        #expect(symbols.contains("sqlcipherkit_crypto_provider"))
        let amalgamation = try String(contentsOfFile: dir + "/amalgamation/sqlite3.c", encoding: .utf8)
        #expect(!amalgamation.contains("\nint sqlcipherkit_openssl_setup"), "no EXTRA_SRC for the reference")
    }

    @Test("the default build names SQLCipherKit's provider in pin.json, MANIFEST.json and the SBOM")
    func defaultBuildNamesItsProvider() throws {
        let pin = try Self.json(Repository.path("Vendor/build/pin.json"))
        let name = try #require(pin["cryptoProvider"] as? String)
        #expect(["sqlcipherkit", "reference"].contains(name))
        try Repository.requireBuild()
        let manifest = try Self.json(Repository.dist + "/MANIFEST.json")
        let provider = try #require(manifest["cryptoProvider"] as? [String: Any])
        #expect(provider["name"] as? String == name)
        let components = try #require(try Self.json(Repository.dist + "/sbom.cdx.json")["components"] as? [[String: Any]])
        let sqlcipher = try #require(components.first { $0["bom-ref"] as? String == "sqlcipher" })
        let properties = try #require(sqlcipher["properties"] as? [[String: String]])
        #expect(properties.contains { $0["name"] == "sqlcipherkit:cryptoProvider" && $0["value"] == name })
        let facts = try run(Repository.dist + "/bin/sqlcipherkit", ["selfcheck"])
        #expect(facts.output.contains("crypto_provider: \(name) (compiled into the engine)"), "\(facts)")
    }

    /// Both providers' hmac, kdf and cipher through their sqlcipher_provider tables, in one program: known answers
    /// (RFC 2202, RFC 4231, RFC 6070, RFC 7914, SP 800-38A) and random cases, on the system's libcrypto and on the
    /// sqlcipher3 wheel's (OpenSSL 3.6), which the interop tests install (required here when they have).
    @Test("differential and known-answer: 0 differences on every libcrypto")
    func differential() throws {
        let wheel = FileManager.default.fileExists(atPath: Repository.path("Vendor/build/python-venv/.sqlcipherkit-requirement"))
        let result = try run(Self.folder + "/run-differential.sh", [],
                             environment: ["DIFFERENTIAL_REQUIRE_WHEEL": wheel ? "1" : ""])
        print(result.output.split(separator: "\n").filter { !$0.hasPrefix("    ") }.joined(separator: "\n"))
        #expect(result.status == 0, "\(result)")
        let totals = result.output.split(separator: "\n").filter { $0.hasPrefix("TOTAL: ") }
        // The default build on each libcrypto, then the fallbacks: compiled without the low-level SHA API, with the
        // EVP paths forced, and as built under an openssl.cnf in which another provider (aesproxy) serves AES.
        #expect(totals.count == (wheel ? 5 : 4), "\(result)")
        // Each at least the 81 known-answer and 5,300 random checks of scale 1 (the script holds them to that too):
        // "0 differences" over fewer cases proves less.
        for total in totals {
            #expect(total.contains(" checks, 0 differences"), "\(total)")
            let checks = total.dropFirst("TOTAL: ".count).split(separator: " ").first.flatMap { Int($0) }
            #expect((checks ?? 0) >= 5_381, "\(total)")
        }
        #expect(result.output.contains("OpenSSL 3.0"), "the system's libcrypto")
        if wheel { #expect(result.output.contains("OpenSSL 3.6"), "the wheel's libcrypto") }
        let paths = result.output.split(separator: "\n").filter { $0.hasPrefix("sqlcipherkit provider: ") }
        #expect(paths.filter { $0.contains("AES-256-CBC direct, HMAC by hand") }.count == (wheel ? 2 : 1), "\(paths)")
        #expect(paths.filter { $0.contains("AES-256-CBC direct, HMAC through EVP_MAC") }.count == 1, "\(paths)")
        #expect(paths.filter { $0.contains("AES-256-CBC through EVP, HMAC through EVP_MAC") }.count == 1, "\(paths)")
        // The switch-over by configuration: aesproxy serves AES, so the direct path (OpenSSL's `default` provider
        // only) is left for EVP, and the module itself reports the AES work it did.
        #expect(paths.filter { $0.contains("AES-256-CBC through EVP, HMAC by hand") && $0.contains("\"aesproxy\" provider") }
            .count == 1, "\(paths)")
        #expect(result.output.split(separator: "\n").contains { $0.hasPrefix("aesproxy: ") && !$0.hasSuffix(" 0 updates") },
                "\(result)")
        // FIPS default properties with no FIPS module: nothing serves AES; the provider refuses at ctx_init.
        #expect(result.output.contains("exit status under FIPS properties: 2"), "\(result)")
    }

    /// OpenSSL failing inside SQLCipherKit's provider (Tests/CryptoProvider/faults.c, compiled with the test-only
    /// SQLCIPHERKIT_PROVIDER_FAULTS): the AES fetch, a cipher update or final, the zero re-keying, RAND_bytes and the
    /// HMAC, at several positions in reads and writes, in rollback-journal and WAL mode, and a no-fault control.
    @Test("fault injection: nothing written, the connection unusable and its failure recorded, plaintext still opens")
    func faultInjection() throws {
        let result = try run(Self.folder + "/run-faults.sh", [])
        print(result.output.split(separator: "\n").filter { !$0.hasPrefix("    ") }.joined(separator: "\n"))
        #expect(result.status == 0, "\(result)")
        let summary = try #require(result.output.split(separator: "\n").first { $0.hasPrefix("FAULTS: ") })
        #expect(summary.hasPrefix("FAULTS: 75 of 75 runs as expected"), "\(summary)")
        // The engines that ship hold no fault injection, and do hold what SQLCipherKit's errors ask.
        let symbols = try shell(#"nm -g --defined-only "$1" | awk '{print $NF}'"#,
                                Repository.path("Vendor/build/lib/libsqlcipher.a")).output
            .split(separator: "\n").map(String.init)
        #expect(!symbols.contains("sqlcipherkit_fault_arm"))
        #expect(symbols.contains("sqlcipherkit_provider_failed") && symbols.contains("sqlcipherkit_provider_unavailable"))
    }

    @Test("file matrix: written by one provider, read by the other, tampered copies refused the same way")
    func fileMatrix() throws {
        let result = try run(Self.folder + "/run-matrix.sh", [])
        print(result.output.split(separator: "\n").filter { !$0.hasPrefix("    ") }.joined(separator: "\n"))
        #expect(result.status == 0, "\(result)")
        #expect(result.output.contains("both readers agree line for line: yes"), "\(result)")
        #expect(result.output.contains("AESPROXY: ") && result.output.contains("as the reference reads them: yes"),
                "\(result)")
        // The counts, exact: the matrix is deterministic (252 cases from a fixed seed, each written by 2 engines
        // and read by 2, compatibility 1 a quarter of them, aesproxy's files read by 2), so agreement over a
        // matrix that lost cases must fail here too, not only in the script's own minimums. A matrix that grows
        // changes these on purpose, with EXPECT_CASES in run-matrix.sh.
        let counts = try #require(result.output.split(separator: "\n").first { $0.hasPrefix("COUNTS: ") }, "\(result)")
        #expect(counts.hasSuffix(": yes"), "\(counts)")
        #expect(Self.counts(in: counts) == ["cases": 252, "files": 1008, "tampered": 1008, "refused": 756,
                                            "no_hmac": 252, "proxy_files": 504], "\(counts)")
    }

    /// The counts of a line "PREFIX: name N (at least M), name N (at least M): verdict", by name.
    static func counts(in line: Substring) -> [String: Int] {
        var counts: [String: Int] = [:]
        let body = line.drop { $0 != ":" }.dropFirst()
        for item in body.split(separator: ",") {
            let words = item.split(separator: " ")
            if words.count >= 2, let value = Int(words[1]) { counts[String(words[0])] = value }
        }
        return counts
    }
}
