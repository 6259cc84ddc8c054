import CSQLCipher

/// One column of the current row of a ``Statement``, handed to ``DatabaseValueConvertible/read(from:)``: reads
/// the value where SQLite holds it, with no ``DatabaseValue`` in between.
///
/// It is valid only during the call it is passed to (until the statement steps, resets or is released).
public struct StatementColumn {
    /// SQLite's storage classes.
    public enum StorageClass: Sendable, Equatable {
        case null, integer, real, text, blob
    }

    // The column's sqlite3_value, read once per column (sqlite3_column_value takes the connection's mutex; the
    // sqlite3_value_* reads that follow do not). SQLite calls such a value "unprotected": it may be read only
    // while no other thread uses the connection, which is already the rule for a Database and its statements
    // (each confined to one thread or task at a time), and only until the statement steps or resets, which is
    // this type's lifetime.
    @usableFromInline
    let value: OpaquePointer

    @inlinable
    init(value: OpaquePointer) {
        self.value = value
    }

    /// The value's storage class.
    @inlinable
    public var storageClass: StorageClass {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    /// The value as an integer (SQLite's conversion: text and reals are converted, NULL is 0).
    @inlinable
    public var integer: Int64 { sqlite3_value_int64(value) }

    /// The value as a real (SQLite's conversion: text and integers are converted, NULL is 0).
    @inlinable
    public var real: Double { sqlite3_value_double(value) }

    /// Calls `body` with the bytes of a text (its UTF-8) or blob value, where SQLite holds them; an empty buffer
    /// for other storage classes. The bytes are valid only inside `body`.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws(SQLCipherError) -> R)
        throws(SQLCipherError) -> R {
        try body(bytes)
    }

    /// The bytes of a text or blob value (empty for the other classes); valid until the statement moves on.
    var bytes: UnsafeRawBufferPointer {
        switch sqlite3_value_type(value) {
        case SQLITE_TEXT:
            let start = sqlite3_value_text(value)
            return UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : Int(sqlite3_value_bytes(value)))
        case SQLITE_BLOB:
            let start = sqlite3_value_blob(value)
            return UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : Int(sqlite3_value_bytes(value)))
        default:
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
    }

    /// The value, copied out of the statement.
    public var databaseValue: DatabaseValue {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT:
            return .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            return .text(String(decoding: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self))
        case SQLITE_BLOB:
            return .blob(Array(bytes))
        default:
            return .null
        }
    }
}
