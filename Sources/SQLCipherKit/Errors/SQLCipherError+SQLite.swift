import CSQLCipher
import Glibc

extension SQLCipherError {
    /// An error of `kind` that did not come from SQLite.
    static func api(_ kind: Kind, _ message: String, path: String? = nil) -> SQLCipherError {
        SQLCipherError(kind: kind, message: message, path: path)
    }

    /// Classifies a failed SQLite result `code` into the kind a caller can act on.
    ///
    /// - Parameters:
    ///   - connection: The connection that failed, for its extended code and message.
    ///   - message: A message to use instead of the connection's own.
    ///   - refusal: The SQL guard's explanation, when it refused the statement (`SQLITE_AUTH`).
    ///   - sqlIsTheLibrarys: `sql` is the library's own (compiled inside ``Database/trusted(_:)``): it holds no key,
    ///     so it and SQLite's message are kept whatever words it names.
    init(code: Int32, connection: OpaquePointer?, path: String?, sql: String? = nil, message: String? = nil,
         refusal: String? = nil, sqlIsTheLibrarys: Bool = false) {
        let primary = code & 0xff
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        var text = message ?? connection.map { String(cString: sqlite3_errmsg($0)) }
            ?? String(cString: sqlite3_errstr(code))
        var sql = sql
        // The library's commit hook turned a commit it did not make, inside a transaction it began, into a rollback
        // (SQLGuard.refusesCommit).
        if extended == Self.commitHookRefusal {
            text = "a commit inside a transaction SQLCipherKit began, not made by SQLCipherKit, was rolled back: the "
                + "transaction had ended under the closure (SQLite rolls it back after INSERT OR ROLLBACK, "
                + "RAISE(ROLLBACK), a full disk, an I/O error or an interrupt), so the statement would have committed "
                + "on its own. Throw from the closure to roll back, return to commit"
        }
        // A refused function surfaces as SQLITE_ERROR ("not authorized to use function"), a refused action as
        // SQLITE_AUTH.
        let refused = primary == SQLITE_AUTH || refusal != nil || extended == Self.commitHookRefusal
        if refused {
            // The guard's own explanation says what to use instead. The refused SQL stays out of the error: it
            // may hold a key (ATTACH … KEY 'secret', PRAGMA key = 'secret').
            text = refusal ?? (extended == Self.commitHookRefusal ? text : text + ": SQLCipherKit's SQL guard refused "
                + "the statement (see the article \"SQL that SQLCipherKit refuses\")")
            sql = nil
        }
        // The engine's own refusals (SQLCipherKit's local changes to VACUUM INTO, BuildSupport/engine/local-changes)
        // are fixed texts that say what to do: like the guard's, they keep their message and drop the SQL.
        if !refused, primary == SQLITE_ERROR, Self.engineRefusals.contains(text) {
            sql = nil
        }
        // SQL that names a key word keeps neither its text nor SQLite's message (the designated initializer
        // withholds both): a statement that does not parse never reaches the guard, and SQLite's message quotes the
        // token it stopped at; one that fails before the guard sees it ("unknown database", "no such function" in
        // an ATTACH's KEY expression) quotes an identifier that may be the key. The kind is judged on the message.
        // Some corruption surfaces as a generic SQLITE_ERROR (sqlcipher_export, integrity checks): the message
        // tells. Only SQLite's own corruption messages count: "malformed JSON" is a bad argument, not a bad file.
        let corruption = ["database disk image is malformed", "malformed database schema"]
        var kind = refused ? .misuse
            : primary == SQLITE_ERROR && corruption.contains(where: text.contains) ? .corrupt
            : Self.kind(of: primary)
        // trusted_schema is off on every connection: a schema object that calls a function not marked innocuous is
        // refused, as SQLITE_ERROR "unsafe use of F()" when a statement uses it (a view), and, when SQLite compiles
        // it with the schema (a CHECK, a DEFAULT, an index, a generated column), as SQLITE_CORRUPT "malformed
        // database schema (NAME) - unsafe use of F()". The file is intact: it is not called corrupt.
        if !refused, Self.isUnsafeSchemaUse(text) {
            kind = .unsafeSchema
        }
        // SQLite reports SQLITE_FULL only for ENOSPC on a short write; a failed write for want of space (disk
        // full, quota exceeded, file-size limit) otherwise surfaces as a generic I/O error. The errno tells.
        if primary == SQLITE_IOERR, let connection,
           [ENOSPC, EDQUOT, EFBIG].contains(sqlite3_system_errno(connection)) {
            kind = .full
        }
        // A failed page cipher reaches SQLite as a pager error it names after its own guess ("file is not a
        // database", "database disk image is malformed", "out of memory"): SQLCipherKit's crypto provider records
        // the failure on the connection's codec, so an intact file is not called corrupt nor the key wrong.
        if !refused, let connection, sqlcipherkit_provider_failed(UnsafeMutableRawPointer(connection)) != 0 {
            kind = .cryptoProviderFailure
            text = "the crypto provider (OpenSSL) failed on this connection; SQLite reported: " + text
        }
        self.init(kind: kind, resultCode: primary,
                  extendedResultCode: extended & 0xff == primary ? extended : code,
                  message: text, sql: sql, path: path, sqlIsTheLibrarys: sqlIsTheLibrarys)
    }

    /// Whether SQL text may hold a key: it names a key word (`key`, and so `rekey`, `hexkey`, `textkey`, a URI's
    /// `key=`) anywhere, in any case, once percent-escapes are decoded (SQLite decodes them in a URI: `%6Bey=`); or
    /// it names `attach` or `vacuum`, the two statements that open a file by a name an expression can build
    /// (`VACUUM INTO 'file:x?k' || 'ey=secret'`: a URI key no spelling of the text shows).
    /// It over-matches on purpose (`PRIMARY KEY`, a column named `key`, `monkey`, any failed `VACUUM`) rather than
    /// trust a list of harmless spellings, which a comment or a statement that does not parse could imitate: such an
    /// error keeps its kind and result codes only.
    public static func mayHoldKey(_ sql: String) -> Bool {
        var bytes = Array(sql.utf8)
        if bytes.contains(UInt8(ascii: "%")) { bytes = percentDecoded(bytes) }
        func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5a).contains(byte) ? byte | 0x20 : byte }
        let lowered = bytes.map(lower)
        return [Array("key".utf8), Array("attach".utf8), Array("vacuum".utf8)].contains { word in
            lowered.count >= word.count && (0...(lowered.count - word.count)).contains { start in
                lowered[start..<(start + word.count)].elementsEqual(word)
            }
        }
    }

    /// The engine's own refusals of `VACUUM INTO` (BuildSupport/engine/local-changes/vacuum-into-*.change), word for
    /// word: fixed texts, which hold nothing of the statement.
    static let engineRefusals: Set<String> = [
        "VACUUM INTO is refused for a plaintext schema on a connection with a key: its copy would be keyed with the "
            + "key of main under mismatched settings",
        "VACUUM INTO is refused: the engine could not give the copy the key and cipher settings of the database it "
            + "copies",
        "VACUUM INTO is refused for a plaintext schema on a connection with a key: it would be keyed with mismatched "
            + "settings",
    ]

    /// `bytes` with every `%HH` decoded, three times over at most (SQLite decodes once; an escaped escape, `%256B`,
    /// decodes too, and the words `attach` and `vacuum` catch every statement that takes a URI anyway).
    private static func percentDecoded(_ bytes: [UInt8]) -> [UInt8] {
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 0x30...0x39: byte - 0x30
            case 0x41...0x46: byte - 0x41 + 10
            case 0x61...0x66: byte - 0x61 + 10
            default: nil
            }
        }
        var current = bytes
        for _ in 0..<3 {
            var decoded: [UInt8] = []
            decoded.reserveCapacity(current.count)
            var index = 0
            while index < current.count {
                if current[index] == UInt8(ascii: "%"), index + 2 < current.count,
                   let high = hex(current[index + 1]), let low = hex(current[index + 2]) {
                    decoded.append(high << 4 | low)
                    index += 3
                } else {
                    decoded.append(current[index])
                    index += 1
                }
            }
            if decoded == current { return current }
            current = decoded
        }
        return current
    }

    /// The message of an error from SQLite whose SQL may hold a key: its result code's own text, not SQLite's message.
    static func withheldMessage(_ code: Int32) -> String {
        "\(String(cString: sqlite3_errstr(code))) (SQLite's message and the statement's text are left "
            + "out of this error: the text names a key word and may hold a key; keys never travel in SQL text, see the "
            + "article \"SQL that SQLCipherKit refuses\")"
    }

    /// Whether `message` is SQLite's refusal of a function a schema calls while trusted_schema is off: "unsafe use of
    /// F()", alone or after "malformed database schema (NAME) - " (sqlite3ExprFunctionUsable, corruptSchema).
    static func isUnsafeSchemaUse(_ message: String) -> Bool {
        message.hasSuffix("()") && (message.hasPrefix("unsafe use of ")
            || (message.hasPrefix("malformed database schema (") && message.contains(") - unsafe use of ")))
    }

    /// `SQLITE_CONSTRAINT_COMMITHOOK`: a commit hook turned the commit into a rollback.
    static let commitHookRefusal = SQLITE_CONSTRAINT | (2 << 8)

    private static func kind(of primary: Int32) -> Kind {
        switch primary {
        case SQLITE_NOTADB: .wrongKeyOrNotADatabase
        case SQLITE_CORRUPT: .corrupt
        case SQLITE_BUSY, SQLITE_LOCKED: .busy
        case SQLITE_READONLY: .readOnly
        case SQLITE_CONSTRAINT: .constraint
        case SQLITE_MISUSE, SQLITE_AUTH: .misuse
        case SQLITE_CANTOPEN: .cannotOpen
        case SQLITE_FULL: .full
        case SQLITE_INTERRUPT: .interrupted
        case SQLITE_IOERR: .ioError
        case SQLITE_RANGE: .invalidArgument
        default: .sqlite
        }
    }
}
