import CSQLCipher

/// The SQLCipher engine linked into this process.
public enum Engine {
    /// Proves at run time that the engine is SQLCipher and returns its facts.
    ///
    /// It opens a private, keyed in-memory connection and asks the engine for `PRAGMA cipher_version`,
    /// `PRAGMA cipher_provider`, `PRAGMA cipher_provider_version` and `sqlite_version()`. Call it at start-up
    /// (or in a health check) so a build that linked plain SQLite by mistake fails loudly instead of writing
    /// plaintext.
    ///
    /// ```swift
    /// let facts = try Engine.selfCheck()
    /// print(facts.cipherVersion) // "4.6.1 community"
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
            sqliteVersion: try database.textValue("SELECT sqlite_version()") ?? ""
        )
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
