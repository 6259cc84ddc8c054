import SQLCipherKit
import SQLKit

/// A result row for SQLKit: SQLCipherKit's `Row` with the decoder that reads its values.
public struct SQLCipherRow: SQLRow {
    /// The row as SQLCipherKit read it.
    public let row: Row
    /// The decoder of its values.
    public let decoder: SQLCipherDataDecoder

    /// A row read with `decoder`.
    public init(row: Row, decoder: SQLCipherDataDecoder = .init()) {
        self.row = row
        self.decoder = decoder
    }

    /// The column names, in order.
    public var allColumns: [String] { row.columnNames }

    /// Whether the row has a column named `column`.
    public func contains(column: String) -> Bool { row.index(of: column) != nil }

    /// Whether `column` is NULL (or missing).
    public func decodeNil(column: String) throws -> Bool { row[column]?.isNull ?? true }

    /// `column`'s value as a `D`; throws ``SQLCipherMissingColumn`` when there is no such column.
    public func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let value = row[column] else { throw SQLCipherMissingColumn(column: column, columns: row.columnNames) }
        return try decoder.decode(D.self, from: value)
    }
}

/// A row was asked for a column it does not have.
public struct SQLCipherMissingColumn: Error, CustomStringConvertible {
    /// The column asked for.
    public let column: String
    /// The columns the row has.
    public let columns: [String]

    /// What went wrong and what to do.
    public var description: String {
        "The row has no column '\(column)' (it has \(columns.joined(separator: ", "))): select it, or check its name."
    }
}
