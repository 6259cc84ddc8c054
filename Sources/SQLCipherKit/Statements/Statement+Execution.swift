import CSQLCipher

// Running: stepping a statement through its rows, resetting it, and the bind-and-run shortcuts.
extension Statement {
    /// Resets, binds `values` in parameter order (see ``bind(_:)-(V)``), and steps until done,
    /// discarding any rows: the fast way to run an insert or update many times.
    ///
    /// ```swift
    /// try insert.execute(id, name, score, avatar)
    /// ```
    // Disfavored: an array literal (`execute([1, 2])`) stays ``StatementArguments``, never a blob of `[UInt8]`.
    @inlinable @_disfavoredOverload
    public func execute<each V: DatabaseValueConvertible>(_ values: repeat each V) throws(SQLCipherError) {
        try bind(repeat each values)
        try runToCompletion()
    }

    // One overload per count of values, 1 to 8: each is specialized for its types in the caller, so every value
    // is bound through its own `bind(to:)` with no generic dispatch (the variadic form above binds the same way
    // but, as of Swift 6.3, is not specialized per element and costs a few hundred instructions more per row).

    /// Resets, binds the values to parameters 1 to 1, and steps until done (see ``execute(_:)-(V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible>(_ a: A) throws(SQLCipherError) {
        try bind(a)
        try runToCompletion()
    }

    /// Resets, binds the values to parameters 1 to 2, and steps until done (see ``execute(_:)-(V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible, B: DatabaseValueConvertible>(_ a: A, _ b: B) throws(SQLCipherError) {
        try bind(a, b)
        try runToCompletion()
    }

    /// Resets, binds the values to parameters 1 to 3, and steps until done (see ``execute(_:)-(V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C) throws(SQLCipherError) {
        try bind(a, b, c)
        try runToCompletion()
    }

    /// Resets, binds the values to parameters 1 to 4, and steps until done (see ``execute(_:)-(V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D) throws(SQLCipherError) {
        try bind(a, b, c, d)
        try runToCompletion()
    }

    /// Resets, binds the values to parameters 1 to 5, and steps until done (see ``execute(_:)-(V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E) throws(SQLCipherError) {
        try bind(a, b, c, d, e)
        try runToCompletion()
    }

    /// Resets, binds the values to parameters 1 to 6, and steps until done (see ``execute(_:)-(V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible, F: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F) throws(SQLCipherError) {
        try bind(a, b, c, d, e, f)
        try runToCompletion()
    }

    /// Resets, binds the values to parameters 1 to 7, and steps until done (see ``execute(_:)-(V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible, F: DatabaseValueConvertible, G: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F, _ g: G) throws(SQLCipherError) {
        try bind(a, b, c, d, e, f, g)
        try runToCompletion()
    }

    /// Resets, binds the values to parameters 1 to 8, and steps until done (see ``execute(_:)-(V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible, F: DatabaseValueConvertible, G: DatabaseValueConvertible, H: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F, _ g: G, _ h: H) throws(SQLCipherError) {
        try bind(a, b, c, d, e, f, g, h)
        try runToCompletion()
    }

    /// Resets, binds `values` by position (an array literal: `execute([1, "text", nil])`), and steps until done.
    @inlinable
    public func execute(_ values: [(any DatabaseValueConvertible)?]) throws(SQLCipherError) {
        try execute(StatementArguments(values))
    }

    /// Steps until done, then resets.
    @inlinable
    func runToCompletion() throws(SQLCipherError) {
        while try step() {}
        reset()
    }

    /// Advances to the next row: true when a row is available, false when the statement is done.
    // Inlinable: the checks and SQLite's step go straight into the caller's loop (a call less per row).
    @inlinable @discardableResult
    public func step() throws(SQLCipherError) -> Bool {
        guard !takesCheckedStep, database.handle != nil, !database.checksCancellation else { return try checkedStep() }
        isStepped = true
        // SQL that SQLite compiles during the step is its own (VACUUM's ATTACH; see SQLGuard.steppingDepth).
        let stepping = database.steppingCounter
        stepping.pointee += 1
        let code = sqlite3_step(handle)
        stepping.pointee -= 1
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        throw stepFailed(code)
    }

    /// ``step()`` when the connection is closed, a task may have been cancelled, or the connection is observed.
    @usableFromInline
    func checkedStep() throws(SQLCipherError) -> Bool {
        // Before `database` is touched: a cached statement held after its connection was released is detached.
        try requireOpen()
        // Held until the step is over (found by an attacker): a cached statement does not retain its connection, and an
        // observer's event (this step's end, a WAL commit or a busy wait inside it) may release the caller's last
        // reference to it; the step would then use a freed connection. Only an observed connection's steps call
        // caller code (a reviewer: the retain is not paid by an async job's every step).
        let held = database.observation == nil ? nil : database
        defer { withExtendedLifetime(held) {} }
        // A close from the caller's code during this step (an observer's event) is released once the step is over
        // and no library operation holds the engine's handle (found by an attacker: after a `BEGIN IMMEDIATE` of the
        // caller's own, nothing else released it, and its transaction kept the write lock).
        defer { if database.deferredClose != nil { database.releaseDeferredClose() } }
        // The observer's context before the other checks (the caller's code, which must not use the connection): they
        // then see the connection as it left it, closed included.
        let observation = database.observation
        let context = observation?.startingContext(handle, first: !isStepped)
        try requireOpen()
        try database.requireNoSQLUserCode()
        try database.checkCancellation()
        // A statement that controls transactions meets their rules as the library's scope is now, not as it was when
        // the statement was compiled.
        if !transactionControl.isEmpty, let refusal = database.sqlGuard.controlRefusal(transactionControl) {
            throw SQLCipherError(code: SQLITE_AUTH, connection: nil, path: database.path, sql: sql, refusal: refusal)
        }
        observation?.stepStarting(handle, first: !isStepped, context: context)
        isStepped = true
        // SQL that SQLite compiles during the step is its own (see SQLGuard.steppingDepth).
        database.sqlGuard.steppingDepth += 1
        let code = sqlite3_step(handle)
        database.sqlGuard.steppingDepth -= 1
        // A statement the guard refused while it ran (VACUUM INTO a keyed URI) is reported without its text.
        observation?.stepReturned(handle, code: code, refused: database.sqlGuard.hasRefusal)
        if code == SQLITE_DONE, !transactionControl.isEmpty, sqlite3_stmt_isexplain(handle) == 0 {
            database.sqlGuard.controlStepped(transactionControl)
        }
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        throw stepFailed(code)
    }

    /// Resets the statement after a failed step (so it can run again) and returns the step's error, with the
    /// SQL guard's refusal when the step was refused.
    @usableFromInline
    func stepFailed(_ code: Int32) -> SQLCipherError {
        sqlite3_reset(handle)
        isStepped = false
        return SQLCipherError(code: code, connection: sqlite3_db_handle(handle), path: database.path, sql: sql,
                              refusal: database.sqlGuard.takeRefusal(),
                              sqlIsTheLibrarys: database.sqlGuard.compilesTrustedSQL)
    }

    /// Rewinds the statement so it can run again; bindings are kept.
    @inlinable
    public func reset() {
        guard isStepped else { return }
        sqlite3_reset(handle)
        isStepped = false
    }

    /// Resets, binds `arguments` (when given), and steps until done, discarding any rows.
    public func execute(_ arguments: StatementArguments?) throws(SQLCipherError) {
        reset()
        if let arguments { try bind(arguments) }
        try runToCompletion()
    }

    /// Resets, binds `arguments` (when given), and returns a cursor over the rows.
    public func rows(_ arguments: StatementArguments? = nil) throws(SQLCipherError) -> RowCursor {
        reset()
        if let arguments { try bind(arguments) }
        return RowCursor(statement: self)
    }
}
