/// A value as SQLite stores it: one of its five storage classes.
public enum DatabaseValue: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// A 64-bit IEEE floating-point number.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob([UInt8])

    /// Whether this is SQL NULL.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension DatabaseValue: CustomStringConvertible {
    /// The value as SQL would write it: `NULL`, `42`, `1.5`, `'text'`, `x'0102'`.
    public var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .text(let value): value.quoted(by: "'", escapingAs: "''")
        case .blob(let bytes): "x'" + Hex.string(bytes) + "'"
        }
    }
}

extension DatabaseValue {
    /// SQLite's name for the storage class, for messages (never the value: it may be sensitive).
    var storageClassName: String {
        switch self {
        case .null: "NULL"
        case .integer: "an integer"
        case .real: "a real"
        case .text: "text"
        case .blob: "a blob"
        }
    }
}
