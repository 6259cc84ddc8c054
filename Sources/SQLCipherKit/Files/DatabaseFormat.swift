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
    /// Every attempt opens the file read-only: nothing is written, and the folder is left as it was found (see
    /// ``checkIntegrity(path:key:cipher:)``). A passphrase costs one key derivation per
    /// format tried (SQLCipher 4 first). Files with a plaintext header are not detected (they need their salt).
    ///
    /// - Throws: ``SQLCipherError/Kind/wrongKeyOrNotADatabase`` when no format opens it with this key;
    ///   ``SQLCipherError/Kind/corrupt`` when a format reads its first page but the file is damaged (for
    ///   example, truncated);
    ///   ``SQLCipherError/Kind/cannotOpen`` when the file does not exist.
    public static func detectFormat(path: String, key: Key) throws(SQLCipherError) -> DatabaseFormat {
        guard access(path, R_OK) == 0 else {
            throw .api(.cannotOpen, "no readable file at this path", path: path)
        }
        // Only a format whose first page reads can report the rest of the file as corrupt (a truncated file,
        // say): that is the answer, not "no format opens it".
        do {
            _ = try Database(unencryptedPath: path, configuration: .inspection())
            return .plaintext
        } catch where error.kind == .corrupt {
            throw error
        } catch {}
        for version in [4, 3, 2, 1] {
            let configuration = Configuration.inspection(cipher: CipherSettings(compatibility: version))
            do {
                _ = try Database(path: path, key: key, configuration: configuration)
                return .sqlcipher(version: version)
            } catch where error.kind == .corrupt {
                throw error
            } catch {}
        }
        throw .api(.wrongKeyOrNotADatabase, "no SQLCipher version (4, 3, 2, 1) opens it with this key, "
            + "and it is not plain SQLite", path: path)
    }
}
