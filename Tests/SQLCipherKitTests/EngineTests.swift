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
        #expect(Engine.sqliteVersion == pin.sqliteVersion)
        #expect(Engine.cipherVersion == pin.cipherVersion)
    }

    @Test("the facts describe themselves on one line")
    func factsDescription() throws {
        let pin = try Pin.current.get()
        let facts = try Engine.selfCheck()
        #expect(facts.description.hasPrefix("SQLCipher \(pin.cipherVersion) (openssl, OpenSSL 3"))
        #expect(facts.description.hasSuffix("on SQLite \(pin.sqliteVersion)"))
    }

    /// What every open runs. That an open refuses an engine without it is proven with a real plain-SQLite
    /// engine: NegativeBuildTests' plain-engine program opens with and without a key and expects notSQLCipher.
    @Test("requireSQLCipher returns this engine's cipher_version")
    func requireSQLCipherReturnsCipherVersion() throws {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        #expect(try Engine.requireSQLCipher(database) == (try Pin.current.get()).cipherVersion)
    }
}
