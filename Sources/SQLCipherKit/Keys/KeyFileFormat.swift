/// How the bytes of a key file, a credential or a key command's output are read: said explicitly by the caller,
/// never guessed from the content.
public enum KeyFileFormat: String, Sendable, Equatable, CaseIterable {
    /// A passphrase: the bytes as they are, minus one trailing line ending (`\n` or `\r\n`), which editors and
    /// `echo` add. SQLCipher derives the key from it with PBKDF2.
    case passphrase
    /// A raw key in hexadecimal: 64 digits (a raw key) or 96 (a raw key followed by its salt), with one trailing
    /// line ending allowed; upper- or lower-case digits.
    case rawHex

    /// The key these bytes hold in this format. The bytes are not copied anywhere but into the key's own wiped
    /// storage.
    ///
    /// The one rule for a key's line end, whatever its source (a file, a credential, a command's output, and in
    /// the `sqlcipherkit` tool also the environment, standard input and the prompt): one trailing `\n` or `\r\n`
    /// is dropped, nothing else. `abc\r` is the passphrase `abc\r`, `abc\n\n` the passphrase `abc\n`.
    ///
    /// - Throws: ``SQLCipherError`` of kind ``SQLCipherError/Kind/invalidKey`` when the bytes are no key of this
    ///   format (its message gives lengths, never content).
    package func key(from bytes: UnsafeRawBufferPointer) throws(SQLCipherError) -> Key {
        let count = KeyFileFormat.lengthWithoutLineEnd(bytes)
        let content = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
        switch self {
        case .passphrase: return try Key.passphrase(copying: content)
        case .rawHex: return try Key.rawKey(hex: content)
        }
    }

    /// How many of `bytes` remain once one trailing `\n` or `\r\n` is dropped (the rule of ``key(from:)``).
    static func lengthWithoutLineEnd(_ bytes: UnsafeRawBufferPointer) -> Int {
        var count = bytes.count
        if count > 0, bytes[count - 1] == UInt8(ascii: "\n") {
            count -= 1
            if count > 0, bytes[count - 1] == UInt8(ascii: "\r") { count -= 1 }
        }
        return count
    }
}
