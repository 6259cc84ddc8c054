import Foundation

/// A Swift type that converts to and from a ``DatabaseValue``: what statements bind and columns return.
///
/// SQLCipherKit provides conformances for `Int`, `Int64`, `Int32`, `Double`, `Bool`, `String`, `Data`,
/// `[UInt8]`, `Date` and `Optional` of any of them.
public protocol DatabaseValueConvertible {
    /// The value to store.
    var databaseValue: DatabaseValue { get }

    /// The Swift value for a stored value, or nil when it does not convert (such as NULL, or text for an
    /// integer).
    static func fromDatabaseValue(_ value: DatabaseValue) -> Self?
}

extension Int64: DatabaseValueConvertible {
    /// An integer.
    public var databaseValue: DatabaseValue { .integer(self) }
    /// Integers; reals that are whole numbers in range.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Int64? {
        switch value {
        case .integer(let integer): integer
        case .real(let real): Int64(exactly: real)
        default: nil
        }
    }
}

extension Int: DatabaseValueConvertible {
    /// An integer.
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
    /// As `Int64`, when it fits.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Int? {
        Int64.fromDatabaseValue(value).flatMap { Int(exactly: $0) }
    }
}

extension Int32: DatabaseValueConvertible {
    /// An integer.
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
    /// As `Int64`, when it fits.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Int32? {
        Int64.fromDatabaseValue(value).flatMap { Int32(exactly: $0) }
    }
}

extension Double: DatabaseValueConvertible {
    /// A real.
    public var databaseValue: DatabaseValue { .real(self) }
    /// Reals and integers.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Double? {
        switch value {
        case .real(let real): real
        case .integer(let integer): Double(integer)
        default: nil
        }
    }
}

extension Bool: DatabaseValueConvertible {
    /// The integer 1 or 0, as SQLite stores booleans.
    public var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }
    /// Non-zero numbers are true.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Bool? {
        switch value {
        case .integer(let integer): integer != 0
        case .real(let real): real != 0
        default: nil
        }
    }
}

extension String: DatabaseValueConvertible {
    /// Text.
    public var databaseValue: DatabaseValue { .text(self) }
    /// Text, and blobs that are valid UTF-8.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> String? {
        switch value {
        case .text(let text): text
        case .blob(let bytes): String(validating: bytes, as: UTF8.self)
        default: nil
        }
    }
}

extension Array: DatabaseValueConvertible where Element == UInt8 {
    /// A blob.
    public var databaseValue: DatabaseValue { .blob(self) }
    /// Blobs, and the UTF-8 bytes of text.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> [UInt8]? {
        switch value {
        case .blob(let bytes): bytes
        case .text(let text): Array(text.utf8)
        default: nil
        }
    }
}

extension Data: DatabaseValueConvertible {
    /// A blob.
    public var databaseValue: DatabaseValue { .blob(Array(self)) }
    /// As `[UInt8]`.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Data? {
        [UInt8].fromDatabaseValue(value).map { Data($0) }
    }
}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    /// NULL for nil, else the wrapped value's.
    public var databaseValue: DatabaseValue { self?.databaseValue ?? .null }
    /// nil for NULL (a successful conversion), else the wrapped type's conversion.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Wrapped?? {
        if case .null = value { return .some(nil) }
        return Wrapped.fromDatabaseValue(value).map { .some($0) }
    }
}

extension DatabaseValue: DatabaseValueConvertible {
    /// Itself.
    public var databaseValue: DatabaseValue { self }
    /// Itself.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> DatabaseValue? { value }
}
