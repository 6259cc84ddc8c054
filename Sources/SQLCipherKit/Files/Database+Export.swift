import CSQLCipher
import Glibc

extension Database {
    /// Copies the whole database into a new file at `targetPath`, encrypted with `key` and `cipher`, or
    /// plaintext when `key` is nil, with `sqlcipher_export`.
    ///
    /// The target's key reaches SQLCipher through `sqlite3_key_v2` on the attached schema, never in SQL text.
    /// The copy is written to a temporary file in the target's folder, synced, and renamed into place only when
    /// complete: `targetPath` never holds half a database.
    ///
    /// - Parameters:
    ///   - targetPath: The new file's path.
    ///   - key: The copy's key, or nil for a plaintext copy.
    ///   - cipher: The copy's cipher settings.
    ///   - replacing: Whether an existing file at `targetPath` may be replaced (atomically, once the copy is
    ///     complete). Default: false.
    ///   - progress: Called now and then with the fraction of the copy written so far (0...1). While the copy
    ///     runs it may not use this connection (SQLite forbids it, and the statement throws
    ///     ``SQLCipherError/Kind/misuse``); its last call, with 1, comes after the copy, under the whole SQL guard.
    /// - Throws: ``SQLCipherError/Kind/invalidArgument`` when `targetPath` exists and `replacing` is false;
    ///   any error of the copy (nothing is left behind then).
    public func export(to targetPath: String, key: Key?, cipher: CipherSettings = CipherSettings(),
                       replacing: Bool = false, progress: ((Double) -> Void)? = nil) throws(SQLCipherError) {
        guard replacing || access(targetPath, F_OK) != 0 else {
            throw .api(.invalidArgument, "'\(targetPath)' already exists: export writes a new file", path: targetPath)
        }
        let interrupts = interruptHandle.requestCount
        let temporary = try writeExport(near: targetPath, key: key, cipher: cipher, progress: progress)
        defer { withExtendedLifetime(temporary) {} }
        try interruptHandle.requireNoInterrupt(since: interrupts, "the export was interrupted before its copy was "
            + "renamed into place: nothing was written to '\(targetPath)'", path: path)
        try FileReplacement.move(temporary, to: targetPath, replacing: replacing)
    }

    /// Exports into a new temporary file beside `targetPath`, synced to disk; returns it (locked while it lives).
    /// The file is no more open than this database's (at most 0600 when `key` is nil). On failure nothing is left.
    func writeExport(near targetPath: String, key: Key?, cipher: CipherSettings,
                     progress: ((Double) -> Void)? = nil) throws(SQLCipherError) -> TemporaryFile {
        try cipher.validate()
        try cipher.requireRecoverableSalt(for: key)
        // An interrupt between two of the statements below would be forgotten by SQLite: count them all.
        let interrupts = interruptHandle.requestCount
        let stopped = { [interruptHandle] in interruptHandle.requestCount != interrupts }
        let file = try FileReplacement.createTemporary(
            near: targetPath, mode: FileReplacement.mode(from: path, plaintext: key == nil))
        let temporary = file.path
        // The copy is about as large as the source: its growing size measures the progress.
        let expectedBytes = Double(max(1, try pageCount() * pageSize()))
        let report = progress.map { report in
            { [unowned self] () -> Bool in
                // Stopped by an interrupt, or by a close from the closure itself (found by a reviewer).
                if stopped() || isClosed { return true }
                var status = stat()
                if fstat(file.fileDescriptor, &status) == 0 {
                    callingUserCode { report(min(1, Double(status.st_size) / expectedBytes)) }
                }
                return false
            }
        } ?? stopped
        let schema = "sqlcipherkit_export"
        // On failure, dropping `file` removes the private folder and everything in it.
        // The library's own ATTACH, cipher pragmas and sqlcipher_export: past the SQL guard.
        try trusted { () throws(SQLCipherError) in
            // KEY '' attaches the new, empty file without a codec; sqlite3_key_v2 then keys it (if encrypted).
            // The engine is opened for this one ATTACH and closed again before the export runs.
            try withAttachmentOpen { () throws(SQLCipherError) in
                try execute("ATTACH DATABASE ?1 AS \(schema.quotedIdentifier) KEY ''", [temporary])
            }
            do throws(SQLCipherError) {
                if let key { try applyKey(key, schema: schema) }
                for pragma in cipher.pragmas(schema: schema) where !pragma.contains("cipher_memory_security") {
                    try execute(pragma)
                }
                try applySynchronous(schema: schema)
                // The source's schema rows, which the export runs, must be CREATE statements and nothing else.
                try requireOnlySchemaStatements()
                let export = try prepare("SELECT sqlcipher_export(?1)")
                try withProgressHandler(every: 100_000, report) { () throws(SQLCipherError) in
                    // The engine's gate lets this one call run; SQL the export compiles is not trusted.
                    do throws(SQLCipherError) {
                        try withExportPermit { () throws(SQLCipherError) in try export.execute([schema]) }
                    } catch {
                        // sqlcipher_export reports an interrupt of the statements it runs as a plain error.
                        if stopped() || (try? requireOpenHandle()).map({ sqlite3_is_interrupted($0) != 0 }) == true {
                            throw .api(.interrupted, "the export was interrupted: nothing was written to "
                                + "'\(targetPath)'", path: path)
                        }
                        throw error
                    }
                }
                if let progress { callingUserCode { progress(1) } }
                // sqlcipher_export copies schema and rows, not these header fields: apps rely on them.
                for field in ["user_version", "application_id"] {
                    let value = try integerPragma("main.\(field)")
                    try execute("PRAGMA \(schema.quotedIdentifier).\(field) = \(value)")
                }
                try execute("DETACH DATABASE \(schema.quotedIdentifier)")
            } catch {
                try? execute("DETACH DATABASE \(schema.quotedIdentifier)")
                releaseDeferredClose()
                throw error
            }
        }
        try interruptHandle.requireNoInterrupt(since: interrupts, "the export was interrupted: nothing was written to "
            + "'\(targetPath)'", path: path)
        try FileReplacement.sync(file)
        return file
    }
}
