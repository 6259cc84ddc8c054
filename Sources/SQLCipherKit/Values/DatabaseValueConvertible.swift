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

    /// Binds the value to a statement parameter straight from its storage.
    ///
    /// The default binds ``databaseValue``; the provided conformances bind without building a
    /// ``DatabaseValue``. Implement it for a type of your own when binding it is on a hot path.
    func bind(to parameter: StatementParameter) throws(SQLCipherError)

    /// The Swift value for the column where SQLite holds it, or nil when it does not convert (the same
    /// conversions as ``fromDatabaseValue(_:)``).
    ///
    /// The default reads ``StatementColumn/databaseValue`` and calls ``fromDatabaseValue(_:)``; the provided
    /// conformances read without building a ``DatabaseValue``.
    static func read(from column: StatementColumn) -> Self?
}

extension DatabaseValueConvertible {
    /// Binds ``databaseValue``.
    public func bind(to parameter: StatementParameter) throws(SQLCipherError) {
        try parameter.bind(databaseValue)
    }

    /// ``fromDatabaseValue(_:)`` of the column's value.
    public static func read(from column: StatementColumn) -> Self? {
        fromDatabaseValue(column.databaseValue)
    }
}

extension DatabaseValue: DatabaseValueConvertible {
    /// Itself.
    public var databaseValue: DatabaseValue { self }
    /// Itself.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> DatabaseValue? { value }
}
