import CSQLCipher

/// The SQLCipher engine linked into this process.
public enum Engine {
    /// Proves at run time that the engine is SQLCipher and returns its facts.
    ///
    /// It opens a private, keyed in-memory connection (which itself confirms `PRAGMA cipher_status`: the
    /// connection encrypts) and asks the engine for `PRAGMA cipher_version`, `PRAGMA cipher_provider`,
    /// `PRAGMA cipher_provider_version` and `sqlite_version()`, and the engine's crypto glue for the crypto
    /// provider compiled in (``EngineFacts/cryptoProvider``). Call it at start-up
    /// (or in a health check) so a build that linked plain SQLite by mistake fails loudly instead of writing
    /// plaintext.
    ///
    /// ```swift
    /// let facts = try Engine.selfCheck()
    /// print(facts) // "SQLCipher 4.x.y community (openssl, OpenSSL 3.…) on SQLite 3.…"
    /// ```
    ///
    /// - Throws: ``SQLCipherError/Kind/notSQLCipher`` when `cipher_version` returns no row (the
    ///   engine is plain SQLite); another ``SQLCipherError`` when the engine cannot run the check.
    public static func selfCheck() throws(SQLCipherError) -> EngineFacts {
        // A throwaway key for the in-memory connection: SQLCipher answers the provider pragmas only on a
        // keyed connection. Nothing is ever written with it.
        let database = try Database(path: ":memory:", key: .passphrase("SQLCipherKit self-check"))
        defer { database.close() }
        return EngineFacts(
            cipherVersion: try requireSQLCipher(database),
            provider: try database.textValue("PRAGMA cipher_provider") ?? "",
            providerVersion: try database.textValue("PRAGMA cipher_provider_version") ?? "",
            sqliteVersion: try database.textValue("SELECT sqlite_version()") ?? "",
            encryptsConnections: try database.cipherStatus(),
            localChanges: localChanges,
            cryptoProvider: String(cString: sqlcipherkit_crypto_provider())
        )
    }

    /// SQLCipherKit's local changes compiled into the engine (see ``EngineFacts/localChanges``), as the engine
    /// records them (`sqlcipherkit_local_changes()`, written by the build step that applies them).
    public static var localChanges: [String] {
        guard let names = sqlcipherkit_local_changes() else { return [] }
        return String(cString: names).split(separator: " ").map(String.init)
    }

    /// The SQLCipher version linked into this process, as `PRAGMA cipher_version` answers it on an unkeyed
    /// in-memory connection (no key derivation, so it is cheap), or nil when the engine is not SQLCipher.
    ///
    /// It names the engine; it proves nothing about encryption: use ``selfCheck()`` for that.
    public static var cipherVersion: String? {
        guard let database = try? Database(unencryptedPath: ":memory:") else { return nil }
        defer { database.close() }
        return try? requireSQLCipher(database)
    }

    /// The version of the SQLite library linked into this process, as `sqlite3_libversion()` reports it.
    public static var sqliteVersion: String {
        String(cString: sqlite3_libversion())
    }

    /// Returns `cipher_version`, or throws ``SQLCipherError/Kind/notSQLCipher`` when the engine
    /// behind `database` gives none.
    @discardableResult
    static func requireSQLCipher(_ database: Database) throws(SQLCipherError) -> String {
        guard let version = try database.textValue("PRAGMA cipher_version"), !version.isEmpty else {
            throw .api(.notSQLCipher, "PRAGMA cipher_version returned no row; the engine is SQLite \(sqliteVersion)")
        }
        return version
    }
}
