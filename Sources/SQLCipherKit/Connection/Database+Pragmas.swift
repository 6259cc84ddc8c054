import CSQLCipher

extension Database {
    /// The integer value of `PRAGMA name` (SQLCipher answers some pragmas as text).
    func integerPragma(_ name: String) throws(SQLCipherError) -> Int {
        guard let text = try textValue("PRAGMA \(name)"), let value = Int(text) else {
            throw .api(.sqlite, "PRAGMA \(name) returned no integer", path: path)
        }
        return value
    }

    /// The number of pages in the main database file.
    public func pageCount() throws(SQLCipherError) -> Int {
        try integerPragma("page_count")
    }

    /// The size of a database page in bytes (SQLite's view: SQLCipher's page size minus nothing; the
    /// encrypted page on disk has the same size).
    public func pageSize() throws(SQLCipherError) -> Int {
        try integerPragma("page_size")
    }

    /// The schema's `user_version`, the integer apps use to track their own schema migrations.
    public func userVersion() throws(SQLCipherError) -> Int {
        try integerPragma("user_version")
    }

    /// Sets the schema's `user_version`.
    public func setUserVersion(_ version: Int32) throws(SQLCipherError) {
        try execute("PRAGMA user_version = \(version)")
    }
}
