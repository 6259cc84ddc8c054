import CSQLCipher

extension Database {
    /// Prepares one SQL statement to run, possibly many times.
    public func prepare(_ sql: String) throws(SQLCipherError) -> Statement {
        try Statement(database: self, sql: sql)
    }

    /// The prepared statement for `sql` from this connection's statement cache, prepared on first use: the
    /// way to run the same SQL many times.
    ///
    /// ```swift
    /// for note in notes {
    ///     try db.cachedStatement("INSERT INTO note(id, body) VALUES (?, ?)").execute(note.id, note.body)
    /// }
    /// ```
    ///
    /// The cache holds up to 64 statements; when it is full, the least recently used one that you do not hold is
    /// finalized. Closing the connection finalizes them all (one you still hold then throws
    /// ``SQLCipherError/Kind/misuse`` when used). The same SQL always gives the same statement: do not use it for
    /// two things at once (for example, stepping it inside a loop over its own rows). ``prepare(_:)`` gives a
    /// statement of your own.
    public func cachedStatement(_ sql: String) throws(SQLCipherError) -> Statement {
        _ = try requireOpenHandle()
        // The library's own SQL, compiled past the guard, never enters the cache, where SQL text could find it.
        if sqlGuard.trustedFrame != nil { return try prepare(sql) }
        if let statement = statementCache.cached(sql) { return statement }
        // Prepared outside the cache's access (found by an attacker): the compile may report a busy wait to the
        // observer, whose calls must not meet the cache mid-change; a statement dropped for room is released after.
        let (fits, dropped) = statementCache.makeRoom()
        defer { withExtendedLifetime(dropped) {} }
        let statement = try Statement(database: self, sql: sql, cached: fits)
        if fits { statementCache.insert(statement, for: sql) }
        return statement
    }

    /// Runs one SQL statement with `values` bound to its parameters in order, through the statement cache
    /// (``cachedStatement(_:)``): repeated SQL is prepared once, and the values are bound straight from their
    /// storage.
    ///
    /// ```swift
    /// try db.execute("INSERT INTO note(body, created) VALUES (?, ?)", body, Date())
    /// ```
    // Disfavored: an array literal (`execute(sql, [1, 2])`) stays ``StatementArguments``, never a `[UInt8]` blob.
    @inlinable @_disfavoredOverload
    public func execute<each V: DatabaseValueConvertible>(_ sql: String, _ values: repeat each V)
        throws(SQLCipherError) {
        try cachedStatement(sql).execute(repeat each values)
    }

    /// Runs one SQL statement with `values` bound to its parameters by position (an array literal).
    @inlinable
    public func execute(_ sql: String, _ values: [(any DatabaseValueConvertible)?]) throws(SQLCipherError) {
        try execute(sql, StatementArguments(values))
    }

    /// Runs one SQL statement with `arguments` bound to its parameters.
    ///
    /// ```swift
    /// try db.execute("INSERT INTO note(body, created) VALUES (?, ?)", ["hello", Date()])
    /// ```
    public func execute(_ sql: String, _ arguments: StatementArguments) throws(SQLCipherError) {
        try prepare(sql).execute(arguments)
    }

    /// A cursor over the rows of `sql`: rows are read one at a time as you ask for them.
    public func fetchCursor(_ sql: String, _ arguments: StatementArguments = .none) throws(SQLCipherError)
        -> RowCursor {
        try prepare(sql).rows(arguments)
    }

    /// All rows of `sql`.
    public func fetchAll(_ sql: String, _ arguments: StatementArguments = .none) throws(SQLCipherError) -> [Row] {
        try fetchCursor(sql, arguments).all()
    }

    /// The first row of `sql`, or nil when there is none.
    public func fetchOne(_ sql: String, _ arguments: StatementArguments = .none) throws(SQLCipherError) -> Row? {
        try fetchCursor(sql, arguments).next()
    }

    /// All rows of `sql`, decoded as `T` (coding keys match column names).
    public func fetchAll<T: Decodable>(_ type: T.Type, _ sql: String, _ arguments: StatementArguments = .none)
        throws -> [T] {
        let cursor = try fetchCursor(sql, arguments)
        var values: [T] = []
        while let value = try cursor.next(as: T.self) {
            values.append(value)
        }
        return values
    }

    /// The first row of `sql` decoded as `T`, or nil when there is no row.
    public func fetchOne<T: Decodable>(_ type: T.Type, _ sql: String, _ arguments: StatementArguments = .none)
        throws -> T? {
        try fetchOne(sql, arguments)?.decode(T.self)
    }

    /// The first column of the first row of `sql` as `T`; nil when there is no row or the value is NULL.
    public func scalar<T: DatabaseValueConvertible>(_ type: T.Type, _ sql: String,
                                                    _ arguments: StatementArguments = .none) throws(SQLCipherError) -> T? {
        guard let row = try fetchOne(sql, arguments), row.count > 0, !row[0].isNull else { return nil }
        return try row.get(0, as: T.self)
    }

    /// The first column of the first row of `sql` as text, converted as SQLite converts values to text
    /// (`42`, `1.5`); nil when there is no row or the value is NULL.
    public func textValue(_ sql: String, _ arguments: StatementArguments = .none) throws(SQLCipherError) -> String? {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        guard try statement.step(), statement.columnCount > 0 else { return nil }
        return statement.text(at: 0)
    }
}
