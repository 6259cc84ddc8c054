import CSQLCipher
import Foundation

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

    convenience init(database: Database, sql: String, cached: Bool = false) throws(SQLCipherError) {
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
        self.init(database: database, handle: handle, sql: sql, cached: cached)
    }

    private init(database: Database, handle: OpaquePointer, sql: String, cached: Bool = false) {
        self.sql = sql
        self.database = database
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
            let rest = Substring(remaining.utf8.dropFirst(consumed))
            if let handle {
                let text = String(Statement.trimmingBlanks(remaining.utf8.prefix(consumed)))
                return (Statement(database: database, handle: handle, sql: text), rest)
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

    /// Called by the connection for its cached statements when it closes: the statement no longer refers to it.
    func detach() {
        isDetached = true
    }

    /// Throws ``SQLCipherError/Kind/misuse`` once the connection is closed.
    @inline(__always)
    private func requireOpen() throws(SQLCipherError) {
        guard !isDetached, database.handle != nil else { throw closedError() }
    }

    private func closedError() -> SQLCipherError {
        if isDetached {
            return SQLCipherError(kind: .misuse, message: "the statement's connection is closed", sql: sql)
        }
        return .api(.misuse, "the connection to '\(database.path)' is closed", path: database.path)
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


    /// The number of parameters (the largest parameter index).
    public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    /// The index of the result column named `name` (case-insensitive, as in SQL), or nil.
    public func columnIndex(named name: String) -> Int? {
        columnNames.firstIndex(of: name) ?? columnNames.firstIndex { $0.caseInsensitiveCompare(name) == .orderedSame }
    }

    // MARK: Binding

    /// Binds `values` to the parameters in order, the first to parameter 1, straight from their storage (no
    /// array, no ``DatabaseValue``). Fewer values than parameters leave the rest NULL. Binding rewinds the
    /// statement (``reset()``) if it was stepped.
    ///
    /// ```swift
    /// try select.bind(id)
    /// try update.bind(name, score, id)
    /// ```
    // Disfavored: an array literal (`bind([4])`) stays ``StatementArguments``, never a blob of `[UInt8]`.
    @inlinable @_disfavoredOverload
    public func bind<each V: DatabaseValueConvertible>(_ values: repeat each V) throws(SQLCipherError) {
        // Counted over the types, not the values: no value is copied. A pack expansion of a generic call (not
        // `for value in repeat each values`) binds each value through its own specialized `bind(to:)`.
        var count: Int32 = 0
        for _ in repeat (each V).self { count += 1 }
        try prepareToBind(count: count)
        var index: Int32 = 0
        repeat try Statement.bind(each values, to: self, after: &index)
    }

    /// Binds `value` to the parameter after `index`, and advances `index`.
    @inlinable
    static func bind<T: DatabaseValueConvertible>(_ value: T, to statement: Statement, after index: inout Int32)
        throws(SQLCipherError) {
        index += 1
        try value.bind(to: StatementParameter(statement: statement, index: index))
    }

    /// Resets, binds `values` in parameter order (see ``bind(_:)-(repeat each V)``), and steps until done,
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

    /// Binds the value to parameter 1 (see ``bind(_:)-(repeat each V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible>(_ a: A) throws(SQLCipherError) {
        try prepareToBind(count: 1)
        try StatementParameter(statement: self, index: 1).bindValue(a)
    }

    /// Resets, binds the values to parameters 1 to 1, and steps until done (see ``execute(_:)-(repeat each V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible>(_ a: A) throws(SQLCipherError) {
        try bind(a)
        try runToCompletion()
    }

    /// Binds the values to parameters 1 to 2 (see ``bind(_:)-(repeat each V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible, B: DatabaseValueConvertible>(_ a: A, _ b: B) throws(SQLCipherError) {
        try prepareToBind(count: 2)
        try StatementParameter(statement: self, index: 1).bindValue(a)
        try StatementParameter(statement: self, index: 2).bindValue(b)
    }

    /// Resets, binds the values to parameters 1 to 2, and steps until done (see ``execute(_:)-(repeat each V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible, B: DatabaseValueConvertible>(_ a: A, _ b: B) throws(SQLCipherError) {
        try bind(a, b)
        try runToCompletion()
    }

    /// Binds the values to parameters 1 to 3 (see ``bind(_:)-(repeat each V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C) throws(SQLCipherError) {
        try prepareToBind(count: 3)
        try StatementParameter(statement: self, index: 1).bindValue(a)
        try StatementParameter(statement: self, index: 2).bindValue(b)
        try StatementParameter(statement: self, index: 3).bindValue(c)
    }

    /// Resets, binds the values to parameters 1 to 3, and steps until done (see ``execute(_:)-(repeat each V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C) throws(SQLCipherError) {
        try bind(a, b, c)
        try runToCompletion()
    }

    /// Binds the values to parameters 1 to 4 (see ``bind(_:)-(repeat each V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D) throws(SQLCipherError) {
        try prepareToBind(count: 4)
        try StatementParameter(statement: self, index: 1).bindValue(a)
        try StatementParameter(statement: self, index: 2).bindValue(b)
        try StatementParameter(statement: self, index: 3).bindValue(c)
        try StatementParameter(statement: self, index: 4).bindValue(d)
    }

    /// Resets, binds the values to parameters 1 to 4, and steps until done (see ``execute(_:)-(repeat each V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D) throws(SQLCipherError) {
        try bind(a, b, c, d)
        try runToCompletion()
    }

    /// Binds the values to parameters 1 to 5 (see ``bind(_:)-(repeat each V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E) throws(SQLCipherError) {
        try prepareToBind(count: 5)
        try StatementParameter(statement: self, index: 1).bindValue(a)
        try StatementParameter(statement: self, index: 2).bindValue(b)
        try StatementParameter(statement: self, index: 3).bindValue(c)
        try StatementParameter(statement: self, index: 4).bindValue(d)
        try StatementParameter(statement: self, index: 5).bindValue(e)
    }

    /// Resets, binds the values to parameters 1 to 5, and steps until done (see ``execute(_:)-(repeat each V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E) throws(SQLCipherError) {
        try bind(a, b, c, d, e)
        try runToCompletion()
    }

    /// Binds the values to parameters 1 to 6 (see ``bind(_:)-(repeat each V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible, F: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F) throws(SQLCipherError) {
        try prepareToBind(count: 6)
        try StatementParameter(statement: self, index: 1).bindValue(a)
        try StatementParameter(statement: self, index: 2).bindValue(b)
        try StatementParameter(statement: self, index: 3).bindValue(c)
        try StatementParameter(statement: self, index: 4).bindValue(d)
        try StatementParameter(statement: self, index: 5).bindValue(e)
        try StatementParameter(statement: self, index: 6).bindValue(f)
    }

    /// Resets, binds the values to parameters 1 to 6, and steps until done (see ``execute(_:)-(repeat each V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible, F: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F) throws(SQLCipherError) {
        try bind(a, b, c, d, e, f)
        try runToCompletion()
    }

    /// Binds the values to parameters 1 to 7 (see ``bind(_:)-(repeat each V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible, F: DatabaseValueConvertible, G: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F, _ g: G) throws(SQLCipherError) {
        try prepareToBind(count: 7)
        try StatementParameter(statement: self, index: 1).bindValue(a)
        try StatementParameter(statement: self, index: 2).bindValue(b)
        try StatementParameter(statement: self, index: 3).bindValue(c)
        try StatementParameter(statement: self, index: 4).bindValue(d)
        try StatementParameter(statement: self, index: 5).bindValue(e)
        try StatementParameter(statement: self, index: 6).bindValue(f)
        try StatementParameter(statement: self, index: 7).bindValue(g)
    }

    /// Resets, binds the values to parameters 1 to 7, and steps until done (see ``execute(_:)-(repeat each V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible, F: DatabaseValueConvertible, G: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F, _ g: G) throws(SQLCipherError) {
        try bind(a, b, c, d, e, f, g)
        try runToCompletion()
    }

    /// Binds the values to parameters 1 to 8 (see ``bind(_:)-(repeat each V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible, F: DatabaseValueConvertible, G: DatabaseValueConvertible, H: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F, _ g: G, _ h: H) throws(SQLCipherError) {
        try prepareToBind(count: 8)
        try StatementParameter(statement: self, index: 1).bindValue(a)
        try StatementParameter(statement: self, index: 2).bindValue(b)
        try StatementParameter(statement: self, index: 3).bindValue(c)
        try StatementParameter(statement: self, index: 4).bindValue(d)
        try StatementParameter(statement: self, index: 5).bindValue(e)
        try StatementParameter(statement: self, index: 6).bindValue(f)
        try StatementParameter(statement: self, index: 7).bindValue(g)
        try StatementParameter(statement: self, index: 8).bindValue(h)
    }

    /// Resets, binds the values to parameters 1 to 8, and steps until done (see ``execute(_:)-(repeat each V)``).
    @inlinable
    public func execute<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible, F: DatabaseValueConvertible, G: DatabaseValueConvertible, H: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F, _ g: G, _ h: H) throws(SQLCipherError) {
        try bind(a, b, c, d, e, f, g, h)
        try runToCompletion()
    }

    /// Clears all bindings, then binds `values` by position (an array literal: `bind([1, "text", nil])`).
    ///
    /// This overload keeps an array literal an argument list: without it, `[4]` could be read as one `[UInt8]`
    /// blob by ``bind(_:)-(repeat each V)``.
    @inlinable
    public func bind(_ values: [(any DatabaseValueConvertible)?]) throws(SQLCipherError) {
        try bind(StatementArguments(values))
    }

    /// Resets, binds `values` by position (an array literal: `execute([1, "text", nil])`), and steps until done.
    @inlinable
    public func execute(_ values: [(any DatabaseValueConvertible)?]) throws(SQLCipherError) {
        try execute(StatementArguments(values))
    }

    /// Binds `value` to parameter `index`, counted from 1, straight from its storage.
    @inlinable
    public func bind<V: DatabaseValueConvertible>(_ value: V, at index: Int) throws(SQLCipherError) {
        try prepareToBind(index: index)
        try value.bind(to: StatementParameter(statement: self, index: Int32(index)))
    }

    /// Rewinds for a positional bind of `count` values and clears the parameters they leave out.
    // Inlinable: the common case (open, rewound, every parameter bound) is a few loads and one call in the caller.
    @inlinable
    func prepareToBind(count: Int32) throws(SQLCipherError) {
        if !isDetached && database.handle != nil && !isStepped && count == sqlite3_bind_parameter_count(handle) {
            return
        }
        try prepareToBind(checkedCount: count)
    }

    @usableFromInline
    func prepareToBind(checkedCount count: Int32) throws(SQLCipherError) {
        try requireOpen()
        reset()
        let parameterCount = sqlite3_bind_parameter_count(handle)
        guard count <= parameterCount else {
            throw SQLCipherError(kind: .invalidArgument, message: "\(count) arguments for \(parameterCount) parameters",
                                 sql: sql)
        }
        // No values at all (`execute()`) runs with the bindings already made, as `execute(nil)` does.
        if count > 0 && count < parameterCount { clearBindings() }
    }

    /// Rewinds for a bind at `index`, which must name a parameter.
    @usableFromInline
    func prepareToBind(index: Int) throws(SQLCipherError) {
        try requireOpen()
        reset()
        guard index >= 1 && index <= Int(sqlite3_bind_parameter_count(handle)) else {
            throw SQLCipherError(kind: .invalidArgument, message: "no parameter \(index) (there are \(parameterCount))",
                                 sql: sql)
        }
    }

    /// Steps until done, then resets.
    @inlinable
    func runToCompletion() throws(SQLCipherError) {
        while try step() {}
        reset()
    }

    /// Binds `value` (nil for NULL) to parameter `index`, counted from 1. Binding rewinds the statement
    /// (``reset()``) if it was stepped.
    @_disfavoredOverload
    public func bind(_ value: (any DatabaseValueConvertible)?, at index: Int) throws(SQLCipherError) {
        try requireOpen()
        reset()
        try bind(value?.databaseValue ?? .null, at: Int32(index))
    }

    /// Binds `value` (nil for NULL) to the parameter named `name`: `:name`, `@name` or `$name`; a bare name
    /// means `:name`.
    public func bind(_ value: (any DatabaseValueConvertible)?, named name: String) throws(SQLCipherError) {
        try requireOpen()
        reset()
        try bind(value?.databaseValue ?? .null, at: try parameterIndex(named: name))
    }

    /// Clears all bindings, then binds `arguments`. Every positional value needs a parameter, and every named
    /// value a parameter of that name.
    public func bind(_ arguments: StatementArguments) throws(SQLCipherError) {
        try requireOpen()
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
        try StatementParameter(statement: self, index: index).bind(value)
    }

    // MARK: Running

    /// Advances to the next row: true when a row is available, false when the statement is done.
    // Inlinable: the checks and SQLite's step go straight into the caller's loop (a call less per row).
    @inlinable @discardableResult
    public func step() throws(SQLCipherError) -> Bool {
        guard !isDetached, database.handle != nil, !database.checksCancellation else { return try checkedStep() }
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

    /// ``step()`` when the connection is closed or a task may have been cancelled.
    @usableFromInline
    func checkedStep() throws(SQLCipherError) -> Bool {
        try requireOpen()
        try database.checkCancellation()
        isStepped = true
        // SQL that SQLite compiles during the step is its own (see SQLGuard.steppingDepth).
        database.sqlGuard.steppingDepth += 1
        let code = sqlite3_step(handle)
        database.sqlGuard.steppingDepth -= 1
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
                              refusal: database.sqlGuard.takeRefusal())
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

    // MARK: Columns of the current row

    /// The value of column `index` (from 0) of the current row.
    public func value(at index: Int) -> DatabaseValue {
        guard (0..<columnCount).contains(index), let value = sqlite3_column_value(handle, Int32(index)) else {
            return .null
        }
        return StatementColumn(value: value).databaseValue
    }

    /// Column `index` of the current row, checked to exist.
    @usableFromInline
    func checkedColumn(_ index: Int) throws(SQLCipherError) -> StatementColumn {
        guard index >= 0 && index < columnCount, !isDetached,
              let value = sqlite3_column_value(handle, Int32(index)) else {
            throw SQLCipherError(kind: .invalidArgument,
                                 message: isDetached ? "the statement's connection is closed"
                                    : "no column \(index) (there are \(columnCount))", sql: sql)
        }
        return StatementColumn(value: value)
    }

    /// The error of column `index` not converting to `type`.
    @usableFromInline
    func columnTypeMismatch(_ index: Int, _ column: StatementColumn, to type: Any.Type) -> SQLCipherError {
        Row.typeMismatch(column.databaseValue, to: type, column: columnNames[index], sql: sql)
    }

    /// Calls `body` with the bytes of column `index` of the current row where SQLite holds them, without copying:
    /// a blob's bytes or text's UTF-8. The bytes are valid only inside `body`.
    ///
    /// ```swift
    /// let length = try select.withUnsafeBytes(at: 2) { $0.count }
    /// let digest = try select.withUnsafeBytes(at: 2) { SHA256.hash(data: $0) }
    /// ```
    ///
    /// - Throws: ``SQLCipherError/Kind/typeMismatch`` when the value is NULL, an integer or a real;
    ///   ``SQLCipherError/Kind/invalidArgument`` when there is no such column.
    @inlinable
    public func withUnsafeBytes<R>(at index: Int, _ body: (UnsafeRawBufferPointer) throws(SQLCipherError) -> R)
        throws(SQLCipherError) -> R {
        try body(columnBytes(index))
    }

    /// The bytes of text or blob column `index`, valid until the statement moves on.
    @usableFromInline
    func columnBytes(_ index: Int) throws(SQLCipherError) -> UnsafeRawBufferPointer {
        let column = try checkedColumn(index)
        switch column.storageClass {
        case .text, .blob: return column.bytes
        default: throw columnTypeMismatch(index, column, to: UnsafeRawBufferPointer.self)
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
        guard index >= 0 && index < columnCount && !isDetached,
              let value = sqlite3_column_value(handle, Int32(truncatingIfNeeded: index)) else {
            return try column(index, as: T.self, checked: checkedColumn(index))
        }
        return try column(index, as: T.self, checked: StatementColumn(value: value))
    }

    @inlinable
    func column<T: DatabaseValueConvertible>(_ index: Int, as type: T.Type, checked column: StatementColumn)
        throws(SQLCipherError) -> T {
        guard let value = T.read(from: column) else { throw columnTypeMismatch(index, column, to: T.self) }
        return value
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
