import CSQLCipher

extension Database {
    /// The pragmas that take a key as SQL text. Keys go through ``Key``, `sqlite3_key_v2` and
    /// ``rekey(to:)`` only: in SQL text a key would sit in statement caches, error messages and logs.
    static let keyPragmas: Set<String> = ["key", "rekey", "hexkey", "hexrekey", "textkey", "textrekey"]

    /// The explanation appended to SQLite's "not authorized" when the guard refuses a statement.
    static let guardExplanation = "SQLCipherKit refuses the key pragmas (use Key and rekey(to:)) and, on an "
        + "encrypted connection, temp_store = FILE (SQLite's temporary files are not encrypted)"

    /// Installs the authorizer that refuses, with ``SQLCipherError/Kind/misuse``:
    ///
    /// - `PRAGMA key`, `rekey` and their hex/text forms, on every connection;
    /// - on an encrypted connection, `PRAGMA temp_store = FILE` (or `= 1`). SQLCipher encrypts the database,
    ///   its rollback journal and its write-ahead log, but not SQLite's temporary files: sorts, temporary
    ///   tables and indices that outgrow memory go to TMPDIR in plaintext. This engine is built with
    ///   `SQLITE_TEMP_STORE=2`, which keeps them in memory unless a connection asks for files; the reliability
    ///   tests found the marker rows in such files (deleted but still open) as soon as one did.
    ///   `temp_store = MEMORY` and `= DEFAULT` are allowed.
    func installSQLGuard(encrypted: Bool) throws(SQLCipherError) {
        let db = try openHandle()
        // The flag travels as the callback's context pointer: a C callback captures nothing.
        let context = encrypted ? UnsafeMutableRawPointer(bitPattern: 1) : nil
        sqlite3_set_authorizer(db, { context, action, name, value, _, _ in
            guard action == SQLITE_PRAGMA, let name else { return SQLITE_OK }
            let pragma = String(cString: name).lowercased()
            if Database.keyPragmas.contains(pragma) { return SQLITE_DENY }
            guard context != nil, pragma == "temp_store", let value else { return SQLITE_OK }
            let requested = String(cString: value).lowercased()
            return requested == "file" || requested == "1" ? SQLITE_DENY : SQLITE_OK
        }, context)
    }
}
