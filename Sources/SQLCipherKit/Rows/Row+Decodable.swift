extension Row {
    /// Decodes the row into `T`, matching coding keys to column names (case-insensitive).
    ///
    /// Properties of the types ``DatabaseValueConvertible`` covers (`Int`, `String`, `Date`, `Data`…) read their
    /// column directly; optionals read NULL as nil. A `Decodable` with a single value container (such as
    /// a `RawRepresentable` enum) reads the first column.
    ///
    /// - Throws: `DecodingError` when a column is missing or does not convert.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        if T.self is any DatabaseValueConvertible.Type, count > 0 {
            return try RowDecoder.decode(T.self, from: self[0], path: [])
        }
        return try T(from: RowDecoder(row: self, codingPath: []))
    }
}
