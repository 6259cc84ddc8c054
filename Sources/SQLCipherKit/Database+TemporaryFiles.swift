import CSQLCipher

extension Database {
    /// Makes an encrypted connection refuse `PRAGMA temp_store = FILE` (or `= 1`).
    ///
    /// SQLCipher encrypts the database, its rollback journal and its write-ahead log, but not SQLite's
    /// temporary files: sorts, temporary tables and indices that outgrow memory are written to TMPDIR in
    /// plaintext. This engine is built with `SQLITE_TEMP_STORE=2`, which keeps them in memory unless a connection
    /// asks for files; the reliability tests found the marker rows in such files (deleted but open) as soon as
    /// `temp_store = FILE` was set. So the request is refused, failing with ``SQLCipherError/Kind/misuse``
    /// ("not authorized"); `temp_store = MEMORY` and `= DEFAULT` are allowed.
    func refuseTemporaryFiles() throws(SQLCipherError) {
        let db = try openHandle()
        sqlite3_set_authorizer(db, { _, action, name, value, _, _ in
            guard action == SQLITE_PRAGMA, let name, let value,
                  String(cString: name).lowercased() == "temp_store" else { return SQLITE_OK }
            let requested = String(cString: value).lowercased()
            return requested == "file" || requested == "1" ? SQLITE_DENY : SQLITE_OK
        }, nil)
    }
}
