#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What ``Database/inspect(path:key:cipher:)`` found out about a database file.
public struct DatabaseInfo: Sendable, Equatable {
    /// The file's format.
    public let format: DatabaseFormat
    /// The cipher settings in effect (nil for plain SQLite).
    public let cipherSettings: CipherSettings?
    /// The page size in bytes.
    public let pageSize: Int
    /// The number of pages.
    public let pageCount: Int
    /// How many bytes at the start of the file are not encrypted (0 unless a plaintext header is used; the
    /// whole file for plain SQLite).
    public let plaintextHeaderSize: Int
    /// The size of the file in bytes.
    public let fileSize: Int
    /// Whether SQLCipher reported that the inspecting connection encrypts (`PRAGMA cipher_status`); false for
    /// plain SQLite.
    public let cipherStatus: Bool
}

extension Database {
    /// Inspects the database file at `path`: its format (detected when `cipher` is empty), cipher settings, page
    /// size and count. Opens read-only; nothing is written, and the folder is left as it was found (see
    /// ``checkIntegrity(path:key:cipher:)``).
    ///
    /// - Parameters:
    ///   - key: The key, or nil for a file expected to be plain SQLite.
    ///   - cipher: Settings to open with; when empty, the format is detected.
    public static func inspect(path: String, key: Key?, cipher: CipherSettings = CipherSettings())
        throws(SQLCipherError) -> DatabaseInfo {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw .api(.cannotOpen, "no such file", path: path)
        }
        let format: DatabaseFormat
        let database: Database
        if let key {
            format = cipher.isDefault ? try detectFormat(path: path, key: key) : .sqlcipher(version: cipher.compatibility ?? 4)
            let settings = cipher.isDefault ? (format.cipherSettings ?? CipherSettings()) : cipher
            database = format == .plaintext
                ? try Database(unencryptedPath: path, configuration: .inspection())
                : try Database(path: path, key: key, configuration: .inspection(cipher: settings))
        } else {
            format = .plaintext
            database = try Database(unencryptedPath: path, configuration: .inspection())
        }
        defer { database.close() }
        let settings = format == .plaintext ? nil : try database.cipherSettings()
        return DatabaseInfo(format: format, cipherSettings: settings, pageSize: try database.pageSize(),
                            pageCount: try database.pageCount(),
                            plaintextHeaderSize: format == .plaintext ? Int(status.st_size) : settings?.plaintextHeaderSize ?? 0,
                            fileSize: Int(status.st_size),
                            cipherStatus: format == .plaintext ? false : try database.cipherStatus())
    }
}
