/// What ``Engine/selfCheck()`` learned about the engine in this process.
public struct EngineFacts: Sendable, Equatable {
    /// SQLCipher's version, as `PRAGMA cipher_version` answers it (e.g. `4.6.1 community`).
    public let cipherVersion: String
    /// The crypto provider, as `PRAGMA cipher_provider` answers it (e.g. `openssl`).
    public let provider: String
    /// The crypto provider's version, as `PRAGMA cipher_provider_version` answers it.
    public let providerVersion: String
    /// The SQLite version SQLCipher is built on, as `sqlite_version()` answers it.
    public let sqliteVersion: String

    /// Creates engine facts; ``Engine/selfCheck()`` is the usual source.
    public init(cipherVersion: String, provider: String, providerVersion: String, sqliteVersion: String) {
        self.cipherVersion = cipherVersion
        self.provider = provider
        self.providerVersion = providerVersion
        self.sqliteVersion = sqliteVersion
    }
}

extension EngineFacts: CustomStringConvertible {
    /// One line: `SQLCipher 4.6.1 community (openssl, OpenSSL 3.0.19 …) on SQLite 3.46.1`.
    public var description: String {
        "SQLCipher \(cipherVersion) (\(provider), \(providerVersion)) on SQLite \(sqliteVersion)"
    }
}
