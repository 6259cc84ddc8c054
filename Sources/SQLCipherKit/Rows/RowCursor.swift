/// The rows of a statement, read one at a time as you ask for them: nothing is loaded ahead.
///
/// ```swift
/// let cursor = try db.fetchCursor("SELECT body FROM note")
/// while let row = try cursor.next() {
///     print(try row.get("body", as: String.self))
/// }
/// ```
///
/// A cursor steps its statement; preparing or running that statement again restarts it.
public final class RowCursor {
    /// The statement being stepped.
    public let statement: Statement
    private var isDone = false

    init(statement: Statement) {
        self.statement = statement
    }

    /// The next row, or nil after the last one.
    public func next() throws(SQLCipherError) -> Row? {
        guard !isDone else { return nil }
        guard try statement.step() else {
            isDone = true
            statement.reset()
            return nil
        }
        return statement.row
    }

    /// The next row decoded as `T`, or nil after the last one.
    public func next<T: Decodable>(as type: T.Type) throws -> T? {
        try next().map { try $0.decode(T.self) }
    }

    /// Calls `body` with each remaining row.
    public func forEach(_ body: (Row) throws -> Void) throws {
        while let row = try next() {
            try body(row)
        }
    }

    /// All remaining rows.
    public func all() throws(SQLCipherError) -> [Row] {
        var rows: [Row] = []
        while let row = try next() {
            rows.append(row)
        }
        return rows
    }
}
