import FluentKit
import SQLKit

/// A result row as FluentKit reads it: fields by key, with the schema prefix joined queries use.
struct SQLCipherDatabaseOutput: DatabaseOutput {
    let row: any SQLRow
    let schema: String?

    var description: String { String(describing: row) }

    func schema(_ schema: String) -> any DatabaseOutput {
        SQLCipherDatabaseOutput(row: row, schema: schema)
    }

    func contains(_ key: FieldKey) -> Bool {
        row.contains(column: column(key))
    }

    func decodeNil(_ key: FieldKey) throws -> Bool {
        try row.decodeNil(column: column(key))
    }

    func decode<T: Decodable>(_ key: FieldKey, as type: T.Type) throws -> T {
        try row.decode(column: column(key), as: T.self)
    }

    /// The column of `key`: `schema_key` in a row of a joined schema.
    private func column(_ key: FieldKey) -> String {
        (schema.map { FieldKey.prefix(.prefix(.string($0), "_"), key) } ?? key).description
    }
}
