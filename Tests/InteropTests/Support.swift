import Foundation
import ProcessTestSupport
import SQLCipherKit

/// A test failure with a message (a thrown error fails the test that throws it).
struct InteropFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// ------------------------------------------------------------------------------------------- values ---

/// A value as interop.py prints and reads it: tagged, with integers in decimal and reals as their IEEE 754
/// bits, so that JSON loses nothing on the way.
struct TaggedValue: Codable, Equatable {
    var type: String
    var value: String?
    var bits: String?
    var hex: String?

    init(_ value: DatabaseValue) {
        switch value {
        case .null: type = "null"
        case .integer(let integer): type = "integer"; self.value = String(integer)
        case .real(let real): type = "real"; bits = Hex.string(withUnsafeBytes(of: real.bitPattern.bigEndian) { Array($0) })
        case .text(let text): type = "text"; self.value = text
        case .blob(let bytes): type = "blob"; hex = Hex.string(bytes)
        }
    }

    func databaseValue() throws -> DatabaseValue {
        switch type {
        case "null": return .null
        case "integer":
            guard let value, let integer = Int64(value) else { throw InteropFailure("bad integer: \(self)") }
            return .integer(integer)
        case "real":
            guard let bits, let pattern = UInt64(bits, radix: 16) else { throw InteropFailure("bad real: \(self)") }
            return .real(Double(bitPattern: pattern))
        case "text":
            guard let value else { throw InteropFailure("text without a value") }
            return .text(value)
        case "blob":
            guard let hex, let bytes = Hex.bytes(hex) else { throw InteropFailure("bad blob: \(self)") }
            return .blob(bytes)
        default: throw InteropFailure("unknown value type \(type)")
        }
    }
}

/// What `interop.py facts` and `read` print.
/// (Decoded with `.convertFromSnakeCase`: `cipher_version` → `cipherVersion`.)
struct PythonReport: Decodable {
    var module: String
    var moduleVersion: String
    var cipherVersion: String
    var cipherProvider: String
    var cipherProviderVersion: String
    var sqliteVersion: String
    var integrityCheck: [String]?
    var cipherIntegrityCheck: [String]?
    var rows: [[TaggedValue]]?

    func databaseRows() throws -> [[DatabaseValue]] {
        try (rows ?? []).map { try $0.map { try $0.databaseValue() } }
    }
}
