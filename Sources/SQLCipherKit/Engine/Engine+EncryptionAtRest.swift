import Foundation

extension Engine {
    /// What ``proveEncryptionAtRest(in:)`` observed.
    public struct EncryptionAtRestProof: Sendable, Equatable {
        /// The first 16 bytes of the database file written (random salt, not `SQLite format 3`).
        public let fileHeader: [UInt8]
        /// The size of the file written, in bytes.
        public let fileSize: Int
    }

    /// Writes a small encrypted database with a unique marker into a new temporary folder and proves that it
    /// is encrypted at rest: its first bytes are not `SQLite format 3`, the marker appears nowhere in it, and
    /// it reads back with its key. The folder is removed afterwards.
    ///
    /// - Parameter folder: Where to create the temporary folder; the system's temporary directory by default.
    /// - Throws: ``SQLCipherError/Kind/notSQLCipher`` when the file is plaintext; any error writing it.
    public static func proveEncryptionAtRest(in folder: String? = nil) throws(SQLCipherError) -> EncryptionAtRestProof {
        let base = folder.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory
        let directory = base.appendingPathComponent("sqlcipherkit-selfcheck-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw .api(.cannotOpen, "cannot create a temporary folder: \(error.localizedDescription)", path: directory.path)
        }
        defer { try? FileManager.default.removeItem(at: directory) }

        let path = directory.appendingPathComponent("selfcheck.db").path
        let marker = "SQLCipherKit self-check marker \(UUID().uuidString)"
        var keyBytes = [UInt8](repeating: 0, count: Key.rawKeyLength)
        var generator = SystemRandomNumberGenerator()
        for index in keyBytes.indices { keyBytes[index] = generator.next() }
        let key = try Key.rawKey(keyBytes)
        keyBytes.withUnsafeMutableBytes { SecureBytes.wipe($0) }

        let database = try Database(path: path, key: key)
        try database.execute("CREATE TABLE selfcheck(marker TEXT)")
        try database.execute("INSERT INTO selfcheck VALUES (?)", [marker])
        database.close()

        let bytes: Data
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .api(.ioError, "cannot read back the file just written: \(error.localizedDescription)", path: path)
        }
        guard bytes.prefix(16) != Data("SQLite format 3\0".utf8),
              bytes.range(of: Data(marker.utf8)) == nil else {
            throw .api(.notSQLCipher, "the database written to disk is plaintext", path: path)
        }
        let reader = try Database(path: path, key: key, mode: .readOnly)
        guard try reader.scalar(String.self, "SELECT marker FROM selfcheck") == marker else {
            throw .api(.corrupt, "the encrypted database did not read back", path: path)
        }
        return EncryptionAtRestProof(fileHeader: Array(bytes.prefix(16)), fileSize: bytes.count)
    }
}
