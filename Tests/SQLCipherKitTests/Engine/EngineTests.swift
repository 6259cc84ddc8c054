import ProcessTestSupport
import Testing
@testable import SQLCipherKit

@Suite("Engine self-check")
struct EngineTests {
    @Test("selfCheck reports the pinned SQLCipher on OpenSSL")
    func selfCheckReportsThePinnedEngine() throws {
        let pin = try Pin.current.get()
        let facts = try Engine.selfCheck()
        #expect(facts.cipherVersion == pin.cipherVersion)
        #expect(facts.provider == "openssl")
        #expect(facts.providerVersion.hasPrefix("OpenSSL 3"))
        #expect(facts.sqliteVersion == pin.sqliteVersion)
        #expect(facts.encryptsConnections)
        // The provider the build compiled in (build-sqlcipher.sh --crypto-provider), as pin.json records it.
        #expect(facts.cryptoProvider == (pin.cryptoProvider ?? "sqlcipherkit"))
        #expect(Engine.sqliteVersion == pin.sqliteVersion)
        #expect(Engine.cipherVersion == pin.cipherVersion)
    }

    @Test("the facts describe themselves on one line")
    func factsDescription() throws {
        let pin = try Pin.current.get()
        let facts = try Engine.selfCheck()
        #expect(facts.description.hasPrefix("SQLCipher \(pin.cipherVersion) (openssl, OpenSSL 3"))
        let changes = pin.localChanges.map(\.name)
        #expect(facts.description.hasSuffix("on SQLite \(pin.sqliteVersion), crypto provider \(facts.cryptoProvider)"
            + (changes.isEmpty ? "" : ", local changes: " + changes.joined(separator: ", "))), "\(facts)")
    }

    /// The engine says which of SQLCipherKit's local changes it carries (the build step that applies them
    /// appends sqlcipherkit_local_changes() to the generated source), and they are the pin's, in its order.
    @Test("selfCheck reports the pin's local changes, as the engine records them")
    func selfCheckReportsLocalChanges() throws {
        let pin = try Pin.current.get()
        let facts = try Engine.selfCheck()
        #expect(facts.localChanges == pin.localChanges.map(\.name))
        #expect(Engine.localChanges == facts.localChanges)
        #expect(EngineFacts(cipherVersion: "v", provider: "p", providerVersion: "pv", sqliteVersion: "s",
                            encryptsConnections: true).localChanges.isEmpty)
    }

    /// What every open runs. That an open refuses an engine without it is proven with a real plain-SQLite
    /// engine: NegativeBuildTests' plain-engine program opens with and without a key and expects notSQLCipher.
    @Test("requireSQLCipher returns this engine's cipher_version")
    func requireSQLCipherReturnsCipherVersion() throws {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        #expect(try Engine.requireSQLCipher(database) == (try Pin.current.get()).cipherVersion)
    }

    /// SQLCipher's own word (PRAGMA cipher_status, 4.12+) that a connection encrypts, which every encrypted
    /// open requires. That an open refuses an engine that cannot confirm it is shown on SQLCipher 4.6.1 (the
    /// note of the bump to the current pin): the build's verification stopped with this error.
    @Test("cipher_status: 1 on a keyed connection, 0 on a plaintext one, per attached schema too")
    func cipherStatusPerConnection() throws {
        let folder = try TemporaryDirectory()
        let encrypted = try Database(path: folder.file("e.db"), key: .passphrase("k"))
        defer { encrypted.close() }
        #expect(try encrypted.cipherStatus())
        let plain = try Database(unencryptedPath: folder.file("p.db"))
        defer { plain.close() }
        #expect(try plain.cipherStatus() == false)
        try encrypted.attach(folder.file("other.db"), as: "other", key: .passphrase("k2"))
        #expect(try encrypted.cipherStatus(schema: "other"))
        try plain.attachUnencrypted(folder.file("plain-other.db"), as: "other")
        #expect(try plain.cipherStatus(schema: "other") == false)
    }
}
