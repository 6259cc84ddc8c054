import Foundation
import SQLCipherKit
@_spi(CodableUtilities) import SQLKit

/// Turns stored values into the types SQLKit and FluentKit ask for, with the rules of fluent-sqlite-driver (the
/// counterpart of ``SQLCipherDataEncoder``):
///
/// - Integers from integers (a real or text does not convert); `Double` and `Float` from reals or integers;
///   `String` from text, or from a number written out; `Bool` from the integers 1 and 0 (or a number text
///   spelling them); `Data` and `[UInt8]` from blobs.
/// - `Date` from a real or integer (seconds since 1970, rounded to microseconds) or ISO 8601 text.
/// - A type that decodes from one single value from that value; anything else from JSON text (or a blob).
public struct SQLCipherDataDecoder: Sendable {
    private let json: JSONCoding<JSONDecoder>

    /// A decoder with a default `JSONDecoder` for structured values.
    public init() {
        self.init(json: JSONDecoder())
    }

    /// A decoder that reads structured values with `json`.
    public init(json: JSONDecoder) {
        self.json = JSONCoding(json)
    }

    /// `value` as a `T`.
    public func decode<T: Decodable>(_ type: T.Type, from value: DatabaseValue) throws -> T {
        if let direct = try Self.direct(type, from: value) {
            return direct
        }
        do {
            return try T(from: SingleValueSource(decoder: self, value: value))
        } catch is SQLCodingError {
            let bytes: Data
            switch value {
            case .text(let text): bytes = Data(text.utf8)
            case .blob(let blob): bytes = Data(blob)
            case .integer(let number): bytes = Data(String(number).utf8)
            case .real(let number): bytes = Data(String(number).utf8)
            case .null: bytes = Data()
            }
            return try json.value.decode(T.self, from: bytes)
        }
    }

    /// `value` as one of the types stored as they are; nil for other types; throws when it does not convert.
    static func direct<T>(_ type: T.Type, from value: DatabaseValue) throws -> T? {
        func mismatch() -> DecodingError {
            .typeMismatch(T.self, .init(codingPath: [], debugDescription: "Could not convert \(value) to \(T.self)."))
        }
        func integer<I: FixedWidthInteger>(_: I.Type) throws -> T {
            guard case .integer(let number) = value, let converted = I(exactly: number) else { throw mismatch() }
            return converted as! T
        }
        func real() -> Double? {
            switch value {
            case .integer(let number): Double(number)
            case .real(let number): number
            default: nil
            }
        }
        switch type {
        case is DatabaseValue.Type: return (value as! T)
        case is Int.Type: return try integer(Int.self)
        case is Int64.Type: return try integer(Int64.self)
        case is Int32.Type: return try integer(Int32.self)
        case is Int16.Type: return try integer(Int16.self)
        case is Int8.Type: return try integer(Int8.self)
        case is UInt.Type: return try integer(UInt.self)
        case is UInt64.Type: return try integer(UInt64.self)
        case is UInt32.Type: return try integer(UInt32.self)
        case is UInt16.Type: return try integer(UInt16.self)
        case is UInt8.Type: return try integer(UInt8.self)
        case is Double.Type:
            guard let number = real() else { throw mismatch() }
            return (number as! T)
        case is Float.Type:
            guard let number = real() else { throw mismatch() }
            return (Float(number) as! T)
        case is String.Type:
            switch value {
            case .text(let text): return (text as! T)
            case .integer(let number): return (String(number) as! T)
            case .real(let number): return (String(number) as! T)
            case .blob, .null: throw mismatch()
            }
        case is Bool.Type:
            let number: Int64?
            switch value {
            case .integer(let integer): number = integer
            case .real(let real): number = Int64(exactly: real)
            case .text(let text): number = Int64(text)
            case .blob, .null: number = nil
            }
            guard let number, number == 0 || number == 1 else { throw mismatch() }
            return ((number == 1) as! T)
        case is Data.Type:
            guard case .blob(let bytes) = value else { throw mismatch() }
            return (Data(bytes) as! T)
        case is [UInt8].Type:
            guard case .blob(let bytes) = value else { throw mismatch() }
            return (bytes as! T)
        case is Date.Type:
            guard let date = Self.date(from: value) else { throw mismatch() }
            return (date as! T)
        default:
            return nil
        }
    }

    /// A date from seconds since 1970 (rounded to microseconds, so that a stored date compares equal to the one
    /// written) or from ISO 8601 text.
    static func date(from value: DatabaseValue) -> Date? {
        let seconds: Double
        switch value {
        case .real(let number): seconds = number
        case .integer(let number): seconds = Double(number)
        case .text(let text): return isoDate(text)
        case .blob, .null: return nil
        }
        let sinceReference = seconds - Date.timeIntervalBetween1970AndReferenceDate
        return Date(timeIntervalSinceReferenceDate: (sinceReference * 1e6).rounded() / 1e6)
    }

    private static func isoDate(_ text: String) -> Date? {
        (try? Date(text, strategy: .iso8601))
            ?? (try? Date(text, strategy: .iso8601.dateTimeSeparator(.space)))
            ?? (try? Date(text, strategy: .iso8601.dateTimeSeparator(.space).year().month().day()
                .time(includingFractionalSeconds: false)))
            ?? (try? Date(text, strategy: .iso8601.year().month().day()))
    }

    /// Offers a stored value to a type that decodes itself from one single value; any other shape throws
    /// `SQLCodingError`.
    private final class SingleValueSource: Decoder, SingleValueDecodingContainer {
        let decoder: SQLCipherDataDecoder
        let value: DatabaseValue
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        init(decoder: SQLCipherDataDecoder, value: DatabaseValue) {
            self.decoder = decoder
            self.value = value
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            throw .invalid(at: codingPath)
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            throw .invalid(at: codingPath)
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

        func decodeNil() -> Bool { value.isNull }

        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(T.self, from: value) }
    }
}
