/// One result row: column names and values, copied out of the statement so it outlives the step.
///
/// ```swift
/// let row = try db.fetchOne("SELECT id, body FROM note")!
/// let id: Int = try row.get("id")
/// let body: String? = try row.get(1)
/// let note = try row.decode(Note.self)   // Note: Decodable
/// ```
public struct Row: Sendable, Hashable {
    /// The column names, in order.
    public let columnNames: [String]
    /// The values, in column order.
    public let values: [DatabaseValue]

    /// A row of `values` named `columnNames` (the two have the same count).
    public init(columnNames: [String], values: [DatabaseValue]) {
        precondition(columnNames.count == values.count, "a row needs one name per value")
        self.columnNames = columnNames
        self.values = values
    }

    /// The number of columns.
    public var count: Int { values.count }

    /// The value of column `index`, from 0.
    public subscript(index: Int) -> DatabaseValue { values[index] }

    /// The value of the column named `name` (case-insensitive), or nil when there is none.
    public subscript(name: String) -> DatabaseValue? {
        index(of: name).map { values[$0] }
    }

    /// The index of the column named `name`: an exact match first, else a case-insensitive one.
    public func index(of name: String) -> Int? {
        columnNames.firstIndex(of: name)
            ?? columnNames.firstIndex { $0.lowercased() == name.lowercased() }
    }

    /// Column `index` as `T`; throws ``SQLCipherError/Kind/typeMismatch`` when it does not convert.
    public func get<T: DatabaseValueConvertible>(_ index: Int, as type: T.Type = T.self) throws(SQLCipherError) -> T {
        guard values.indices.contains(index) else {
            throw .api(.invalidArgument, "no column \(index) (the row has \(count))")
        }
        return try Row.convert(values[index], to: T.self, column: columnNames[index], sql: nil)
    }

    /// The column named `name` as `T`; throws ``SQLCipherError/Kind/typeMismatch`` when it does not convert.
    public func get<T: DatabaseValueConvertible>(_ name: String, as type: T.Type = T.self) throws(SQLCipherError) -> T {
        guard let index = index(of: name) else {
            throw .api(.invalidArgument, "no column named \(name) (columns: \(columnNames.joined(separator: ", ")))")
        }
        return try get(index, as: T.self)
    }

    // Inlinable so that typed reads are specialized in the caller: unspecialized, each read looked up the
    // metadata of `Optional<T>` at run time, which cost more than SQLite's own column read (BENCHMARKS.md).
    @inlinable
    static func convert<T: DatabaseValueConvertible>(_ value: DatabaseValue, to type: T.Type, column: String,
                                                     sql: String?) throws(SQLCipherError) -> T {
        guard let converted = T.fromDatabaseValue(value) else {
            throw typeMismatch(value, to: T.self, column: column, sql: sql)
        }
        return converted
    }

    /// The error of a value that does not convert to `type` (kept out of line: the inlined path stays small).
    @usableFromInline
    static func typeMismatch(_ value: DatabaseValue, to type: Any.Type, column: String, sql: String?) -> SQLCipherError {
        SQLCipherError(kind: .typeMismatch, message: "column \(column) holds \(value.storageClassName), not \(type)",
                       sql: sql)
    }
}
