import CSQLCipher

/// A prepared SQL statement: bind, step, read columns, reset, and run again.
///
/// Pass the values themselves, in parameter order, and read each column as the type you want: the values are
/// bound straight from your variables and read where SQLite holds them, with no array or enum in between
/// (this is within a few percent of the same loop written in C; see <doc:Performance>).
///
/// ```swift
/// let insert = try db.cachedStatement("INSERT INTO note(id, body, score) VALUES (?, ?, ?)")
/// for note in notes {
///     try insert.execute(note.id, note.body, note.score)   // resets, binds and runs
/// }
/// let select = try db.cachedStatement("SELECT id, body FROM note WHERE score > ?")
/// try select.bind(0.5)
/// while try select.step() {
///     let id = try select.column(0, as: Int64.self)
///     let body = try select.column(1, as: String?.self)
///     let length = try select.withUnsafeBytes(at: 1) { $0.count }   // no copy
/// }
/// ```
///
/// Argument lists (``StatementArguments``) still work, and take names: `try insert.execute([1, "hello", 0.5])`,
/// `try select.bind(["id": 10])`; each such call builds an array of existentials, which costs about as much as
/// SQLite's own work for a small row.
///
/// Parameter indexes start at 1 and column indexes at 0, as in SQLite's C API. A statement belongs to its
/// ``Database``: use it on the same thread or task, and only while the connection is open. It is finalized when
/// released (a cached one, when it leaves the cache and is released, or when the connection closes).
public final class Statement {
    /// The SQL text the statement was prepared from.
    public let sql: String
    /// The connection. Not retained by cached statements (the connection owns its cache: a strong reference would
    /// be a cycle); `owner` keeps it alive for the others, and `isDetached` guards cached ones after it closes.
    @usableFromInline
    unowned(unsafe) let database: Database
    private let owner: Database?
    @usableFromInline
    let handle: OpaquePointer

    /// The names of the result columns, in order.
    public let columnNames: [String]

    /// The number of result columns (0 for statements that return no rows).
    public let columnCount: Int

    /// Whether the statement leaves the database unchanged (`sqlite3_stmt_readonly`): a `SELECT`, or a `PRAGMA`
    /// that only reads. A ``DatabasePool`` client can run such a statement on a reader and any other on the writer.
    /// Transaction control (`BEGIN`, `COMMIT`…) counts as read-only: it changes nothing by itself.
    public var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    /// Whether the statement was stepped since it was last reset. Resetting a statement that was not is a no-op
    /// for SQLite but still a call that takes the connection's mutex; `execute` and `bind` reset first, so a
    /// bind-and-run loop would pay for two such calls per row.
    // Not checked for exclusive access at run time: a statement is confined to one thread at a time, and the
    // checks (swift_beginAccess) cost more per row than the flags' use (BENCHMARKS.md, "Profiles").
    @usableFromInline @exclusivity(unchecked)
    var isStepped = false

    /// Set when the connection of a cached statement closes (or is released): any later use throws.
    @usableFromInline @exclusivity(unchecked)
    private(set) var isDetached = false

    /// The transaction and savepoint actions of the caller's SQL in this statement, which each step checks again
    /// (``SQLGuard/controlRefusal(_:)``); empty for every other statement.
    let transactionControl: [SQLGuard.ControlAction]

    /// Whether every step takes the checked step: the statement is detached, or controls transactions.
    @usableFromInline @exclusivity(unchecked)
    private(set) var takesCheckedStep: Bool

    convenience init(database: Database, sql: String, cached: Bool = false) throws(SQLCipherError) {
        let (handle, consumed) = try Statement.compile(Substring(sql), database: database)
        let control = database.sqlGuard.takeCompiledControl()
        guard let handle else {
            throw SQLCipherError(kind: .invalidArgument, message: "the SQL holds no statement", sql: sql)
        }
        let rest = sql.utf8.dropFirst(consumed)
        if let db = database.handle, Statement.holdsStatement(String(Substring(rest)), db: db) {
            sqlite3_finalize(handle)
            // The rest may be refused by the guard (and may hold a key): say why, without the SQL.
            if let refusal = database.sqlGuard.takeRefusal() {
                throw SQLCipherError(kind: .misuse, resultCode: SQLITE_AUTH, extendedResultCode: SQLITE_AUTH,
                                     message: refusal, path: database.path)
            }
            // Silently ignoring the rest would drop work; scripts go through Database.execute(_:).
            throw SQLCipherError(kind: .invalidArgument,
                                 message: "a prepared statement takes one SQL statement; run scripts with execute(_:)",
                                 sql: sql)
        }
        self.init(database: database, handle: handle, sql: sql, cached: cached, control: control)
    }

    private init(database: Database, handle: OpaquePointer, sql: String, cached: Bool = false,
                 control: [SQLGuard.ControlAction]) {
        self.sql = sql
        self.database = database
        transactionControl = control
        takesCheckedStep = !control.isEmpty
        owner = cached ? nil : database
        self.handle = handle
        columnNames = (0..<sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) }
        columnCount = columnNames.count
    }

    /// Prepares the first statement of `sql`; returns it with the SQL after it, or nil when `sql` holds no more
    /// statements (only blanks, semicolons and comments).
    static func prepareFirst(of sql: Substring, database: Database) throws(SQLCipherError)
        -> (Statement, Substring)? {
        var remaining = sql
        while !remaining.isEmpty {
            let (handle, consumed) = try compile(remaining, database: database)
            let control = database.sqlGuard.takeCompiledControl()
            let rest = Substring(remaining.utf8.dropFirst(consumed))
            if let handle {
                let text = String(Statement.trimmingBlanks(remaining.utf8.prefix(consumed)))
                return (Statement(database: database, handle: handle, sql: text, control: control), rest)
            }
            guard consumed > 0 else { break }
            remaining = rest
        }
        return nil
    }

    /// `sql` without the blanks SQLite skips between statements (space, tab, newline, form feed, carriage
    /// return) at either end. Byte by byte on the UTF-8 view: Foundation's `trimmingCharacters(in:)` cost
    /// about 16,000 instructions a statement, more than preparing `BEGIN` itself.
    static func trimmingBlanks(_ sql: Substring.UTF8View) -> Substring {
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0d).contains(byte) }
        guard let first = sql.firstIndex(where: { !isBlank($0) }),
              let last = sql.lastIndex(where: { !isBlank($0) }) else { return "" }
        return Substring(sql[first...last])
    }

    /// Compiles the first statement of `sql`: its handle (nil for only blanks or comments) and how many UTF-8
    /// bytes of `sql` it used.
    private static func compile(_ sql: Substring, database: Database) throws(SQLCipherError)
        -> (handle: OpaquePointer?, consumed: Int) {
        let db = try database.requireOpenHandle()
        try database.requireNoSQLUserCode()
        var statement: OpaquePointer?
        var consumed = 0
        let text = String(sql)
        try Database.requireNoNUL(text, path: database.path)
        _ = database.sqlGuard.takeRefusal()
        _ = database.sqlGuard.takeCompiledControl()
        let code = text.withCString { start in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v2(db, start, -1, &statement, &tail)
            // The tail points into `start`: measure it while it is alive.
            consumed = tail.map { start.distance(to: $0) } ?? text.utf8.count
            return code
        }
        guard code == SQLITE_OK else {
            throw SQLCipherError(code: code, connection: db, path: database.path, sql: text,
                                 refusal: database.sqlGuard.takeRefusal(),
                                 sqlIsTheLibrarys: database.sqlGuard.compilesTrustedSQL)
        }
        return (statement, consumed)
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Called by the connection for its cached statements when it closes: the statement no longer refers to it.
    func detach() {
        isDetached = true
        takesCheckedStep = true
    }

    /// Throws ``SQLCipherError/Kind/misuse`` once the connection is closed.
    @inline(__always)
    func requireOpen() throws(SQLCipherError) {
        guard !isDetached, database.handle != nil else { throw closedError() }
    }

    private func closedError() -> SQLCipherError {
        if isDetached {
            return SQLCipherError(kind: .misuse, message: "the statement's connection is closed", sql: sql)
        }
        // Not detached: the connection lives (its release detaches its cached statements); a close its caller's
        // code made inside one of its operations is released now, if none is under way. Held strongly meanwhile: the
        // statements the release finalizes report their end to the observer, which may drop the caller's last
        // reference to the connection (found by a reviewer).
        let database: Database = database
        return withExtendedLifetime(database) {
            database.releaseDeferredClose()
            return .api(.misuse, "the connection to '\(database.path)' is closed", path: database.path)
        }
    }

    /// Throws the error of a failed bind (or other call) whose result code is `code`.
    @usableFromInline
    func check(_ code: Int32) throws(SQLCipherError) {
        guard code == SQLITE_OK else { throw error(code) }
    }

    func error(_ code: Int32) -> SQLCipherError {
        SQLCipherError(code: code, connection: sqlite3_db_handle(handle), path: isDetached ? "" : database.path,
                       sql: sql)
    }

    /// Whether `sql` holds a statement, not just blanks, semicolons or comments.
    private static func holdsStatement(_ sql: String, db: OpaquePointer) -> Bool {
        var remaining = sql
        while !remaining.isEmpty {
            var next: OpaquePointer?
            var consumed = 0
            let code = remaining.withCString { start in
                var tail: UnsafePointer<CChar>?
                let code = sqlite3_prepare_v2(db, start, -1, &next, &tail)
                consumed = tail.map { start.distance(to: $0) } ?? 0
                return code
            }
            guard code == SQLITE_OK else { return true }
            if next != nil {
                sqlite3_finalize(next)
                return true
            }
            guard consumed > 0 else { return false }
            remaining = String(Substring(remaining.utf8.dropFirst(consumed)))
        }
        return false
    }
}
