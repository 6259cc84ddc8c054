import Foundation
import SQLCipherKit
@_spi(CodableUtilities) import SQLKit

/// Turns the values SQLKit and FluentKit bind into the values SQLCipherKit stores, with the rules of
/// fluent-sqlite-driver (so that a file it wrote, encrypted with `sqlcipherkit encrypt`, reads back the same):
///
/// - `Bool` is an integer, 1 or 0; integers are integers; `Double` and `Float` are reals; `String` is text;
///   `Data` and `[UInt8]` are blobs.
/// - `Date` is a real: seconds since 1970.
/// - A value that encodes as one single value (`UUID`, enums with raw values, wrappers) is that value.
/// - Any other `Encodable` (structs, arrays, dictionaries) is JSON, stored as text.
public struct SQLCipherDataEncoder: Sendable {
    private let json: JSONCoding<JSONEncoder>

    /// An encoder with a default `JSONEncoder` for structured values.
    public init() {
        self.init(json: JSONEncoder())
    }

    /// An encoder that writes structured values with `json`.
    public init(json: JSONEncoder) {
        self.json = JSONCoding(json)
    }

    /// The stored form of `value`.
    public func encode(_ value: any Encodable) throws -> DatabaseValue {
        if let direct = Self.direct(value) {
            return direct
        }
        let single = SingleValueCapture(encoder: self)
        do {
            try value.encode(to: single)
            guard let captured = single.value else {
                throw SQLCodingError.unsupportedOperation("missing value", codingPath: [])
            }
            return captured
        } catch is SQLCodingError {
            // Not a single value: JSON text (as fluent-sqlite-driver sends it; never a blob, which SQLite 3.45
            // would read as JSONB).
            return .text(String(decoding: try json.value.encode(value), as: UTF8.self))
        }
    }

    /// The stored form of the types SQLite stores as they are.
    static func direct(_ input: Any) -> DatabaseValue? {
        switch input {
        case let value as DatabaseValue: value
        case let value as Bool: .integer(value ? 1 : 0)
        case let value as String: .text(value)
        case let value as Int: .integer(Int64(value))
        case let value as Int64: .integer(value)
        case let value as Int32: .integer(Int64(value))
        case let value as Int16: .integer(Int64(value))
        case let value as Int8: .integer(Int64(value))
        case let value as UInt: .integer(Int64(truncatingIfNeeded: value))
        case let value as UInt64: .integer(Int64(truncatingIfNeeded: value))
        case let value as UInt32: .integer(Int64(value))
        case let value as UInt16: .integer(Int64(value))
        case let value as UInt8: .integer(Int64(value))
        case let value as Double: .real(value)
        case let value as Float: .real(Double(value))
        case let value as Date: .real(value.timeIntervalSince1970)
        case let value as Data: .blob([UInt8](value))
        // Not `as [UInt8]`: any empty array casts to it, and an empty [String] is JSON text, not an empty blob.
        case let value as [UInt8] where type(of: input) == [UInt8].self: .blob(value)
        default: nil
        }
    }

    /// Captures a value that encodes itself as one single value; any other shape throws `SQLCodingError`.
    private final class SingleValueCapture: Encoder, SingleValueEncodingContainer {
        let encoder: SQLCipherDataEncoder
        var value: DatabaseValue?
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        init(encoder: SQLCipherDataEncoder) {
            self.encoder = encoder
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            .invalid(at: codingPath)
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            .invalid(at: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { self }

        func encodeNil() throws { value = .null }
        func encode(_ value: Bool) throws { self.value = .integer(value ? 1 : 0) }
        func encode(_ value: String) throws { self.value = .text(value) }
        func encode(_ value: Double) throws { self.value = .real(value) }
        func encode(_ value: Float) throws { self.value = .real(Double(value)) }
        func encode(_ value: Int) throws { self.value = .integer(Int64(value)) }
        func encode(_ value: Int8) throws { self.value = .integer(Int64(value)) }
        func encode(_ value: Int16) throws { self.value = .integer(Int64(value)) }
        func encode(_ value: Int32) throws { self.value = .integer(Int64(value)) }
        func encode(_ value: Int64) throws { self.value = .integer(value) }
        func encode(_ value: UInt) throws { self.value = .integer(Int64(truncatingIfNeeded: value)) }
        func encode(_ value: UInt8) throws { self.value = .integer(Int64(value)) }
        func encode(_ value: UInt16) throws { self.value = .integer(Int64(value)) }
        func encode(_ value: UInt32) throws { self.value = .integer(Int64(value)) }
        func encode(_ value: UInt64) throws { self.value = .integer(Int64(truncatingIfNeeded: value)) }
        func encode<T: Encodable>(_ value: T) throws { self.value = try encoder.encode(value) }
    }
}

/// A JSON coder, shared between tasks: Foundation's coders are not marked `Sendable`, but they hold only
/// configuration, which nothing here changes after init.
struct JSONCoding<Coder>: @unchecked Sendable {
    let value: Coder
    init(_ value: Coder) { self.value = value }
}
