import Glibc

extension Database {
    /// Finds which format opens the file at `path` with `key`: SQLCipher 4, 3, 2 or 1, or plain SQLite,
    /// so old files can be migrated (``migrate(path:key:willRun:)``) without guessing.
    ///
    /// Every attempt opens the file read-only: nothing is written, and the folder is left as it was found (see
    /// ``checkIntegrity(path:key:cipher:)``). A passphrase costs one key derivation per
    /// format tried (SQLCipher 4 first). Files with a plaintext header are not detected (they need their salt).
    ///
    /// - Throws: ``SQLCipherError/Kind/wrongKeyOrNotADatabase`` when no format opens it with this key;
    ///   ``SQLCipherError/Kind/corrupt`` when a format reads its first page but the file is damaged (for
    ///   example, truncated); ``SQLCipherError/Kind/unsafeSchema`` when a format reads it but its schema calls a
    ///   function SQLCipherKit never runs from a schema;
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
        } catch where error.kind == .corrupt || error.kind == .unsafeSchema {
            throw error
        } catch {}
        for version in [4, 3, 2, 1] {
            let configuration = Configuration.inspection(cipher: CipherSettings(compatibility: version))
            do {
                _ = try Database(path: path, key: key, configuration: configuration)
                return .sqlcipher(version: version)
            } catch where error.kind == .corrupt || error.kind == .unsafeSchema {
                throw error
            } catch {}
        }
        throw .api(.wrongKeyOrNotADatabase, "no SQLCipher version (4, 3, 2, 1) opens it with this key, "
            + "and it is not plain SQLite", path: path)
    }

    /// Inspects the database file at `path`: its format (detected when `cipher` is empty), cipher settings, page
    /// size and count. Opens read-only; nothing is written, and the folder is left as it was found (see
    /// ``checkIntegrity(path:key:cipher:)``).
    ///
    /// - Parameters:
    ///   - path: The database file's path.
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
