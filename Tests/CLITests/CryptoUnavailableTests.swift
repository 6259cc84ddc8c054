import Foundation
import ProcessTestSupport
import Testing

/// An OpenSSL that serves nothing, for real: an `openssl.cnf` (through `OPENSSL_CONF`) with FIPS default properties
/// on a machine without a FIPS module, so every fetch fails, AES and the random generator alike. SQLCipher needs
/// random bytes to initialise (its key-shielding mask, its generator's seed), so encrypted databases cannot open:
/// the error must say OpenSSL is the cause (not a wrong key, not "out of memory", not a crash), and nothing may be
/// written. Plaintext databases open (Tests/CryptoProvider/faults.c shows it, and that the same holds when only AES
/// fails, by fault injection: issue 24, item 5).
@Suite("sqlcipherkit without OpenSSL's algorithms",
       .hangGuard(.minutes(5), hang: "a command that waits forever once OpenSSL fails"))
struct CryptoUnavailableTests {
    static let passphrase = "unavailable-\(UUID().uuidString)"
    static let marker = "unavailable-marker-\(UUID().uuidString)"

    /// `OPENSSL_CONF` for a file in `folder`: FIPS default properties, so nothing without `fips=yes` serves AES.
    static func fipsConfiguration(in folder: TemporaryDirectory) throws -> [String: String] {
        let path = folder.file("openssl-fips-properties.cnf")
        try Data("""
            openssl_conf = openssl_init
            [openssl_init]
            alg_section = algorithm_sect
            [algorithm_sect]
            default_properties = fips=yes

            """.utf8).write(to: URL(fileURLWithPath: path))
        return ["OPENSSL_CONF": path]
    }

    @Test("every open fails naming OpenSSL and OPENSSL_CONF, exit 1, nothing written; without the configuration all works")
    func opensFailClearly() throws {
        let folder = try TemporaryDirectory()
        let secret = folder.file("secret.db"), plain = folder.file("plain.db"), copy = folder.file("copy.db")
        let make = try CLI.run(["query", secret, "CREATE TABLE t(v); INSERT INTO t VALUES ('\(Self.marker)')",
                                "--create", "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(make.status == 0, "\(make)")
        let decrypt = try CLI.run(["decrypt", secret, plain, "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(decrypt.status == 0, "\(decrypt)")
        let secretBytes = try Data(contentsOf: URL(fileURLWithPath: secret))
        let plainBytes = try Data(contentsOf: URL(fileURLWithPath: plain))

        var environment = try Self.fipsConfiguration(in: folder)
        environment["K"] = Self.passphrase
        // SQLCipherKit's typed error (cryptoProviderFailure): exit status 1, not 3 (wrong key), and its words.
        for arguments in [["query", secret, "SELECT count(*) FROM t", "--key-env", "K"],
                          ["encrypt", plain, copy, "--key-env", "K"], ["check", secret, "--key-env", "K"]] {
            let result = try CLI.run(arguments, environment: environment)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.stderr.contains("OpenSSL"), "\(arguments): \(result)")
            #expect(result.stderr.contains("OPENSSL_CONF"), "\(arguments): \(result)")
            #expect(!result.stderr.contains("key does not open") && !result.stderr.contains("out of memory"),
                    "\(arguments): \(result)")
            #expect(!result.stderr.contains("Program crashed"), "\(arguments): \(result)")
            #expect(!result.stderr.contains(Self.passphrase))
        }
        // A plaintext database still opens: `info` reads it through SQLite (tables, page count), no key needed.
        let info = try CLI.run(["info", plain], environment: environment)
        #expect(info.status == 0 && info.stdout.contains("format: plain"), "\(info)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: secret)) == secretBytes, "a failed open changed the file")
        #expect(try Data(contentsOf: URL(fileURLWithPath: plain)) == plainBytes)
        #expect(try folder.names() == ["openssl-fips-properties.cnf", "plain.db", "secret.db"])

        // The control: without the configuration the same commands work.
        let again = try CLI.run(["query", secret, "SELECT count(*) FROM t", "--key-env", "K"],
                                environment: ["K": Self.passphrase])
        #expect(again.status == 0, "\(again)")
        let encrypt = try CLI.run(["encrypt", plain, copy, "--key-env", "K"], environment: ["K": Self.passphrase])
        #expect(encrypt.status == 0, "\(encrypt)")
    }
}
