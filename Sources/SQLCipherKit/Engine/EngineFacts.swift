/// What ``Engine/selfCheck()`` learned about the engine in this process.
public struct EngineFacts: Sendable, Equatable {
    /// SQLCipher's version, as `PRAGMA cipher_version` answers it (for example `4.x.y community`; the version is the pin's, Vendor/sqlcipher.pin).
    public let cipherVersion: String
    /// The crypto provider, as `PRAGMA cipher_provider` answers it (e.g. `openssl`).
    public let provider: String
    /// The crypto provider's version, as `PRAGMA cipher_provider_version` answers it.
    public let providerVersion: String
    /// The crypto provider compiled into the engine: `sqlcipherkit` (SQLCipherKit's OpenSSL provider, the default)
    /// or `reference` (SQLCipher's own OpenSSL provider, `build-sqlcipher.sh --crypto-provider reference`).
    /// `PRAGMA cipher_provider` names the crypto library (`openssl`) for both; the engine's crypto glue answers
    /// this one, from the flags the engine was compiled with.
    public let cryptoProvider: String
    /// The SQLite version SQLCipher is built on, as `sqlite_version()` answers it.
    public let sqliteVersion: String
    /// Whether a keyed connection of this engine reports that it encrypts (`PRAGMA cipher_status`); always
    /// true in facts ``Engine/selfCheck()`` returns, since the check throws otherwise.
    public let encryptsConnections: Bool
    /// SQLCipherKit's local changes compiled into the engine: one-line fixes of engine bugs upstream has not
    /// fixed yet, and the `sqlcipher-export-gate` hardening, by name (for example `fts5-trigram-like-overread`), as
    /// the engine records them. Empty for an
    /// engine built from upstream's source unchanged. `Vendor/sqlcipher.pin` (`PIN_LOCAL_CHANGES`) says why
    /// each one is there and which SQLite releases it applies to; `MANIFEST.json` and the SBOM list them too.
    public let localChanges: [String]

    /// Creates engine facts; ``Engine/selfCheck()`` is the usual source.
    public init(cipherVersion: String, provider: String, providerVersion: String, sqliteVersion: String,
                encryptsConnections: Bool, localChanges: [String] = [], cryptoProvider: String = "") {
        self.cipherVersion = cipherVersion
        self.provider = provider
        self.providerVersion = providerVersion
        self.cryptoProvider = cryptoProvider
        self.sqliteVersion = sqliteVersion
        self.encryptsConnections = encryptsConnections
        self.localChanges = localChanges
    }
}

extension EngineFacts: CustomStringConvertible {
    /// One line: `SQLCipher 4.x.y community (openssl, OpenSSL 3.x …) on SQLite 3.x.y, crypto provider
    /// sqlcipherkit`, followed by `, local changes: NAME, …` when the engine carries any.
    public var description: String {
        let changes = localChanges.isEmpty ? "" : ", local changes: " + localChanges.joined(separator: ", ")
        return "SQLCipher \(cipherVersion) (\(provider), \(providerVersion)) on SQLite \(sqliteVersion)"
            + (cryptoProvider.isEmpty ? "" : ", crypto provider \(cryptoProvider)") + changes
    }
}
