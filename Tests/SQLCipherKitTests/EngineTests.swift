import Testing
@testable import SQLCipherKit

@Suite("Engine self-check")
struct EngineTests {
    @Test("selfCheck reports the pinned SQLCipher on OpenSSL")
    func selfCheckReportsThePinnedEngine() throws {
        let facts = try Engine.selfCheck()
        #expect(facts.cipherVersion == "4.6.1 community")
        #expect(facts.provider == "openssl")
        #expect(facts.providerVersion.hasPrefix("OpenSSL 3"))
        #expect(facts.sqliteVersion == "3.46.1")
        #expect(Engine.sqliteVersion == "3.46.1")
    }

    @Test("the facts describe themselves on one line")
    func factsDescription() throws {
        let facts = try Engine.selfCheck()
        #expect(facts.description.hasPrefix("SQLCipher 4.6.1 community (openssl, OpenSSL 3"))
        #expect(facts.description.hasSuffix("on SQLite 3.46.1"))
    }

    /// What every open runs. That an open refuses an engine without it is proven with a real plain-SQLite
    /// engine: NegativeBuildTests' plain-engine program opens with and without a key and expects notSQLCipher.
    @Test("requireSQLCipher returns this engine's cipher_version")
    func requireSQLCipherReturnsCipherVersion() throws {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        #expect(try Engine.requireSQLCipher(database) == "4.6.1 community")
    }
}
