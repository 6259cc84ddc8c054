/// An error thrown by SQLCipherKit.
///
/// Each case says what went wrong and, in its ``description``, what to do about it. No case ever carries key
/// material: a key is never part of an error, its description or a log line.
public enum SQLCipherError: Error, Sendable, Equatable {
    /// The key does not open the database at `path`, or the file is not a database at all.
    ///
    /// SQLCipher cannot tell these apart: a wrong key decrypts the first page into noise, exactly as a file
    /// that is no database does. The file is left untouched.
    case wrongKeyOrNotADatabase(path: String)

    /// The SQLite engine linked into this process is not SQLCipher: `PRAGMA cipher_version` returned no row.
    ///
    /// Writing with such an engine would store plaintext, so SQLCipherKit refuses to go on. This happens when
    /// another SQLite library wins the link; `sqliteVersion` names the engine that answered.
    case notSQLCipher(sqliteVersion: String)

    /// The database file is damaged: SQLite or SQLCipher's page authentication (HMAC) rejected its content.
    case corrupt(path: String, message: String)

    /// The database file could not be opened at all (missing folder, permissions, a read-only open of a
    /// missing file).
    case cannotOpen(path: String, message: String)

    /// The key material handed to ``Key`` is unusable; `reason` says why (never the key itself).
    case invalidKey(reason: String)

    /// The API was used in a way it does not allow, such as a statement run on a closed connection.
    case misuse(message: String)

    /// Any other SQLite error: `code` is the primary result code, `extendedCode` the extended one, `message`
    /// SQLite's own text.
    case sqlite(code: Int32, extendedCode: Int32, message: String)
}

extension SQLCipherError: CustomStringConvertible {
    /// One sentence saying what went wrong and what to do.
    public var description: String {
        switch self {
        case .wrongKeyOrNotADatabase(let path):
            return "The key does not open '\(path)', or it is not a database: "
                + "check the key and its kind (passphrase or raw), the cipher settings, and the file. "
                + "The file was not changed."
        case .notSQLCipher(let sqliteVersion):
            return "The SQLite engine in this process (SQLite \(sqliteVersion)) is not SQLCipher, "
                + "so nothing would be encrypted: link SQLCipherKit's own engine ahead of any system SQLite."
        case .corrupt(let path, let message):
            return "'\(path)' is corrupt or has been tampered with (\(message)): restore it from a backup."
        case .cannotOpen(let path, let message):
            return "Cannot open '\(path)' (\(message)): check that the folder exists and is accessible, "
                + "and that the file exists when opening without create."
        case .invalidKey(let reason):
            return "The key is invalid: \(reason)."
        case .misuse(let message):
            return "SQLCipherKit was misused: \(message)."
        case .sqlite(let code, let extendedCode, let message):
            return "SQLite error \(code) (extended \(extendedCode)): \(message)."
        }
    }
}
