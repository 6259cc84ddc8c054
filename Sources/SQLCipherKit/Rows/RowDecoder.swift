import Foundation

/// A `Decoder` that reads one ``Row``.
struct RowDecoder: Decoder {
    let row: Row
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(KeyedContainer<Key>(row: row, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath,
            debugDescription: "a row decodes as a keyed container (columns by name) or a single value"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        guard row.count > 0 else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "the row has no column"))
        }
        return ValueContainer(value: row[0], codingPath: codingPath)
    }

    /// Converts `value` to a ``DatabaseValueConvertible`` type, or throws the matching `DecodingError`.
    static func convert(_ value: DatabaseValue, to type: any DatabaseValueConvertible.Type,
                        path: [any CodingKey]) throws -> any DatabaseValueConvertible {
        guard let converted = type.fromDatabaseValue(value) else {
            let context = DecodingError.Context(codingPath: path,
                debugDescription: "the column holds \(value.storageClassName), not \(type)")
            throw value.isNull ? DecodingError.valueNotFound(type, context) : DecodingError.typeMismatch(type, context)
        }
        return converted
    }

    /// Decodes `T` from one column value: directly for convertible types, else through a single value
    /// container (enums with raw values and similar wrappers).
    static func decode<T: Decodable>(_ type: T.Type, from value: DatabaseValue, path: [any CodingKey]) throws -> T {
        if let convertible = T.self as? any DatabaseValueConvertible.Type {
            guard let result = try convert(value, to: convertible, path: path) as? T else {
                throw DecodingError.typeMismatch(T.self, .init(codingPath: path, debugDescription: "unexpected type"))
            }
            return result
        }
        return try T(from: ValueDecoder(value: value, codingPath: path))
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let row: Row
        let codingPath: [any CodingKey]

        var allKeys: [Key] { row.columnNames.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { row.index(of: key.stringValue) != nil }

        private func value(for key: Key) throws -> DatabaseValue {
            guard let value = row[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath,
                    debugDescription: "no column named \(key.stringValue) (columns: \(row.columnNames.joined(separator: ", ")))"))
            }
            return value
        }

        func decodeNil(forKey key: Key) throws -> Bool { try value(for: key).isNull }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try RowDecoder.decode(T.self, from: value(for: key), path: codingPath + [key])
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey> {
            throw DecodingError.typeMismatch([String: Any].self, .init(codingPath: codingPath + [key],
                debugDescription: "a column holds one value, not a nested container"))
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath + [key],
                debugDescription: "a column holds one value, not a nested container"))
        }

        func superDecoder() throws -> any Decoder { RowDecoder(row: row, codingPath: codingPath) }
        func superDecoder(forKey key: Key) throws -> any Decoder { RowDecoder(row: row, codingPath: codingPath + [key]) }
    }

    /// Decodes a single column value (for `RawRepresentable` enums and other single-value wrappers).
    struct ValueDecoder: Decoder {
        let value: DatabaseValue
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            throw DecodingError.typeMismatch([String: Any].self, .init(codingPath: codingPath,
                debugDescription: "a column holds one value, not a keyed container"))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath,
                debugDescription: "a column holds one value, not an unkeyed container"))
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer {
            ValueContainer(value: value, codingPath: codingPath)
        }
    }

    struct ValueContainer: SingleValueDecodingContainer {
        let value: DatabaseValue
        let codingPath: [any CodingKey]

        func decodeNil() -> Bool { value.isNull }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try RowDecoder.decode(T.self, from: value, path: codingPath)
        }
    }
}
