import CSQLCipher
import Foundation

/// A prepared SQL statement: bind, step, read columns, reset, and run again.
///
/// ```swift
/// let insert = try db.prepare("INSERT INTO note(body) VALUES (?)")
/// for body in bodies {
///     try insert.execute([body])   // resets, binds and runs
/// }
/// let select = try db.prepare("SELECT id, body FROM note WHERE id > :id")
/// try select.bind(["id": 10])
/// while try select.step() {
///     let id: Int64 = try select.column(0)
///     let body: String? = try select.column("body")
/// }
/// ```
///
/// Parameter indexes start at 1 and column indexes at 0, as in SQLite's C API. A statement belongs to its
/// ``Database``: use it on the same thread or task, and only while the connection is open. It is finalized when
/// released.
public final class Statement {
    /// The SQL text the statement was prepared from.
    public let sql: String
    let database: Database
    let handle: OpaquePointer

    /// The names of the result columns, in order.
    public let columnNames: [String]

    /// Whether the statement was stepped since it was last reset. Resetting a statement that was not is a no-op
    /// for SQLite but still a call that takes the connection's mutex; `execute` and `bind` reset first, so a
    /// bind-and-run loop would pay for two such calls per row.
    private var isStepped = false

    convenience init(database: Database, sql: String) throws(SQLCipherError) {
        let (handle, consumed) = try Statement.compile(Substring(sql), database: database)
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
        self.init(database: database, handle: handle, sql: sql)
    }

    private init(database: Database, handle: OpaquePointer, sql: String) {
        self.sql = sql
        self.database = database
        self.handle = handle
        columnNames = (0..<sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) }
    }

    /// Prepares the first statement of `sql`; returns it with the SQL after it, or nil when `sql` holds no more
    /// statements (only blanks, semicolons and comments).
    static func prepareFirst(of sql: Substring, database: Database) throws(SQLCipherError)
        -> (Statement, Substring)? {
        var remaining = sql
        while !remaining.isEmpty {
            let (handle, consumed) = try compile(remaining, database: database)
            let rest = Substring(remaining.utf8.dropFirst(consumed))
            if let handle {
                let text = String(Substring(remaining.utf8.prefix(consumed)))
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                return (Statement(database: database, handle: handle, sql: text), rest)
            }
            guard consumed > 0 else { break }
            remaining = rest
        }
        return nil
    }

    /// Compiles the first statement of `sql`: its handle (nil for only blanks or comments) and how many UTF-8
    /// bytes of `sql` it used.
    private static func compile(_ sql: Substring, database: Database) throws(SQLCipherError)
        -> (handle: OpaquePointer?, consumed: Int) {
        let db = try database.openHandle()
        var statement: OpaquePointer?
        var consumed = 0
        let text = String(sql)
        try Database.requireNoNUL(text, path: database.path)
        _ = database.sqlGuard.takeRefusal()
        let code = text.withCString { start in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v2(db, start, -1, &statement, &tail)
            // The tail points into `start`: measure it while it is alive.
            consumed = tail.map { start.distance(to: $0) } ?? text.utf8.count
            return code
        }
        guard code == SQLITE_OK else {
            throw SQLCipherError(code: code, connection: db, path: database.path, sql: text,
                                 refusal: database.sqlGuard.takeRefusal())
        }
        return (statement, consumed)
    }

    deinit {
        sqlite3_finalize(handle)
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

    /// The number of result columns (0 for statements that return no rows).
    public var columnCount: Int { columnNames.count }

    /// The number of parameters (the largest parameter index).
    public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    /// The index of the result column named `name` (case-insensitive, as in SQL), or nil.
    public func columnIndex(named name: String) -> Int? {
        columnNames.firstIndex(of: name) ?? columnNames.firstIndex { $0.caseInsensitiveCompare(name) == .orderedSame }
    }

    // MARK: Binding

    /// Binds `value` (nil for NULL) to parameter `index`, counted from 1. Binding rewinds the statement
    /// (``reset()``) if it was stepped.
    public func bind(_ value: (any DatabaseValueConvertible)?, at index: Int) throws(SQLCipherError) {
        reset()
        try bind(value?.databaseValue ?? .null, at: Int32(index))
    }

    /// Binds `value` (nil for NULL) to the parameter named `name`: `:name`, `@name` or `$name`; a bare name
    /// means `:name`.
    public func bind(_ value: (any DatabaseValueConvertible)?, named name: String) throws(SQLCipherError) {
        reset()
        try bind(value?.databaseValue ?? .null, at: try parameterIndex(named: name))
    }

    /// Clears all bindings, then binds `arguments`. Every positional value needs a parameter, and every named
    /// value a parameter of that name.
    public func bind(_ arguments: StatementArguments) throws(SQLCipherError) {
        reset()
        let parameterCount = parameterCount
        guard arguments.positional.count <= parameterCount else {
            throw .api(.invalidArgument, "\(arguments.positional.count) arguments for \(parameterCount) parameters")
        }
        // Only parameters the arguments leave out keep an old value: when they bind every one, clearing is skipped.
        if !arguments.named.isEmpty || arguments.positional.count < parameterCount {
            clearBindings()
        }
        for (offset, value) in arguments.positional.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
        for (name, value) in arguments.named {
            try bind(value, at: try parameterIndex(named: name))
        }
    }

    /// Sets every parameter back to NULL.
    public func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    private func parameterIndex(named name: String) throws(SQLCipherError) -> Int32 {
        let candidates = name.first.map { ":@$".contains($0) } == true ? [name] : [":" + name, "@" + name, "$" + name]
        for candidate in candidates {
            let index = sqlite3_bind_parameter_index(handle, candidate)
            if index > 0 { return index }
        }
        throw SQLCipherError(kind: .invalidArgument, message: "no parameter named \(name)", sql: sql)
    }

    private func bind(_ value: DatabaseValue, at index: Int32) throws(SQLCipherError) {
        let code: Int32
        switch value {
        case .null:
            code = sqlite3_bind_null(handle, index)
        case .integer(let integer):
            code = sqlite3_bind_int64(handle, index, integer)
        case .real(let real):
            code = sqlite3_bind_double(handle, index, real)
        case .text(let text):
            // With its byte count, so that text holding a NUL character is bound whole, not cut at the NUL.
            var text = text
            code = text.withUTF8 { bytes in
                // An empty string still needs a non-NULL pointer, or SQLite binds NULL.
                let start = UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                return sqlite3_bind_text64(handle, index, start.assumingMemoryBound(to: CChar.self),
                                           UInt64(bytes.count), SQLITE_TRANSIENT, UInt8(SQLITE_UTF8))
            }
        case .blob(let bytes):
            code = bytes.withUnsafeBytes { buffer in
                // A zero-length blob still needs a non-NULL pointer, or SQLite binds NULL.
                sqlite3_bind_blob(handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                  Int32(buffer.count), SQLITE_TRANSIENT)
            }
        }
        guard code == SQLITE_OK else {
            throw SQLCipherError(code: code, connection: sqlite3_db_handle(handle), path: database.path, sql: sql)
        }
    }

    // MARK: Running

    /// Advances to the next row: true when a row is available, false when the statement is done.
    @discardableResult
    public func step() throws(SQLCipherError) -> Bool {
        _ = try database.openHandle()
        try database.checkCancellation()
        isStepped = true
        // SQL that SQLite compiles during the step is its own (see SQLGuard.steppingDepth).
        database.sqlGuard.steppingDepth += 1
        let code = sqlite3_step(handle)
        database.sqlGuard.steppingDepth -= 1
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            // Reset so the statement can run again, and report the step's error (reset returns it too).
            sqlite3_reset(handle)
            isStepped = false
            throw SQLCipherError(code: code, connection: sqlite3_db_handle(handle), path: database.path, sql: sql,
                                 refusal: database.sqlGuard.takeRefusal())
        }
    }

    /// Rewinds the statement so it can run again; bindings are kept.
    public func reset() {
        guard isStepped else { return }
        sqlite3_reset(handle)
        isStepped = false
    }

    /// Resets, binds `arguments` (when given), and steps until done, discarding any rows.
    public func execute(_ arguments: StatementArguments? = nil) throws(SQLCipherError) {
        reset()
        if let arguments { try bind(arguments) }
        while try step() {}
        reset()
    }

    /// Resets, binds `arguments` (when given), and returns a cursor over the rows.
    public func rows(_ arguments: StatementArguments? = nil) throws(SQLCipherError) -> RowCursor {
        reset()
        if let arguments { try bind(arguments) }
        return RowCursor(statement: self)
    }

    // MARK: Columns of the current row

    /// The value of column `index` (from 0) of the current row.
    public func value(at index: Int) -> DatabaseValue {
        let column = Int32(index)
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard let text = sqlite3_column_text(handle, column) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default:
            return .null
        }
    }

    /// Column `index` of the current row converted to text by SQLite; nil for NULL.
    func text(at index: Int) -> String? {
        guard let text = sqlite3_column_text(handle, Int32(index)) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Whether column `index` of the current row is NULL.
    public func isNull(at index: Int) -> Bool {
        sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL
    }

    /// Column `index` of the current row as `T`.
    ///
    /// - Throws: ``SQLCipherError/Kind/typeMismatch`` when the value does not convert (read NULL as an
    ///   optional); ``SQLCipherError/Kind/invalidArgument`` when there is no such column.
    // Inlinable so that the read is specialized for `T` in the caller (see `Row.convert`).
    @inlinable
    public func column<T: DatabaseValueConvertible>(_ index: Int, as type: T.Type = T.self) throws(SQLCipherError) -> T {
        guard (0..<columnCount).contains(index) else {
            throw SQLCipherError(kind: .invalidArgument, message: "no column \(index) (there are \(columnCount))", sql: sql)
        }
        return try Row.convert(value(at: index), to: T.self, column: columnNames[index], sql: sql)
    }

    /// Column `name` of the current row as `T`.
    public func column<T: DatabaseValueConvertible>(_ name: String, as type: T.Type = T.self) throws(SQLCipherError) -> T {
        guard let index = columnIndex(named: name) else {
            throw SQLCipherError(kind: .invalidArgument, message: "no column named \(name)", sql: sql)
        }
        return try column(index, as: T.self)
    }

    /// The current row, copied out of the statement.
    public var row: Row {
        Row(columnNames: columnNames, values: (0..<columnCount).map { value(at: $0) })
    }
}
