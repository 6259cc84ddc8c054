import Glibc

extension Database {
    /// Runs one or more SQL statements separated by semicolons, discarding any rows.
    ///
    /// Each statement is compiled only once the one before it has run, as `sqlite3_exec` does.
    ///
    /// - Throws: ``SQLCipherError`` naming the failure; the statements before it have run.
    public func execute(_ sql: String) throws(SQLCipherError) {
        _ = try requireOpenHandle()
        try Database.requireNoNUL(sql, path: path)
        try checkCancellation()
        var remaining = Substring(sql)
        while let (statement, rest) = try Statement.prepareFirst(of: remaining, database: self) {
            try statement.execute()
            remaining = rest
        }
    }

    /// Refuses SQL text holding a NUL character: SQLite reads SQL as a C string and would silently ignore
    /// everything after the NUL (a statement that is never run, with no error).
    static func requireNoNUL(_ sql: String, path: String) throws(SQLCipherError) {
        // memchr over a native string's storage: `utf8.contains` walked it byte by byte through the generic
        // Sequence path (about 27 instructions a byte, on every transaction's BEGIN and COMMIT).
        let hasNUL = sql.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false
        }
            ?? sql.utf8.contains(0)
        guard !hasNUL else {
            throw .api(.invalidArgument, "the SQL text contains a NUL character; bind such text as a parameter",
                       path: path)
        }
    }

    /// Runs every statement of `sql` in order, calling `body` with a cursor over each statement's rows (also
    /// for statements that return none), so a caller can show the results of a script as it runs.
    ///
    /// - Throws: the first error; the statements before it have run.
    public func forEachStatement(in sql: String, _ body: (Statement, RowCursor) throws -> Void) throws {
        var remaining = Substring(sql)
        while let (statement, rest) = try Statement.prepareFirst(of: remaining, database: self) {
            try body(statement, try statement.rows())
            remaining = rest
        }
    }
}
