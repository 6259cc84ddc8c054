/// Hexadecimal digits: the one copy the library, the command-line tool and the tests use.
///
/// `package` access: shared inside this package, not part of SQLCipherKit's public API. The byte-level forms
/// (``digit(_:)``, ``value(ofDigit:)``, ``write(_:into:at:)``) let key material be encoded and decoded straight
/// into wiped storage, with no intermediate `String` or array.
package enum Hex {
    /// The lowercase digit (ASCII) for a value 0...15.
    @inlinable
    package static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// The value 0...15 of an ASCII hexadecimal digit, in either case, or nil when `byte` is not one.
    @inlinable
    package static func value(ofDigit byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Whether `byte` is an ASCII hexadecimal digit, in either case.
    @inlinable
    package static func isDigit(_ byte: UInt8) -> Bool { value(ofDigit: byte) != nil }

    /// `byte` with an uppercase digit A–F lowercased; every other byte unchanged.
    @inlinable
    package static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte) ? byte + 32 : byte
    }

    /// Writes the two lowercase digits of `byte` into `buffer` at `index` and `index + 1`.
    @inlinable
    package static func write(_ byte: UInt8, into buffer: UnsafeMutableRawBufferPointer, at index: Int) {
        buffer[index] = digit(byte >> 4)
        buffer[index + 1] = digit(byte & 0x0f)
    }

    /// Lowercase hexadecimal text, two digits per byte.
    package static func string(_ bytes: some Sequence<UInt8>) -> String {
        var digits: [UInt8] = []
        digits.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            digits.append(digit(byte >> 4))
            digits.append(digit(byte & 0x0f))
        }
        return String(decoding: digits, as: UTF8.self)
    }

    /// The bytes that hexadecimal text (either case, an even count of digits, nothing else) stands for, or nil.
    package static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(ofDigit: digits[index]), let low = value(ofDigit: digits[index + 1]) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
