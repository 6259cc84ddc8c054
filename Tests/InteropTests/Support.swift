import Foundation
import ProcessTestSupport
import SQLCipherKit

/// A test failure with a message (a thrown error fails the test that throws it).
struct InteropFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs the built `sqlcipherkit` (SwiftPM builds it next to the test bundle, InteropTests depending on it).
enum CLI {
    static let executable = builtCLIExecutable

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        // Standard input is an empty pipe: no terminal, so the CLI can never prompt.
        try runProcess(executable, arguments,
                       environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, timeout: 120)
    }
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
        case .real(let real): type = "real"; bits = String(real.bitPattern, radix: 16).leftPadded(to: 16)
        case .text(let text): type = "text"; self.value = text
        case .blob(let bytes): type = "blob"; hex = bytes.hexString
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
            guard let hex, let bytes = [UInt8](hexDigits: hex) else { throw InteropFailure("bad blob: \(self)") }
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

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

extension Array where Element == UInt8 {
    var hexString: String { map { String($0, radix: 16).leftPadded(to: 2) }.joined() }

    /// The bytes of an even number of hex digits, or nil.
    init?(hexDigits: String) {
        let digits = Array(hexDigits.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        self = bytes
    }
}
