import CSQLCipher
import Glibc

/// Online backup: a consistent, encrypted copy of a database that other connections and processes keep
/// writing, with SQLite's backup API (`sqlite3_backup_*`) copying pages into a destination connection that was
/// keyed before it wrote anything.
extension Database {
    /// Pages copied per backup step, between two progress reports: 1 MiB at SQLCipher's 4 KiB pages.
    static let backupPagesPerStep: Int32 = 256

    /// Writes a consistent copy of this database to `targetPath`, encrypted with `key`, while other connections
    /// (in this process or others) keep writing.
    ///
    /// ```swift
    /// try db.backup(to: "/var/backups/app/app.db", key: key) { fraction in print(fraction) }
    /// ```
    ///
    /// The copy is the database as it stood at one moment: a read transaction on this connection fixes a
    /// snapshot before the first page is copied, and every page comes from it. In WAL mode, writers keep
    /// committing meanwhile (their commits are not in the copy); with a rollback journal they wait for the
    /// backup, within their busy timeout. Pages are decrypted with this connection's key and encrypted with
    /// `key` (the same key, or a new one) by a destination connection keyed before it writes anything: no page
    /// is ever written in plaintext. The copy is written to a temporary file beside `targetPath`, synced, and
    /// renamed into place only when complete; on failure nothing is left behind.
    ///
    /// The copy keeps the source's cipher settings (``Configuration/cipher``: page size, KDF, HMAC), page layout,
    /// header fields (`user_version`, `application_id`) and journal mode. To change settings, use
    /// ``export(to:key:cipher:replacing:progress:)`` on a quiet database.
    ///
    /// - Parameters:
    ///   - targetPath: The file to write.
    ///   - key: The copy's key. Pass this connection's key for the same key.
    ///   - replacing: Whether an existing file at `targetPath` may be replaced (atomically, once the copy is
    ///     complete). Default: false.
    ///   - progress: Called after every step with the fraction of pages copied so far (0...1). It never
    ///     decreases: the snapshot keeps SQLite from restarting the copy when another connection commits. It may run
    ///     no SQL on this connection (that throws ``SQLCipherError/Kind/misuse``): a write there would turn the
    ///     backup's snapshot into a write transaction, which the copy then waits for without end (found by an
    ///     attacker).
    /// - Throws: ``SQLCipherError/Kind/misuse`` inside a transaction (the backup takes its own snapshot);
    ///   ``SQLCipherError/Kind/invalidArgument`` when `targetPath` exists and `replacing` is false, or is this
    ///   database; ``SQLCipherError/Kind/interrupted`` after ``interrupt()``; any error of the copy.
    public func backup(to targetPath: String, key: Key, replacing: Bool = false,
                       progress: ((Double) -> Void)? = nil) throws(SQLCipherError) {
        _ = try requireOpenHandle()
        guard !isInTransaction else {
            throw .api(.misuse, "backup cannot run inside a transaction: it opens one of its own, for its snapshot",
                       path: path)
        }
        try requireBackupTarget(targetPath, replacing: replacing)
        let interrupts = interruptHandle.requestCount
        try execute("BEGIN DEFERRED TRANSACTION")
        let temporary: TemporaryFile
        do throws(SQLCipherError) {
            temporary = try writeBackup(near: targetPath, key: key, progress: progress)
        } catch {
            try? execute("ROLLBACK TRANSACTION")
            releaseDeferredClose()
            throw error
        }
        // The transaction only read: ending it cannot lose anything.
        try? execute("ROLLBACK TRANSACTION")
        defer { withExtendedLifetime(temporary) {} }
        try interruptHandle.requireNoInterrupt(since: interrupts, "the backup was interrupted before its copy was "
            + "renamed into place: nothing was written to '\(targetPath)'", path: path)
        try FileReplacement.move(temporary, to: targetPath, replacing: replacing)
    }

    /// Refuses a target that exists (without `replacing`) or that is this database itself.
    func requireBackupTarget(_ targetPath: String, replacing: Bool) throws(SQLCipherError) {
        guard path != ":memory:", !path.isEmpty else {
            throw .api(.invalidArgument, "an in-memory database has no file to back up; use export(to:key:) instead",
                       path: path)
        }
        var source = stat(), target = stat()
        if stat(path, &source) == 0, stat(targetPath, &target) == 0,
           source.st_dev == target.st_dev, source.st_ino == target.st_ino {
            throw .api(.invalidArgument, "'\(targetPath)' is the database itself: back up to another file",
                       path: targetPath)
        }
        guard replacing || access(targetPath, F_OK) != 0 else {
            throw .api(.invalidArgument, "'\(targetPath)' already exists: a backup writes a new file (pass replacing: "
                + "true to replace it)", path: targetPath)
        }
    }

    /// Copies this database, inside the read transaction the caller opened, into a new temporary file beside
    /// `targetPath` keyed with `key`, synced to disk; returns it (locked while it lives), no more open than this
    /// database's file. On failure nothing is left.
    func writeBackup(near targetPath: String, key: Key, progress: ((Double) -> Void)?) throws(SQLCipherError)
        -> TemporaryFile {
        let interrupts = interruptHandle.requestCount
        guard keyKind != nil else {
            // SQLCipher's backup copies pages between databases with the same encryption only.
            throw .api(.misuse, """
                this database is not encrypted, and the online backup copies pages only between databases \
                encrypted alike: write an encrypted copy with Database.export(to:key:cipher:), or encrypt the file \
                with Database.encrypt(path:key:cipher:)
                """, path: path)
        }
        // The snapshot: the transaction's first read fixes the state every step below copies. Without it each
        // step would read the latest state, and a commit between two steps would restart the copy from page 1.
        try execute("SELECT count(*) FROM sqlite_schema")
        let file = try FileReplacement.createTemporary(
            near: targetPath, mode: FileReplacement.mode(from: path, plaintext: false))
        let temporary = file.path
        // Keyed and proven to encrypt (cipher_status) before the backup writes its first page.
        var settings = configuration
        settings.mode = .readWriteCreate
        settings.leavesFolderAsFound = false
        // The library's own connection to its temporary file: not the caller's database, not observed.
        settings.observer = nil
        // On failure here or below, dropping `file` removes the private folder and everything in it.
        let destination = try Database(path: temporary, key: key, configuration: settings)
        do throws(SQLCipherError) {
            // Taken after the snapshot's statement, at whose end the caller's observer may have closed the
            // connection, and the engine released it (found by an attacker; see releaseDeferredClose).
            let source = try requireOpenHandle()
            try copyPages(from: source, to: destination, progress: progress, interruptsBefore: interrupts)
            destination.close()
            try FileReplacement.sync(file)
            return file
        } catch {
            destination.close()
            throw error
        }
    }

    /// Runs `sqlite3_backup` from `source` to `destination`, step by step, reporting progress.
    private func copyPages(from source: OpaquePointer, to destination: Database, progress: ((Double) -> Void)?,
                           interruptsBefore interrupts: Int) throws(SQLCipherError) {
        let target = try destination.requireOpenHandle()
        guard let backup = sqlite3_backup_init(target, "main", source, "main") else {
            throw SQLCipherError(code: sqlite3_errcode(target), connection: target, path: destination.path)
        }
        var finished = false
        defer { if !finished { sqlite3_backup_finish(backup) } }
        while true {
            let code = sqlite3_backup_step(backup, Database.backupPagesPerStep)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_OK || code == SQLITE_BUSY || code == SQLITE_LOCKED else {
                finished = true
                sqlite3_backup_finish(backup)
                throw SQLCipherError(code: code, connection: target, path: destination.path)
            }
            if sqlite3_is_interrupted(source) != 0 || interruptHandle.requestCount != interrupts {
                throw .api(.interrupted, "the backup was interrupted; nothing was written", path: path)
            }
            if code != SQLITE_OK {
                sqlite3_sleep(10)
                continue
            }
            let total = Double(max(1, sqlite3_backup_pagecount(backup)))
            // Reported as SQLite counts it: a restarted copy (which the snapshot rules out) would show as a drop.
            if let progress {
                callingUserCode(runsNoSQL: true) { progress(1 - Double(sqlite3_backup_remaining(backup)) / total) }
                try requireOpenAfterProgress()
            }
        }
        finished = true
        let code = sqlite3_backup_finish(backup)
        guard code == SQLITE_OK else {
            throw SQLCipherError(code: code, connection: target, path: destination.path)
        }
        if let progress {
            callingUserCode(runsNoSQL: true) { progress(1) }
            try requireOpenAfterProgress()
        }
    }

    /// Throws ``SQLCipherError/Kind/misuse`` when the progress closure closed this connection: the backup stops
    /// there (SQLite would go on copying from the closed connection, kept until the copy ends), and nothing is
    /// written.
    private func requireOpenAfterProgress() throws(SQLCipherError) {
        guard isClosed else { return }
        throw .api(.misuse, "the connection was closed during its backup (by the progress closure): the backup "
            + "stopped and nothing was written", path: path)
    }
}
