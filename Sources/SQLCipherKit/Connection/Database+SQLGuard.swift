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
    ///   and `cipher_migrate`, on every connection (use ``CipherSettings`` at open); `page_size = …` on an
    ///   encrypted schema, which SQLCipher applies as `cipher_page_size`;
    /// - `VACUUM INTO` a URI file name: SQLCipher keys the copy from the URI's `key=` parameters (an empty one
    ///   writes it in plaintext);
    /// - on an encrypted connection, every `temp_store` value SQLite reads as FILE (`getTempStore`: a first
    ///   character `1`, so `10`, `'1x'` and `1.5` too, or `file` in any case): SQLCipher does not encrypt SQLite's
    ///   temporary files. This engine also keeps them in memory whatever the pragma says
    ///   (`SQLITE_TEMP_STORE=3`): the rule is the second line of defence.
    ///
    /// SQLite consults the authorizer whenever it compiles SQL, so the rules hold wherever the action hides: a
    /// trigger body, a view, a CTE, an eponymous pragma table. They decide on what SQLite hands the authorizer
    /// after its own parsing (dequoted names, canonical function names), with SQLite's own comparisons and value
    /// parsers, so no spelling (case, comments, quoting, schema prefixes, number forms) reads differently to the
    /// guard than to SQLite (see `SQLGuard`'s rules). The library's own statements run under ``trusted(_:)``.
    func installSQLGuard(encrypted: Bool) throws(SQLCipherError) {
        let db = try requireOpenHandle()
        let context = Unmanaged.passUnretained(sqlGuard).toOpaque()
        sqlite3_set_authorizer(db, { context, action, first, second, schema, _ in
            // The connection holds its guard for as long as the handle is open.
            guard let context else { return SQLITE_OK }
            return Unmanaged<SQLGuard>.fromOpaque(context).takeUnretainedValue()
                .authorize(action: action, first: first.map { String(cString: $0) },
                           second: second.map { String(cString: $0) }, schema: schema.map { String(cString: $0) })
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
