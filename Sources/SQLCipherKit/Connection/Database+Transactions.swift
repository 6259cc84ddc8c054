import CSQLCipher

extension Database {
    /// How a transaction takes its locks.
    public enum TransactionKind: String, Sendable, CaseIterable {
        /// Locks on first read or write (SQLite's default).
        case deferred = "DEFERRED"
        /// Takes the write lock at once, so no other writer can start.
        case immediate = "IMMEDIATE"
        /// Takes the write lock at once; in rollback-journal mode also keeps readers out.
        case exclusive = "EXCLUSIVE"

        /// The statement that begins such a transaction (a constant: no string is built per transaction).
        var beginSQL: String {
            switch self {
            case .deferred: "BEGIN DEFERRED TRANSACTION"
            case .immediate: "BEGIN IMMEDIATE TRANSACTION"
            case .exclusive: "BEGIN EXCLUSIVE TRANSACTION"
            }
        }
    }

    /// Whether a transaction is open (the connection is not in autocommit mode).
    public var isInTransaction: Bool {
        handle.map { sqlite3_get_autocommit($0) == 0 } ?? false
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws, and rethrows.
    ///
    /// Inside another transaction this opens a savepoint instead (see ``savepoint(_:)``), so transactions
    /// nest: an inner failure rolls back only the inner work.
    ///
    /// ```swift
    /// try db.transaction(.immediate) {
    ///     try db.execute("UPDATE account SET balance = balance - 10 WHERE id = 1")
    ///     try db.execute("UPDATE account SET balance = balance + 10 WHERE id = 2")
    /// }
    /// ```
    public func transaction<Result>(_ kind: TransactionKind = .deferred, _ body: () throws -> Result) throws
        -> Result {
        // Inside a scope whose transaction SQLite ended: its work would be lost (found by a reviewer).
        if sqlGuard.transactionEndedUnderScope { throw transactionEndedError }
        if isInTransaction {
            return try savepoint(body)
        }
        try beginTransaction(kind)
        let result: Result
        do {
            result = try body()
        } catch {
            rollbackTransaction()
            throw error
        }
        do {
            try commitTransaction()
        } catch {
            rollbackTransaction()
            throw error
        }
        return result
    }

    /// Runs `body` inside a savepoint: releases it when `body` returns, rolls back to it (undoing only what
    /// `body` did) when `body` throws, and rethrows. Savepoints nest, inside or outside a transaction.
    public func savepoint<Result>(_ body: () throws -> Result) throws -> Result {
        if sqlGuard.transactionEndedUnderScope { throw transactionEndedError }
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = (SQLGuard.librarySavepointPrefix + "\(savepointDepth)").quotedIdentifier
        try controllingTransaction { () throws(SQLCipherError) in try execute("SAVEPOINT \(name)") }
        sqlGuard.beginScope()
        defer { sqlGuard.endScope() }
        let result: Result
        do {
            result = try body()
        } catch {
            // ROLLBACK TO keeps the savepoint open; RELEASE then closes it.
            rollbackQuietly("ROLLBACK TO SAVEPOINT \(name); RELEASE SAVEPOINT \(name)")
            rollbackIfEndedUnderScope()
            throw error
        }
        if sqlGuard.transactionEndedUnderScope {
            // The savepoint went with the transaction SQLite ended; what is open now was begun after it.
            rollbackIfEndedUnderScope()
            throw transactionEndedError
        }
        do {
            try controllingTransaction { () throws(SQLCipherError) in try execute("RELEASE SAVEPOINT \(name)") }
        } catch {
            rollbackQuietly("ROLLBACK TO SAVEPOINT \(name); RELEASE SAVEPOINT \(name)")
            throw error
        }
        return result
    }

    /// Begins a transaction that a later ``commitTransaction()`` or ``rollbackTransaction()`` ends (a
    /// ``WriterSession`` transaction, open across `await`s, or ``transaction(_:_:)``'s). Until then SQL text on this
    /// connection can neither end it nor begin another (the guard refuses `COMMIT`, `END`, `ROLLBACK` and `BEGIN`).
    func beginTransaction(_ kind: TransactionKind) throws(SQLCipherError) {
        let began = observation.map { _ in ConnectionObservation.instant() }
        try controllingTransaction { () throws(SQLCipherError) in try runCached(kind.beginSQL) }
        if let began { observation?.transactionBegan(at: began) }
        sqlGuard.beginScope()
    }

    /// Commits the transaction ``beginTransaction(_:)`` began. When SQLite has already ended it (it rolls back by
    /// itself after some errors: a full disk, an I/O error, an interrupt), throws, naming that.
    func commitTransaction() throws(SQLCipherError) {
        // Ended by SQLite, and maybe begun again since by SQL text (found by an attacker): the caller rolls back
        // (what was begun again, if anything), which closes the scope.
        guard isInTransaction, !sqlGuard.transactionEndedUnderScope else {
            if isClosed {
                throw .api(.misuse, "the connection was closed inside the transaction SQLCipherKit began (by an "
                    + "observer or a callback): nothing of it was committed", path: path)
            }
            throw transactionEndedError
        }
        let commitStarted = observation.map { _ in ObservationClock.monotonic() }
        let wrote = observation != nil && ConnectionObservation.writes(handle)
        try controllingTransaction { () throws(SQLCipherError) in try runCached("COMMIT TRANSACTION") }
        observation?.transactionEnded(.committed, commitStarted: commitStarted, wrote: wrote, handle: handle)
        sqlGuard.endScope()
    }

    /// Opens a transaction scope for a writer session's transaction that joins one already open: until
    /// ``leaveJoinedTransaction()``, SQL text can no more end the transaction than inside one the library began.
    func joinTransaction() {
        sqlGuard.beginScope()
    }

    /// Closes the scope ``joinTransaction()`` opened.
    func leaveJoinedTransaction() {
        sqlGuard.endScope()
    }

    /// Runs the library's own transaction control (`BEGIN`, `COMMIT`, `ROLLBACK`, its savepoints) past the guard's
    /// transaction rule.
    func controllingTransaction<Result>(_ body: () throws(SQLCipherError) -> Result)
        throws(SQLCipherError) -> Result {
        let saved = sqlGuard.controlsTransaction
        sqlGuard.controlsTransaction = true
        defer { sqlGuard.controlsTransaction = saved }
        return try body()
    }

    /// Rolls back the transaction ``beginTransaction(_:)`` began, if it is still open, and closes its scope; a failure
    /// is ignored (see `rollbackQuietly`).
    func rollbackTransaction() {
        let wrote = observation != nil && ConnectionObservation.writes(handle)
        rollbackQuietly("ROLLBACK TRANSACTION")
        observation?.transactionEnded(.rolledBack, commitStarted: nil, wrote: wrote, handle: handle)
        sqlGuard.endScope()
    }

    /// Runs `sql`, one statement without parameters, through the statement cache: `BEGIN` and `COMMIT` are
    /// prepared once per connection instead of on every transaction (SQLite's parser and the SQL guard's
    /// authorizer ran on both, each time).
    private func runCached(_ sql: String) throws(SQLCipherError) {
        let statement = try cachedStatement(sql)
        statement.reset()
        try statement.runToCompletion()
    }

    /// The error of a transaction scope whose transaction SQLite ended under it.
    private var transactionEndedError: SQLCipherError {
        .api(.misuse, "the transaction SQLCipherKit began had already ended when its closure returned (SQLite rolls "
            + "it back by itself after INSERT OR ROLLBACK, RAISE(ROLLBACK), a full disk, an I/O error or an "
            + "interrupt): nothing of it was committed, nor of a transaction begun again after it", path: path)
    }

    /// At the outermost scope, rolls back a transaction begun again after SQLite ended the library's.
    private func rollbackIfEndedUnderScope() {
        guard sqlGuard.transactionEndedUnderScope, sqlGuard.scopeDepth == 1 else { return }
        rollbackQuietly("ROLLBACK TRANSACTION")
    }

    /// Rolls back after a failure. A failure here (SQLite may already have rolled back, for example after an
    /// interrupt) must not hide the error that caused it, so it is ignored.
    private func rollbackQuietly(_ sql: String) {
        // A connection closed inside the scope (by an observer or a callback) is released now that its operation has
        // unwound: the engine rolls its transaction back and drops its locks.
        releaseDeferredClose()
        guard isInTransaction else { return }
        _ = try? controllingTransaction { () throws(SQLCipherError) in try execute(sql) }
    }
}
