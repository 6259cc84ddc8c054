/// The key that opens an encrypted database.
///
/// A key is a passphrase, from which SQLCipher derives the encryption key with PBKDF2 (slow on purpose), or
/// a raw 256-bit key (no derivation), optionally with the database's 16-byte salt:
///
/// ```swift
/// let key = try Key.passphrase("correct horse battery staple")
/// let raw = try Key.rawKey(keyBytes)                 // 32 bytes
/// let rawWithSalt = try Key.rawKey(keyBytes, salt: saltBytes) // 32 + 16 bytes
/// ```
///
/// The key material is copied into storage that SQLCipherKit owns and that is overwritten with zeros when the
/// last copy of the key is released. It reaches SQLCipher only through `sqlite3_key_v2` (never inside SQL
/// text), and ``description``, ``debugDescription`` and `dump` show only the kind of key, never its bytes.
/// The `String` or array you pass in is yours: SQLCipherKit cannot wipe it.
///
/// A passphrase is used byte for byte (quotes, Unicode, NUL bytes included), with one exception that comes
/// from HMAC inside PBKDF2: trailing zero bytes do not change the derived key (`"a\0"` opens what `"a"`
/// opened).
public struct Key: Sendable {
    /// What a key is made of.
    public enum Kind: String, Sendable, Equatable {
        /// A passphrase: SQLCipher derives the encryption key from it with the database's KDF settings.
        case passphrase
        /// A raw 32-byte encryption key: no key derivation.
        case rawKey
        /// A raw 32-byte encryption key and the database's 16-byte salt.
        case rawKeyWithSalt
    }

    /// The length of a raw key, in bytes (AES-256).
    public static let rawKeyLength = 32
    /// The length of a database salt, in bytes.
    public static let saltLength = 16

    /// What this key is made of.
    public let kind: Kind

    /// Exactly the bytes `sqlite3_key_v2` receives: the passphrase, or the `x'…'` blob text of a raw key.
    let material: SecureBytes

    /// A key holding nothing, to replace a key that must be forgotten (its old storage is then wiped).
    static var wiped: Key { Key(kind: .rawKey, material: SecureBytes(count: 0) { _ in }) }

    private init(kind: Kind, material: SecureBytes) {
        self.kind = kind
        self.material = material
    }

    /// A passphrase key from a string, used as its UTF-8 bytes.
    ///
    /// - Throws: an ``SQLCipherError/Kind/invalidKey`` error when the passphrase is empty (SQLCipher would then
    ///   not encrypt at all) or has the `x'…'` form that SQLCipher reads as a raw key.
    public static func passphrase(_ passphrase: String) throws(SQLCipherError) -> Key {
        var text = passphrase
        let material = text.withUTF8 { SecureBytes(copying: UnsafeRawBufferPointer($0)) }
        return try Key(checkedPassphrase: material)
    }

    /// A passphrase key from bytes (any bytes, not necessarily UTF-8).
    ///
    /// - Throws: an ``SQLCipherError/Kind/invalidKey`` error as ``passphrase(_:)`` does.
    public static func passphrase(bytes: [UInt8]) throws(SQLCipherError) -> Key {
        let material = bytes.withUnsafeBytes { SecureBytes(copying: $0) }
        return try Key(checkedPassphrase: material)
    }

    /// A raw 256-bit encryption key; SQLCipher skips key derivation.
    ///
    /// - Throws: an ``SQLCipherError/Kind/invalidKey`` error unless `key` holds exactly 32 bytes.
    public static func rawKey(_ key: [UInt8]) throws(SQLCipherError) -> Key {
        try checkLength(key, expected: rawKeyLength, of: "a raw key")
        return Key(kind: .rawKey, material: blobLiteral(key, []))
    }

    /// A raw 256-bit encryption key together with the database's salt.
    ///
    /// - Throws: an ``SQLCipherError/Kind/invalidKey`` error unless `key` holds 32 bytes and `salt` 16.
    public static func rawKey(_ key: [UInt8], salt: [UInt8]) throws(SQLCipherError) -> Key {
        try checkLength(key, expected: rawKeyLength, of: "a raw key")
        try checkLength(salt, expected: saltLength, of: "a salt")
        return Key(kind: .rawKeyWithSalt, material: blobLiteral(key, salt))
    }

    /// A raw key from hexadecimal text: 64 digits for a raw key, 96 for a raw key followed by its salt.
    ///
    /// The digits are decoded straight into wiped storage.
    ///
    /// - Throws: an ``SQLCipherError/Kind/invalidKey`` error unless `hex` is 64 or 96 hexadecimal digits.
    public static func rawKey(hex: some Collection<UInt8>) throws(SQLCipherError) -> Key {
        let digits = hex.count
        guard digits == 2 * rawKeyLength || digits == 2 * (rawKeyLength + saltLength) else {
            // Never the count given: it is the length of what may be a passphrase given with --raw by mistake.
            throw .api(.invalidKey, "a raw key in hex must be \(2 * rawKeyLength) digits "
                + "(or \(2 * (rawKeyLength + saltLength)) with its salt), and this is not: for a passphrase, leave "
                + "out --raw")
        }
        guard hex.allSatisfy(Hex.isDigit) else {
            throw .api(.invalidKey, "a raw key in hex may hold only the digits 0-9 and a-f")
        }
        // The x'…' text form is the hex digits themselves, quoted: copy them, lowercased, into wiped storage.
        let material = SecureBytes(count: digits + 3) { out in
            out[0] = UInt8(ascii: "x")
            out[1] = UInt8(ascii: "'")
            for (offset, digit) in hex.enumerated() {
                out[2 + offset] = Hex.lowercased(digit)
            }
            out[digits + 2] = UInt8(ascii: "'")
        }
        return Key(kind: digits == 2 * rawKeyLength ? .rawKey : .rawKeyWithSalt, material: material)
    }

    /// A passphrase key from bytes in a buffer the caller wipes (a key file, a credential, a command's output):
    /// copied straight into wiped storage, with no intermediate array.
    static func passphrase(copying bytes: UnsafeRawBufferPointer) throws(SQLCipherError) -> Key {
        try Key(checkedPassphrase: SecureBytes(copying: bytes))
    }

    private init(checkedPassphrase material: SecureBytes) throws(SQLCipherError) {
        guard material.count > 0 else {
            throw .api(.invalidKey, "the passphrase is empty, and SQLCipher does not encrypt with an empty key")
        }
        guard !material.withUnsafeBytes(Key.looksLikeBlobLiteral) else {
            throw .api(.invalidKey, "a passphrase of the form x'<hex>' is read by SQLCipher as a raw key; "
                + "pass raw key bytes with Key.rawKey(_:) instead")
        }
        self.init(kind: .passphrase, material: material)
    }

    /// A raw key with salt from derived key bytes still in wiped storage (no intermediate array).
    static func rawKey(derived key: UnsafeRawBufferPointer, salt: [UInt8]) -> Key {
        let material = SecureBytes(count: 2 * (key.count + salt.count) + 3) { out in
            out[0] = UInt8(ascii: "x")
            out[1] = UInt8(ascii: "'")
            var index = 2
            func append(_ byte: UInt8) {
                Hex.write(byte, into: out, at: index)
                index += 2
            }
            key.forEach(append)
            salt.forEach(append)
            out[index] = UInt8(ascii: "'")
        }
        return Key(kind: .rawKeyWithSalt, material: material)
    }

    private static func checkLength(_ bytes: [UInt8], expected: Int, of what: String) throws(SQLCipherError) {
        guard bytes.count == expected else {
            // Never the length given: a key's length is a clue to it.
            throw .api(.invalidKey, "\(what) must be \(expected) bytes long, and this one is not")
        }
    }

    /// `x'` + lowercase hex of `key` then `salt` + `'`: the text form of a raw key that `sqlite3_key_v2`
    /// accepts. Written straight into wiped storage, with no intermediate string.
    private static func blobLiteral(_ key: [UInt8], _ salt: [UInt8]) -> SecureBytes {
        let hexCount = 2 * (key.count + salt.count)
        return SecureBytes(count: hexCount + 3) { out in
            out[0] = UInt8(ascii: "x")
            out[1] = UInt8(ascii: "'")
            var index = 2
            // Two loops rather than `key + salt`, which would leave an unwiped copy of the key behind.
            for bytes in [key, salt] {
                for byte in bytes {
                    Hex.write(byte, into: out, at: index)
                    index += 2
                }
            }
            out[index] = UInt8(ascii: "'")
        }
    }

    /// Whether `bytes` is `x'…'` around hex digits: a form SQLCipher would take as a raw key.
    private static func looksLikeBlobLiteral(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 3, bytes[0] == UInt8(ascii: "x") || bytes[0] == UInt8(ascii: "X"),
              bytes[1] == UInt8(ascii: "'"), bytes[bytes.count - 1] == UInt8(ascii: "'") else { return false }
        return bytes[2..<(bytes.count - 1)].allSatisfy(Hex.isDigit)
    }
}

extension Key: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The kind of key, never its bytes: `Key(passphrase, redacted)`.
    public var description: String { "Key(\(kind.rawValue), redacted)" }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// A mirror with no children, so `dump` and reflection cannot reach the key material.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
