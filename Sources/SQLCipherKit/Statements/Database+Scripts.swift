extension Database {
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
