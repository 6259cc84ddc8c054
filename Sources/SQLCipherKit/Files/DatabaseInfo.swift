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
