import CSQLCipher

extension Database {
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
        // Read before any statement runs: the caller's observer may close the connection at one, and the engine then
        // releases the handle (see releaseDeferredClose).
        let readOnly = sqlite3_db_readonly(try requireOpenHandle(), "main") != 0
        if !readOnly, try journalMode() == .wal {
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
}
