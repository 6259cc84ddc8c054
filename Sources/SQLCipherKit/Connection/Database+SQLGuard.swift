import CSQLCipher

extension Database {
    /// Installs the authorizer that refuses, with ``SQLCipherError/Kind/misuse``, every SQL-level way to put a
    /// key in SQL text or to write data of an encrypted connection to a file in plaintext (the inventory is in
    /// the documentation article "SQL that SQLCipherKit refuses"):
    ///
    /// - the key pragmas (`PRAGMA key`, `rekey` and their hex/text forms), on every connection;
    /// - `ATTACH` in SQL text, on every connection (use ``attach(_:as:key:)`` or ``attachUnencrypted(_:as:)``);
    /// - `sqlcipher_export()` in SQL text, on every connection (use ``export(to:key:cipher:replacing:progress:)``);
    /// - cipher pragmas with a value (`cipher_page_size = …`, `cipher_default_use_hmac = …`, `kdf_iter = …`),
    ///   and `cipher_migrate`, on every connection (use ``CipherSettings`` at open);
    /// - on an encrypted connection, `PRAGMA temp_store = FILE` (or `= 1`): SQLCipher does not encrypt SQLite's
    ///   temporary files. This engine keeps them in memory (`SQLITE_TEMP_STORE=2`) unless a connection asks for
    ///   files; the reliability tests found marker rows in such files as soon as one did.
    ///
    /// SQLite consults the authorizer whenever it compiles SQL, so the rules hold whatever the spelling (case,
    /// comments, quoting, schema prefixes) and wherever the action hides: a trigger body, a view, a CTE, an
    /// eponymous pragma table. The library's own statements run under ``trusted(_:)``.
    func installSQLGuard(encrypted: Bool) throws(SQLCipherError) {
        let db = try requireOpenHandle()
        let context = Unmanaged.passUnretained(sqlGuard).toOpaque()
        sqlite3_set_authorizer(db, { context, action, first, second, _, _ in
            // The connection holds its guard for as long as the handle is open.
            guard let context else { return SQLITE_OK }
            return Unmanaged<SQLGuard>.fromOpaque(context).takeUnretainedValue()
                .authorize(action: action, first: first.map { String(cString: $0) },
                           second: second.map { String(cString: $0) })
        }, context)
    }

    /// Runs the library's own SQL past the guard (the typed APIs: cipher settings at open, attach, export,
    /// migrate). Never run caller-provided SQL text in `body`.
    func trusted<Result>(_ body: () throws(SQLCipherError) -> Result) throws(SQLCipherError) -> Result {
        sqlGuard.trustedDepth += 1
        defer { sqlGuard.trustedDepth -= 1 }
        return try body()
    }
}
