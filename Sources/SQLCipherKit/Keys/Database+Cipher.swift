import CSQLCipher

extension Database {
    /// Re-encrypts the database with `newKey`, of any kind (passphrase ↔ raw), through `sqlite3_rekey_v2`.
    ///
    /// Every page is rewritten in one transaction. SQLCipher's rekey reports no failure of its own (when it
    /// cannot lock the database it rolls back and returns success), so the result is checked: a fresh connection
    /// must open the file with `newKey` and read every page (through the write-ahead log, where the new pages
    /// may still be). When it cannot, the file still holds the
    /// old key and this connection, whose write key would now be wrong, is closed: the call throws
    /// ``SQLCipherError/Kind/busy`` and nothing was changed; reopen with the old key. To remove encryption, use
    /// ``export(to:key:cipher:replacing:progress:)`` with no key or ``Database/decrypt(path:key:cipher:progress:)``.
    public func rekey(to newKey: Key) throws(SQLCipherError) {
        let db = try openHandle()
        guard !isInTransaction else {
            throw .api(.misuse, "rekey cannot run inside a transaction", path: path)
        }
        let code = newKey.material.withUnsafeBytes { bytes in
            sqlite3_rekey_v2(db, "main", bytes.baseAddress, Int32(bytes.count))
        }
        guard code == SQLITE_OK else {
            throw SQLCipherError(code: code, connection: db, path: path)
        }
        guard path != ":memory:", !path.isEmpty else { return }
        do throws(SQLCipherError) {
            var check = configuration
            check.mode = .readOnly
            let verifier = try Database(path: path, key: newKey, configuration: check)
            defer { verifier.close() }
            // quick_check reads every page through the pager, so each one is decrypted and authenticated with
            // the new key (cipher_integrity_check would read the main file only, not the log).
            guard try verifier.textValue("PRAGMA quick_check") == "ok" else {
                throw SQLCipherError.api(.corrupt, "pages do not read back under the new key")
            }
            // In WAL mode the new pages are still in the log and the main file holds old-key pages; move them
            // in now, so the file is under one key (a failure here only leaves that to a later checkpoint).
            if try journalMode() == .wal { try? execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        } catch {
            close()
            throw .api(.busy, "the rekey did not take effect (another connection held a lock, or it was interrupted): "
                + "the file keeps its old key; this connection was closed, reopen it with the old key and retry "
                + "(\(error.message))", path: path)
        }
    }

    /// Whether SQLCipher reports that this connection encrypts `schema`, as
    /// [`PRAGMA cipher_status`](https://www.zetetic.net/sqlcipher/sqlcipher-api/#cipher_status) answers it
    /// (`1`: keyed and no codec error).
    ///
    /// Every encrypted open already requires it (see ``Database/init(path:key:configuration:)``); call it to
    /// prove encryption of a connection in a health check, or of an attached database.
    ///
    /// - Throws: ``SQLCipherError/Kind/notSQLCipher`` when the engine does not know the pragma (SQLCipher
    ///   before 4.12): encryption of the connection cannot be confirmed.
    public func cipherStatus(schema: String = "main") throws(SQLCipherError) -> Bool {
        guard let status = try textValue("PRAGMA \(schema.quotedIdentifier).cipher_status") else {
            throw .api(.notSQLCipher, "the engine does not answer PRAGMA cipher_status (SQLCipher before 4.12): "
                + "whether this connection encrypts cannot be confirmed; build SQLCipherKit with a current pin",
                path: path)
        }
        return status == "1"
    }

    /// Throws unless SQLCipher confirms that this connection encrypts `main`: a keyed connection that does not
    /// would write plaintext while its caller believes otherwise.
    func requireEncrypting() throws(SQLCipherError) {
        guard try cipherStatus() else {
            throw .api(.notSQLCipher, "SQLCipher reports that this keyed connection does not encrypt "
                + "(PRAGMA cipher_status = 0); nothing was written", path: path)
        }
    }

    /// The cipher settings in effect for `schema` (salt and compatibility are not reported here: see
    /// ``cipherSalt(schema:)``).
    public func cipherSettings(schema: String = "main") throws(SQLCipherError) -> CipherSettings {
        let prefix = "PRAGMA \(schema.quotedIdentifier)."
        func value(_ pragma: String) throws(SQLCipherError) -> String? {
            try textValue(prefix + pragma)
        }
        return CipherSettings(
            pageSize: try value("cipher_page_size").flatMap { Int($0) },
            kdfIterations: try value("kdf_iter").flatMap { Int($0) },
            usesHMAC: try value("cipher_use_hmac").map { $0 == "1" },
            hmacAlgorithm: try value("cipher_hmac_algorithm").flatMap(CipherSettings.HMACAlgorithm.init(rawValue:)),
            kdfAlgorithm: try value("cipher_kdf_algorithm").flatMap(CipherSettings.KDFAlgorithm.init(rawValue:)),
            plaintextHeaderSize: try value("cipher_plaintext_header_size").flatMap { Int($0) },
            memorySecurity: try textValue("PRAGMA cipher_memory_security").map { $0 == "1" }
        )
    }

    /// The database's 16-byte salt: the file's first 16 bytes, or the salt set in
    /// ``CipherSettings/salt`` when the file has a plaintext header. Keep it when you migrate a database
    /// to a plaintext header: it is needed to open it.
    public func cipherSalt(schema: String = "main") throws(SQLCipherError) -> [UInt8] {
        guard let hex = try textValue("PRAGMA \(schema.quotedIdentifier).cipher_salt"),
              let salt = Hex.bytes(hex), salt.count == Key.saltLength else {
            throw .api(.misuse, "no salt: '\(path)' is not an encrypted database", path: path)
        }
        return salt
    }

    /// A problem `PRAGMA cipher_integrity_check` found.
    public struct CipherIntegrityProblem: Sendable, Equatable, CustomStringConvertible {
        /// SQLCipher's message, e.g. `HMAC verification failed for page 3`.
        public let message: String
        /// The page the problem is on, when the message names one.
        public let page: Int?

        /// A problem with `message`, on `page`.
        public init(message: String, page: Int?) {
            self.message = message
            self.page = page
        }

        /// The message.
        public var description: String { message }

        /// Whether this reports damage, as opposed to a check that could not run (no HMAC in SQLCipher 1
        /// files, or no file behind an in-memory database).
        public var isFailure: Bool {
            !message.hasPrefix("HMAC is not enabled") && !message.hasPrefix("database file is undefined")
        }
    }

    /// What ``Database/checkIntegrity(path:key:cipher:)`` found.
    public struct IntegrityReport: Sendable, Equatable {
        /// What `PRAGMA cipher_integrity_check` reported: failures and notes (see
        /// ``CipherIntegrityProblem/isFailure``).
        public let cipherProblems: [CipherIntegrityProblem]
        /// What `PRAGMA integrity_check` found; empty when the structure is sound.
        public let structuralProblems: [String]

        /// Every failure: the cipher problems that report damage, then the structural ones.
        public var failures: [String] {
            cipherProblems.filter(\.isFailure).map(\.message) + structuralProblems
        }

        /// Notes that are not failures (for example, no HMAC to check in a SQLCipher 1 file).
        public var notes: [String] {
            cipherProblems.filter { !$0.isFailure }.map(\.message)
        }
    }

    /// Checks the database file at `path`: every page's HMAC (``cipherIntegrityCheck()``) and its structure
    /// (``integrityCheck()``), on a connection of its own that it closes.
    ///
    /// Nothing is written, and the folder is left as it was found: a WAL database's `-wal` and `-shm` files
    /// that this check had to create are gone afterwards (unless another connection opened the database
    /// meanwhile and uses them), and side files that were there before, another connection's or a crash's, are
    /// left untouched.
    ///
    /// - Throws: ``SQLCipherError/Kind/wrongKeyOrNotADatabase`` when the key does not open the file,
    ///   ``SQLCipherError/Kind/corrupt`` when it is too damaged (for example, truncated) to open at all,
    ///   ``SQLCipherError/Kind/cannotOpen`` when there is no such file.
    public static func checkIntegrity(path: String, key: Key, cipher: CipherSettings = CipherSettings())
        throws(SQLCipherError) -> IntegrityReport {
        let database = try Database(path: path, key: key, configuration: .inspection(cipher: cipher))
        defer { database.close() }
        return IntegrityReport(cipherProblems: try database.cipherIntegrityCheck(),
                               structuralProblems: try database.integrityCheck())
    }

    /// Checks every page's HMAC without decoding the database: the problems found, empty when every page is
    /// authentic. Works only on files with HMAC (not SQLCipher 1); a file-less database reports that.
    ///
    /// SQLCipher checks the main file only. In WAL mode this method therefore checkpoints first
    /// (`wal_checkpoint(TRUNCATE)`), so that every committed page is in the file and checked; without that, a
    /// file rekeyed in WAL mode would report every page as failed until its next checkpoint. While another
    /// connection reads, the checkpoint cannot complete and the pages still in the log go unchecked; so too on
    /// a read-only connection, which cannot checkpoint at all (every page that ``integrityCheck()`` reads is
    /// still authenticated, including those in the log).
    public func cipherIntegrityCheck() throws(SQLCipherError) -> [CipherIntegrityProblem] {
        // A read-only connection's checkpoint would fail with a disk I/O error (its file is open read-only).
        let handle = try openHandle()
        if try journalMode() == .wal && sqlite3_db_readonly(handle, "main") == 0 {
            try execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        return try fetchAll("PRAGMA cipher_integrity_check").map { row in
            let message = (try? row.get(0, as: String.self)) ?? ""
            return CipherIntegrityProblem(message: message, page: Self.pageNumber(in: message))
        }
    }

    /// The number after "page " in a message, if any.
    static func pageNumber(in message: String) -> Int? {
        guard let range = message.range(of: "page ") else { return nil }
        return Int(message[range.upperBound...].prefix { $0.isNumber })
    }

    /// Runs SQLite's `PRAGMA integrity_check`: the problems found, empty when the database is sound.
    ///
    /// A page that cannot even be decrypted stops the check; that is reported as a problem too, not thrown.
    public func integrityCheck() throws(SQLCipherError) -> [String] {
        do {
            let messages = try fetchAll("PRAGMA integrity_check").compactMap { try? $0.get(0, as: String.self) }
            return messages == ["ok"] ? [] : messages
        } catch where error.kind == .sqlite || error.kind == .corrupt {
            return ["integrity_check could not read the whole database: \(error.message)"]
        }
    }

    // MARK: Attach

    /// Attaches another encrypted database file as schema `name`, keyed with `key`, so queries can join across
    /// both (`SELECT … FROM name.table`). A missing file is created, encrypted with `key`.
    ///
    /// The attached database uses SQLCipher 4 settings. The key is bound to the `ATTACH` statement as a
    /// parameter, never written into its SQL text (SQL text may not `ATTACH` at all: see the article
    /// "SQL that SQLCipherKit refuses"). A wrong key throws ``SQLCipherError/Kind/wrongKeyOrNotADatabase`` and
    /// attaches nothing.
    public func attach(_ path: String, as name: String, key: Key) throws(SQLCipherError) {
        try attach(path, as: name, material: key.material)
    }

    /// Attaches a database file that is *not* encrypted as schema `name`: everything written into it,
    /// including rows copied from an encrypted schema, is stored in plaintext. This is the one way to attach a
    /// plaintext file; to copy a whole database into one, ``export(to:key:cipher:replacing:progress:)`` with
    /// no key does the same.
    public func attachUnencrypted(_ path: String, as name: String) throws(SQLCipherError) {
        try attach(path, as: name, material: SecureBytes(count: 0) { _ in })
    }

    private func attach(_ path: String, as name: String, material: SecureBytes) throws(SQLCipherError) {
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
                try trusted { () throws(SQLCipherError) in try statement.execute() }
            } catch {
                throw SQLCipherError(kind: error.kind, resultCode: error.resultCode,
                                     extendedResultCode: error.extendedResultCode, message: error.message,
                                     sql: error.sql, path: path)
            }
        }
    }

    /// Detaches the database attached as `name`.
    public func detach(_ name: String) throws(SQLCipherError) {
        try execute("DETACH DATABASE \(name.quotedIdentifier)")
    }
}
