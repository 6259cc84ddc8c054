import CSQLCipher
import Foundation

// Reading the columns of the current row.
extension Statement {
    /// The index of the result column named `name` (case-insensitive, as in SQL), or nil.
    public func columnIndex(named name: String) -> Int? {
        columnNames.firstIndex(of: name) ?? columnNames.firstIndex { $0.caseInsensitiveCompare(name) == .orderedSame }
    }

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
