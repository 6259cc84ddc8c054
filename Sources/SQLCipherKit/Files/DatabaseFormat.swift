/// The on-disk format of a database file, as ``Database/detectFormat(path:key:)`` finds it.
public enum DatabaseFormat: Sendable, Equatable, CustomStringConvertible {
    /// A plain, unencrypted SQLite database.
    case plaintext
    /// A SQLCipher database of major version 1, 2, 3 or 4.
    case sqlcipher(version: Int)

    /// The settings that open a file of this format (nil for plaintext).
    public var cipherSettings: CipherSettings? {
        switch self {
        case .plaintext: nil
        case .sqlcipher(let version): CipherSettings(compatibility: version)
        }
    }

    /// `plain SQLite` or `SQLCipher 4`.
    public var description: String {
        switch self {
        case .plaintext: "plain SQLite"
        case .sqlcipher(let version): "SQLCipher \(version)"
        }
    }
}
