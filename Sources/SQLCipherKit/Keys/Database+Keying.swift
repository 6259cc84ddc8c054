import CSQLCipher

extension Database {
    /// Hands the key to SQLCipher for `schema` through `sqlite3_key_v2`: the key never appears in SQL text.
    func applyKey(_ key: Key, schema: String) throws(SQLCipherError) {
        let db = try requireOpenHandle()
        let code = key.material.withUnsafeBytes { bytes in
            sqlite3_key_v2(db, schema, bytes.baseAddress, Int32(bytes.count))
        }
        guard code == SQLITE_OK else {
            // SQLCipher fails the keying (and only it: plaintext databases still open) when OpenSSL could not give
            // it random bytes at initialisation or cannot serve AES-256-CBC; SQLite reports either as a bare
            // SQLITE_ERROR. SQLCipherKit's crypto provider tells.
            if sqlcipherkit_provider_unavailable() != 0 {
                throw SQLCipherError(kind: .cryptoProviderFailure, resultCode: code, extendedResultCode: code,
                                     message: "OpenSSL cannot serve what SQLCipher needs (random bytes when it "
                                         + "initialises, AES-256-CBC and HMAC for every page): check OPENSSL_CONF "
                                         + "(its providers and default properties, e.g. FIPS without a FIPS "
                                         + "module); nothing was written", path: path)
            }
            throw SQLCipherError(code: code, connection: db, path: path)
        }
    }

    /// Re-encrypts the database with `newKey`, of any kind (passphrase ↔ raw), through `sqlite3_rekey_v2`.
    ///
    /// Every page is rewritten in one transaction, so the file is under one key or the other, never a mix. The
    /// engine's rekey reports its failures (the pin's local change `rekey-reports-errors`: upstream returns
    /// success whatever happened) and stops when ``interruptHandle`` interrupts it (`rekey-interruptible`); then
    /// the transaction rolls back, the file keeps its old key, and this connection, whose write key may now be
    /// the new one, is closed: reopen with the old key. After a commit, a fresh connection must open the file
    /// with `newKey` and read every page (through the write-ahead log, where the new pages may still be). To
    /// remove encryption, use ``export(to:key:cipher:replacing:progress:)`` with no key or
    /// ``Database/decrypt(path:key:cipher:progress:)``.
    ///
    /// - Throws: ``SQLCipherError/Kind/interrupted`` (the file keeps its old key), ``SQLCipherError/Kind/full``
    ///   (likewise), ``SQLCipherError/Kind/busy`` when another connection holds a lock (likewise), or the error of
    ///   the check under the new key, whose message says the rekey was committed.
    public func rekey(to newKey: Key) throws(SQLCipherError) {
        var committed = false
        try rekey(to: newKey, committed: &committed)
    }

    /// `rekey(to:)`, telling whether the rekey was committed (`committed`), also when it then throws: the file is
    /// under `newKey` then.
    func rekey(to newKey: Key, committed: inout Bool) throws(SQLCipherError) {
        let db = try requireOpenHandle()
        // Not from an observer's event or inside a step (found by a reviewer): the rekey's own write transaction
        // would run in the middle of the connection's operation.
        try requireNoSQLUserCode()
        guard !isInTransaction else {
            throw .api(.misuse, "rekey cannot run inside a transaction", path: path)
        }
        let code = newKey.material.withUnsafeBytes { bytes in
            sqlite3_rekey_v2(db, "main", bytes.baseAddress, Int32(bytes.count))
        }
        committed = code == SQLITE_OK
        if isClosed {
            // Closed by the observer during the rekey (at a busy wait): released now, and said as it is.
            releaseDeferredClose()
            throw .api(.misuse, "the connection was closed during the rekey (by its observer): "
                + (code == SQLITE_OK ? "the rekey was committed; open the file with the new key"
                    : "the rekey did not take effect; the file keeps its old key"), path: path)
        }
        guard code == SQLITE_OK else {
            let failure = SQLCipherError(code: code, connection: db, path: path)
            close()
            let what = switch failure.kind {
            case .interrupted: "it was interrupted"
            case .full: "the disk is full"
            case .busy: "another connection holds a lock on the database"
            // The engine's own words for the code: the connection's message is stale (the rekey sets none).
            default: String(cString: sqlite3_errstr(code))
            }
            throw .api(failure.kind, "the rekey did not take effect (\(what)): the file keeps its old key; this "
                + "connection was closed, reopen it with the old key", path: path)
        }
        guard path != ":memory:", !path.isEmpty else { return }
        do throws(SQLCipherError) {
            var check = configuration
            check.mode = .readOnly
            check.observer = nil  // the library's own check, not the caller's work
            let verifier = try Database(path: path, key: newKey, configuration: check)
            defer { verifier.close() }
            // quick_check reads every page through the pager, so each one is decrypted and authenticated with
            // the new key (cipher_integrity_check would read the main file only, not the log).
            guard try verifier.textValue("PRAGMA quick_check") == "ok" else {
                throw SQLCipherError.api(.corrupt, "pages do not read back under the new key")
            }
        } catch {
            close()
            throw .api(error.kind, "the rekey was committed, but the file did not read back under the new key "
                + "(\(error.message)): this connection was closed; open the file with the new key to check it",
                       path: path)
        }
        // In WAL mode the new pages are still in the log and the main file holds old-key pages; move them in now, so
        // the file is under one key (a failure here only leaves that to a later checkpoint).
        if (try? journalMode()) == .wal { try? execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        if isClosed {
            // Closed by its observer after the check under the new key (at the journal mode's or the checkpoint's
            // statement): said as it is (found by an attacker: it read as a failed check; by a reviewer: a close at
            // the checkpoint returned success).
            releaseDeferredClose()
            throw .api(.misuse, "the rekey was committed and the file read back under the new key; then the "
                + "connection was closed (by its observer): open the file with the new key", path: path)
        }
    }
}
