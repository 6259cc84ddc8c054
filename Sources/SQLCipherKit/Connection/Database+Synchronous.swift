extension Database {
    /// How much a commit does to survive a power cut: SQLite's
    /// [`PRAGMA synchronous`](https://sqlite.org/pragma.html#pragma_synchronous), set on every connection at open
    /// (``Configuration/synchronous``; default ``extra``).
    ///
    /// A process that crashes loses nothing the kernel already holds; a power cut loses every write since the
    /// last sync. What each level keeps of an acknowledged commit through a power cut (measured with the
    /// reliability tests' power-cut simulator, `PowerLossTests`):
    ///
    /// | Level | Rollback journal (`DELETE`) | Write-ahead log (`WAL`) |
    /// | --- | --- | --- |
    /// | ``extra`` (default) | every acknowledged commit | every acknowledged commit (as ``full``) |
    /// | ``full`` | the last commit may be rolled back: the journal's deletion is not synced, so a cut can bring it back | every acknowledged commit |
    /// | ``normal`` | a commit may be lost, or the database corrupted | the last commits may be lost; the database stays sound |
    /// | ``off`` | anything; the database may be corrupted | anything; the database may be corrupted |
    ///
    /// Choose less than ``extra`` only by name, for speed, where losing recent commits is acceptable (a cache,
    /// a bulk load that is repeated after a failure).
    public enum Synchronous: String, Sendable, CaseIterable {
        /// No sync at all: the operating system decides when data reaches the disk.
        case off = "OFF"
        /// Syncs at the critical moments only: in WAL mode, at checkpoints, not at each commit.
        case normal = "NORMAL"
        /// Syncs every commit; in rollback-journal mode, not the folder after the journal is deleted.
        case full = "FULL"
        /// Syncs every commit, and in rollback-journal mode the folder after the journal is deleted. The default.
        case extra = "EXTRA"
    }
}

extension Database {
    /// Sets the configuration's ``Synchronous`` level on `schema`: SQLite keeps it per schema, and an attached one
    /// starts at SQLite's default (FULL). Call inside `trusted`.
    func applySynchronous(schema: String) throws(SQLCipherError) {
        try execute("PRAGMA \(schema.quotedIdentifier).synchronous = \(configuration.synchronous.rawValue)")
    }
}
