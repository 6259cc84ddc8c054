extension DatabasePool {
    /// Writes a consistent copy of the pool's database to `targetPath`, encrypted with `key`, while the pool and
    /// other processes keep writing: ``Database/backup(to:key:replacing:progress:)`` run on one of the pool's
    /// readers.
    ///
    /// ```swift
    /// try pool.backup(to: "/var/backups/app/app.db", key: .fromCredential("db-key", format: .rawHex))
    /// ```
    ///
    /// The reader's read transaction fixes a snapshot (WAL): writes go on, unaffected, and the copy holds the
    /// database as it stood when the backup began: every transaction committed by then, none after, none in
    /// part. It is encrypted throughout (a keyed destination connection), written under a temporary name and
    /// renamed into place when complete. One reader is busy for the duration; the others keep serving reads.
    ///
    /// - Parameters:
    ///   - targetPath: The file to write.
    ///   - key: The copy's key: the pool's own key, or a new one (a passphrase costs one key derivation).
    ///   - replacing: Whether an existing file at `targetPath` may be replaced (atomically, once the copy is
    ///     complete). Default: false.
    ///   - progress: Called after every step with the fraction of pages copied so far (0...1). It may run no SQL on
    ///     the connection the copy reads (see ``Database/backup(to:key:replacing:progress:)``).
    /// - Throws: ``SQLCipherError/Kind/invalidArgument`` when `targetPath` exists and `replacing` is false;
    ///   ``SQLCipherError/Kind/misuse`` when the pool is closed, or called from inside one of its closures; any
    ///   error of the copy (nothing is left behind then).
    public func backup(to targetPath: String, key: Key, replacing: Bool = false,
                       progress: ((Double) -> Void)? = nil) throws(SQLCipherError) {
        let temporary: TemporaryFile
        do {
            temporary = try read { database in
                try database.requireBackupTarget(targetPath, replacing: replacing)
                return try database.writeBackup(near: targetPath, key: key, progress: progress)
            }
        } catch let error as SQLCipherError {
            throw error
        } catch {
            throw .api(.sqlite, "the backup failed: \(error)", path: path)
        }
        defer { withExtendedLifetime(temporary) {} }
        try FileReplacement.move(temporary, to: targetPath, replacing: replacing)
    }
}
