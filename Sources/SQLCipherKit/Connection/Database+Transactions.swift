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
        if isInTransaction {
            return try savepoint(body)
        }
        try runCached(kind.beginSQL)
        let result: Result
        do {
            result = try body()
        } catch {
            rollbackQuietly("ROLLBACK TRANSACTION")
            throw error
        }
        do {
            try runCached("COMMIT TRANSACTION")
        } catch {
            rollbackQuietly("ROLLBACK TRANSACTION")
            throw error
        }
        return result
    }

    /// Runs `body` inside a savepoint: releases it when `body` returns, rolls back to it (undoing only what
    /// `body` did) when `body` throws, and rethrows. Savepoints nest, inside or outside a transaction.
    public func savepoint<Result>(_ body: () throws -> Result) throws -> Result {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "sqlcipherkit_savepoint_\(savepointDepth)".quotedIdentifier
        try execute("SAVEPOINT \(name)")
        let result: Result
        do {
            result = try body()
        } catch {
            // ROLLBACK TO keeps the savepoint open; RELEASE then closes it.
            rollbackQuietly("ROLLBACK TO SAVEPOINT \(name); RELEASE SAVEPOINT \(name)")
            throw error
        }
        do {
            try execute("RELEASE SAVEPOINT \(name)")
        } catch {
            rollbackQuietly("ROLLBACK TO SAVEPOINT \(name); RELEASE SAVEPOINT \(name)")
            throw error
        }
        return result
    }

    /// Begins a transaction that a later ``commitTransaction()`` or ``rollbackIfInTransaction()`` ends (a
    /// ``WriterSession`` transaction, open across `await`s).
    func beginTransaction(_ kind: TransactionKind) throws(SQLCipherError) {
        try runCached(kind.beginSQL)
    }

    /// Commits the transaction ``beginTransaction(_:)`` began.
    func commitTransaction() throws(SQLCipherError) {
        try runCached("COMMIT TRANSACTION")
    }

    /// Rolls back the open transaction, if any; a failure is ignored (see `rollbackQuietly`).
    func rollbackIfInTransaction() {
        rollbackQuietly("ROLLBACK TRANSACTION")
    }

    /// Runs `sql`, one statement without parameters, through the statement cache: `BEGIN` and `COMMIT` are
    /// prepared once per connection instead of on every transaction (SQLite's parser and the SQL guard's
    /// authorizer ran on both, each time).
    private func runCached(_ sql: String) throws(SQLCipherError) {
        let statement = try cachedStatement(sql)
        statement.reset()
        try statement.runToCompletion()
    }

    /// Rolls back after a failure. A failure here (SQLite may already have rolled back, for example after an
    /// interrupt) must not hide the error that caused it, so it is ignored.
    private func rollbackQuietly(_ sql: String) {
        guard isInTransaction else { return }
        try? execute(sql)
    }
}
