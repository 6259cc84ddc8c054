import CSQLCipher

/// A prepared statement, finalized when released.
///
/// Internal for now: the public statement API (binding, typed columns, rows) builds on this type.
final class Statement {
    private let database: Database
    private let handle: OpaquePointer

    init(database: Database, sql: String) throws(SQLCipherError) {
        let db = try database.openHandle()
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw SQLCipherError(code: code == SQLITE_OK ? SQLITE_MISUSE : code, connection: db,
                                 path: database.path,
                                 message: code == SQLITE_OK ? "the SQL holds no statement" : nil)
        }
        self.database = database
        self.handle = statement
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Advances to the next row: true when a row is available, false when the statement is done.
    func step() throws(SQLCipherError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            throw SQLCipherError(code: code, connection: sqlite3_db_handle(handle), path: database.path,
                                 message: nil)
        }
    }

    /// The value of column `index` of the current row as text; nil for NULL.
    func text(at index: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, index) else { return nil }
        return String(cString: text)
    }
}
