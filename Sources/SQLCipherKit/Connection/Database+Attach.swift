import CSQLCipher

extension Database {
    /// Attaches another encrypted database file as schema `name`, keyed with `key`, so queries can join across
    /// both (`SELECT … FROM name.table`). A missing file is created, encrypted with `key`.
    ///
    /// The attached database uses SQLCipher 4 settings. The key is bound to the `ATTACH` statement as a
    /// parameter, never written into its SQL text (SQL text may not `ATTACH` at all: see the article
    /// "SQL that SQLCipherKit refuses"). A wrong key throws ``SQLCipherError/Kind/wrongKeyOrNotADatabase`` and
    /// attaches nothing.
    public func attach(_ path: String, as name: String, key: Key) throws(SQLCipherError) {
        try attach(path, as: name, material: key.material)
        // Its pages go through the codec: the guard treats it as it treats an encrypted main database.
        sqlGuard.encryptedSchemas.insert(name.asciiLowercased)
    }

    /// Attaches a database file that is *not* encrypted as schema `name`: everything written into it,
    /// including rows copied from an encrypted schema, is stored in plaintext. This is the one way to attach a
    /// plaintext file; to copy a whole database into one, ``export(to:key:cipher:replacing:progress:)`` with
    /// no key does the same.
    public func attachUnencrypted(_ path: String, as name: String) throws(SQLCipherError) {
        try attach(path, as: name, material: SecureBytes(count: 0) { _ in })
    }

    private func attach(_ path: String, as name: String, material: SecureBytes) throws(SQLCipherError) {
        // A URI's key would reach errors (the path is in them), as it would for an open: refused alike.
        try Database.requireNoKeyInURI(path)
        // The engine attaches nothing unless the library opens it for this one ATTACH; opened before the statement
        // is prepared (changing the flags expires prepared statements), closed whatever happens.
        try withAttachmentOpen { () throws(SQLCipherError) in
            try attachOpened(path, as: name, material: material)
        }
    }

    private func attachOpened(_ path: String, as name: String, material: SecureBytes) throws(SQLCipherError) {
        let statement = try trusted { () throws(SQLCipherError) in
            try prepare("ATTACH DATABASE ?1 AS \(name.quotedIdentifier) KEY ?2")
        }
        try statement.bind(path, at: 1)
        // SQLITE_STATIC: SQLite reads the key straight from its wiped storage and keeps no copy of it.
        try material.withUnsafeBytes { (bytes) throws(SQLCipherError) in
            defer { statement.clearBindings() }
            let code = sqlite3_bind_blob(statement.handle, 2, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                         Int32(bytes.count), SQLITE_STATIC)
            guard code == SQLITE_OK else {
                throw SQLCipherError(code: code, connection: handle, path: path, sql: statement.sql)
            }
            do throws(SQLCipherError) {
                try trusted { () throws(SQLCipherError) in
                    try statement.execute()
                    try applySynchronous(schema: name)
                }
            } catch {
                throw SQLCipherError(kind: error.kind, resultCode: error.resultCode,
                                     extendedResultCode: error.extendedResultCode, message: error.message,
                                     sql: error.sql, path: path, sqlIsTheLibrarys: true)
            }
        }
    }

    /// Detaches the database attached as `name`.
    public func detach(_ name: String) throws(SQLCipherError) {
        try execute("DETACH DATABASE \(name.quotedIdentifier)")
        sqlGuard.encryptedSchemas.remove(name.asciiLowercased)
    }
}
