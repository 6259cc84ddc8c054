import CSQLCipher

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A connection to an encrypted SQLCipher database.
///
/// Opening keys the connection, checks that the engine is SQLCipher and reads the schema once, so a wrong key
/// fails here, with ``SQLCipherError/wrongKeyOrNotADatabase(path:)``, not at the first query:
///
/// ```swift
/// let db = try Database(path: "/var/lib/app/data.db", key: .passphrase(passphrase))
/// try db.execute("CREATE TABLE IF NOT EXISTS note(id INTEGER PRIMARY KEY, body TEXT)")
/// ```
///
/// A failed open never leaves a file behind that was not there before, and never writes to one that was.
/// A connection is not safe to share between concurrent tasks; confine each to one task or thread.
public final class Database {
    /// The path the connection was opened with (`:memory:` for an in-memory database).
    public let path: String

    /// The open `sqlite3` handle; nil once closed.
    private(set) var handle: OpaquePointer?

    /// Opens (or creates) the encrypted database at `path` with `key`.
    ///
    /// - Parameters:
    ///   - path: A file path, or `:memory:` for a private in-memory database.
    ///   - key: The key. A new database is encrypted with it.
    ///   - mode: Whether to open read-only, read-write, or read-write creating the file if missing.
    /// - Throws: ``SQLCipherError/wrongKeyOrNotADatabase(path:)`` when the key does not open the file,
    ///   ``SQLCipherError/cannotOpen(path:message:)`` when the file cannot be opened,
    ///   ``SQLCipherError/notSQLCipher(sqliteVersion:)`` when the engine is not SQLCipher.
    public init(path: String, key: Key, mode: OpenMode = .readWriteCreate) throws(SQLCipherError) {
        self.path = path
        let isFile = path != ":memory:" && !path.isEmpty
        let existedBefore = isFile && access(path, F_OK) == 0
        do {
            handle = try Database.openHandle(path: path, mode: mode)
            try applyKey(key)
            try Engine.requireSQLCipher(self)
            // Reading the schema decrypts page 1: this is where a wrong key shows, before any write.
            _ = try textValue("SELECT count(*) FROM sqlite_schema")
        } catch {
            close()
            if isFile && !existedBefore {
                // The open created this file (empty: nothing was written). Leave no trace of a failed open.
                unlink(path)
            }
            throw error
        }
    }

    deinit {
        close()
    }

    /// Closes the connection. Calling it again does nothing; any later use throws
    /// ``SQLCipherError/misuse(message:)``.
    public func close() {
        guard let handle else { return }
        // _v2 defers the close until outstanding statements are finalized, so this never fails with BUSY.
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// Runs one or more SQL statements separated by semicolons, discarding any rows.
    ///
    /// - Throws: ``SQLCipherError`` naming the failure; the statements before it have run.
    public func execute(_ sql: String) throws(SQLCipherError) {
        let db = try openHandle()
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(db, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else {
            throw SQLCipherError(code: code, connection: db, path: path,
                                 message: message.map { String(cString: $0) })
        }
    }

    /// Runs `sql` and returns the first column of its first row as text, or nil when there is no row or the
    /// value is NULL.
    public func textValue(_ sql: String) throws(SQLCipherError) -> String? {
        let statement = try Statement(database: self, sql: sql)
        guard try statement.step() else { return nil }
        return statement.text(at: 0)
    }

    /// The handle, or a misuse error once the connection is closed.
    func openHandle() throws(SQLCipherError) -> OpaquePointer {
        guard let handle else { throw .misuse(message: "the connection to '\(path)' is closed") }
        return handle
    }

    private static func openHandle(path: String, mode: OpenMode) throws(SQLCipherError) -> OpaquePointer {
        var db: OpaquePointer?
        let flags = mode.flags | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_FULLMUTEX
        let code = sqlite3_open_v2(path, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw .cannotOpen(path: path, message: message)
        }
        return db
    }

    /// Hands the key to SQLCipher through `sqlite3_key_v2`: the key never appears in SQL text.
    private func applyKey(_ key: Key) throws(SQLCipherError) {
        let db = try openHandle()
        let code = key.material.withUnsafeBytes { bytes in
            sqlite3_key_v2(db, "main", bytes.baseAddress, Int32(bytes.count))
        }
        guard code == SQLITE_OK else {
            throw SQLCipherError(code: code, connection: db, path: path, message: nil)
        }
    }
}
