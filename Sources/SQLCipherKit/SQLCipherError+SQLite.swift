import CSQLCipher

extension SQLCipherError {
    /// Classifies a failed SQLite result `code` into the case a caller can act on.
    ///
    /// - Parameters:
    ///   - connection: The connection that failed, for its extended code and message.
    ///   - message: A message to use instead of the connection's own (e.g. from `sqlite3_exec`).
    init(code: Int32, connection: OpaquePointer?, path: String, message: String?) {
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        let text = message ?? connection.map { String(cString: sqlite3_errmsg($0)) }
            ?? String(cString: sqlite3_errstr(code))
        switch code & 0xff {
        case SQLITE_NOTADB:
            self = .wrongKeyOrNotADatabase(path: path)
        case SQLITE_CORRUPT:
            self = .corrupt(path: path, message: text)
        case SQLITE_CANTOPEN:
            self = .cannotOpen(path: path, message: text)
        case SQLITE_MISUSE:
            self = .misuse(message: text)
        default:
            self = .sqlite(code: code & 0xff, extendedCode: extended, message: text)
        }
    }
}
