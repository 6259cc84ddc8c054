extension Database {
    /// SQLite's journal modes.
    public enum JournalMode: String, Sendable, CaseIterable {
        /// Rollback journal, deleted at commit (the default).
        case delete
        /// Rollback journal, truncated at commit.
        case truncate
        /// Rollback journal, header zeroed at commit.
        case persist
        /// Rollback journal in memory (a crash can corrupt the database).
        case memory
        /// Write-ahead log: readers do not block the writer.
        case wal
        /// No journal (a crash can corrupt the database).
        case off
    }

    /// The current journal mode.
    public func journalMode() throws(SQLCipherError) -> JournalMode {
        let text = try textValue("PRAGMA journal_mode") ?? "delete"
        guard let mode = JournalMode(rawValue: text.lowercased()) else {
            throw .api(.sqlite, "unknown journal mode \(text)", path: path)
        }
        return mode
    }

    /// Switches the journal mode (``JournalMode/wal`` for write-ahead logging) and returns the mode now in
    /// effect; throws when SQLite did not switch (an in-memory database only knows `memory` and `off`).
    @discardableResult
    public func setJournalMode(_ mode: JournalMode) throws(SQLCipherError) -> JournalMode {
        let result = try textValue("PRAGMA journal_mode = \(mode.rawValue)") ?? ""
        guard result.lowercased() == mode.rawValue else {
            throw .api(.sqlite, "the journal mode stayed \(result) instead of \(mode.rawValue)", path: path)
        }
        return mode
    }
}
