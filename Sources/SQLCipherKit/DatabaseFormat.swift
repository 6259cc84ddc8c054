#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

extension Database {
    /// Finds which format opens the file at `path` with `key`: SQLCipher 4, 3, 2 or 1, or plain SQLite,
    /// so old files can be migrated (``migrate(path:key:)``) without guessing.
    ///
    /// Every attempt opens the file read-only: nothing is written. A passphrase costs one key derivation per
    /// format tried (SQLCipher 4 first). Files with a plaintext header are not detected (they need their salt).
    ///
    /// - Throws: ``SQLCipherError/Kind/wrongKeyOrNotADatabase`` when no format opens it with this key;
    ///   ``SQLCipherError/Kind/cannotOpen`` when the file does not exist.
    public static func detectFormat(path: String, key: Key) throws(SQLCipherError) -> DatabaseFormat {
        guard access(path, R_OK) == 0 else {
            throw .api(.cannotOpen, "no readable file at this path", path: path)
        }
        if (try? Database(unencryptedPath: path, configuration: .init(mode: .readOnly))) != nil {
            return .plaintext
        }
        for version in [4, 3, 2, 1] {
            let configuration = Configuration(mode: .readOnly, cipher: CipherSettings(compatibility: version))
            if (try? Database(path: path, key: key, configuration: configuration)) != nil {
                return .sqlcipher(version: version)
            }
        }
        throw .api(.wrongKeyOrNotADatabase, "no SQLCipher version (4, 3, 2, 1) opens it with this key, "
            + "and it is not plain SQLite", path: path)
    }
}
