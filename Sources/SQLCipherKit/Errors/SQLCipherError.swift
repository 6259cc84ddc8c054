import Foundation

/// An error thrown by SQLCipherKit.
///
/// Every error has a ``kind`` to act on, SQLite's result codes and message when SQLite produced it, and the
/// SQL that failed, if any. Match kinds in `catch` clauses:
///
/// ```swift
/// do {
///     let db = try Database(path: path, key: key)
/// } catch SQLCipherError.wrongKeyOrNotADatabase {
///     // ask for the passphrase again
/// } catch let error as SQLCipherError where error.kind == .busy {
///     // retry later
/// }
/// ```
///
/// No error ever carries key material: a key is never part of an error, its description or a log line
/// (SQL holding a key is never run: keys go through `sqlite3_key_v2`, or are bound as parameters).
public struct SQLCipherError: Error, Sendable, Equatable {
    /// What went wrong, in the terms a caller can act on.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// The key does not open the database, or the file is not a database at all.
        ///
        /// SQLCipher cannot tell these apart: a wrong key decrypts the first page into noise, exactly as a
        /// file that is no database does. The file is left untouched.
        case wrongKeyOrNotADatabase
        /// The SQLite engine linked into this process is not SQLCipher: `PRAGMA cipher_version` returned no
        /// row. Writing with it would store plaintext, so SQLCipherKit refuses.
        case notSQLCipher
        /// The database is damaged, or was tampered with: SQLite's checks or SQLCipher's page HMAC failed.
        case corrupt
        /// Another connection holds a lock this one needs; retry later or set a busy timeout.
        case busy
        /// The database, or the file, can only be read.
        case readOnly
        /// A constraint (UNIQUE, NOT NULL, CHECK, FOREIGN KEY…) rejected the change.
        case constraint
        /// The API was used in a way it does not allow (a closed connection, a finalized statement…), or SQL
        /// asked for something SQLCipherKit refuses: a key pragma (`PRAGMA key`, `rekey`…: keys go through
        /// ``Key``), a cipher setting after open, `VACUUM INTO` a keyed URI, or `PRAGMA temp_store = FILE` (in
        /// any spelling SQLite reads as FILE) on an encrypted connection (temporary files are not encrypted).
        case misuse
        /// The key material is unusable (wrong length, empty passphrase…).
        case invalidKey
        /// An argument or option is out of its range (a page size that is no power of two…).
        case invalidArgument
        /// A stored value does not convert to the requested Swift type (NULL for a non-optional, text for
        /// an integer…).
        case typeMismatch
        /// The file could not be opened at all (missing folder, permissions, a missing file without create).
        case cannotOpen
        /// The disk, or a file-size limit, is full.
        case full
        /// The operation was interrupted (``Database/interrupt()``).
        case interrupted
        /// The operating system reported an I/O error.
        case ioError
        /// A wait had a limit and reached it: for example, waiting longer than
        /// ``DatabasePool/Configuration/writerWaitTimeout`` for a pool's writer that other work held.
        case timedOut
        /// The crypto provider (OpenSSL) failed: a page's encryption, decryption or HMAC, or drawing random
        /// bytes, failed on this connection, or OpenSSL cannot serve AES-256-CBC at all (an `openssl.cnf` whose
        /// providers or default properties, such as FIPS without a FIPS module, leave no AES).
        ///
        /// Not a wrong key, not a damaged file: SQLite reports such a failure as "file is not a database",
        /// "database disk image is malformed" or "out of memory", and SQLCipherKit tells it apart. The failed
        /// statement wrote nothing (the file holds its last commit) and the connection stays unusable: close it
        /// and open the database again; if it keeps failing, check OpenSSL's configuration (`OPENSSL_CONF`).
        /// With the reference crypto provider (`build-sqlcipher.sh --crypto-provider reference`), which keeps no
        /// such state, these failures read as SQLite reports them.
        case cryptoProviderFailure
        /// The database's schema calls a function that SQLCipherKit never runs from a schema, so SQLite would not
        /// load it: a view, trigger, CHECK constraint, DEFAULT, index or generated column calls a function that is
        /// not innocuous (`sqlcipher_export()`, say, which writes a copy of the database wherever its argument
        /// says).
        ///
        /// Not a damaged file: every connection runs with [`trusted_schema`](https://sqlite.org/pragma.html#pragma_trusted_schema)
        /// off, and SQLite then calls the schema "malformed" ("malformed database schema (t) - unsafe use of
        /// sqlcipher_export()") although the file is intact. A program that allows such schemas wrote it. Remove
        /// or change the object with that program; SQLCipherKit does not load it, because every read or write
        /// that touches the object would run the function on the caller's behalf.
        case unsafeSchema
        /// Any other SQLite error; ``SQLCipherError/resultCode`` says which.
        case sqlite
    }

    /// What went wrong.
    public let kind: Kind
    /// SQLite's primary result code (`SQLITE_NOTADB`…), or 0 when the error did not come from SQLite.
    public let resultCode: Int32
    /// SQLite's extended result code, or 0 when the error did not come from SQLite.
    public let extendedResultCode: Int32
    /// What happened, in SQLite's words or SQLCipherKit's; for SQL that may hold a key, the result code's own text
    /// instead of SQLite's words (see ``init(kind:resultCode:extendedResultCode:message:sql:path:)``).
    public let message: String
    /// The SQL that failed, when there was one, and when it may hold no key (it names none of `key`, `attach`,
    /// `vacuum`: see ``init(kind:resultCode:extendedResultCode:message:sql:path:)``).
    public let sql: String?
    /// The database file concerned, when known.
    public let path: String?

    /// Creates an error.
    ///
    /// When `sql` may hold a key (``SQLCipherError/mayHoldKey(_:)``: it names `key`, `rekey`, `hexkey`…, `attach`
    /// or `vacuum` anywhere in the text, in any case, percent-escapes decoded), the error keeps neither the SQL nor,
    /// for an error from SQLite (a non-zero `resultCode`), SQLite's message, which may quote a token of it: the
    /// message is then the result code's own text, saying why. Every
    /// error built with SQL goes through here, whichever statement of a script failed and why.
    public init(kind: Kind, resultCode: Int32 = 0, extendedResultCode: Int32 = 0, message: String,
                sql: String? = nil, path: String? = nil) {
        self.init(kind: kind, resultCode: resultCode, extendedResultCode: extendedResultCode, message: message,
                  sql: sql, path: path, sqlIsTheLibrarys: false)
    }

    /// `sqlIsTheLibrarys`: `sql` is the library's own constant text (``Database/trusted(_:)``: `ATTACH ?1 AS x KEY ?2`,
    /// its key bound), which holds no key whatever words it names: it and SQLite's message are kept.
    init(kind: Kind, resultCode: Int32 = 0, extendedResultCode: Int32 = 0, message: String,
         sql: String? = nil, path: String? = nil, sqlIsTheLibrarys: Bool) {
        self.kind = kind
        self.resultCode = resultCode
        self.extendedResultCode = extendedResultCode
        if !sqlIsTheLibrarys, let sql, Self.mayHoldKey(sql) {
            self.message = resultCode == 0 ? message
                : Self.withheldMessage(extendedResultCode != 0 ? extendedResultCode : resultCode)
            self.sql = nil
        } else {
            self.message = message
            self.sql = sql
        }
        self.path = path
    }
}

extension SQLCipherError.Kind {
    /// Matches errors of this kind: `catch SQLCipherError.busy`.
    public static func ~= (kind: Self, error: SQLCipherError) -> Bool {
        error.kind == kind
    }

    /// Matches ``SQLCipherError`` values of this kind among any errors: `catch SQLCipherError.busy`.
    public static func ~= (kind: Self, error: any Error) -> Bool {
        (error as? SQLCipherError)?.kind == kind
    }
}

// Enum cases cannot serve as `catch` patterns for another type, so each kind also has a constant here:
// `catch SQLCipherError.busy` is an expression pattern, matched by `Kind ~= SQLCipherError`.
extension SQLCipherError {
    /// Matches errors of kind ``Kind/wrongKeyOrNotADatabase`` in a `catch` clause: `catch SQLCipherError.wrongKeyOrNotADatabase`.
    public static let wrongKeyOrNotADatabase = Kind.wrongKeyOrNotADatabase
    /// Matches errors of kind ``Kind/notSQLCipher`` in a `catch` clause: `catch SQLCipherError.notSQLCipher`.
    public static let notSQLCipher = Kind.notSQLCipher
    /// Matches errors of kind ``Kind/corrupt`` in a `catch` clause: `catch SQLCipherError.corrupt`.
    public static let corrupt = Kind.corrupt
    /// Matches errors of kind ``Kind/busy`` in a `catch` clause: `catch SQLCipherError.busy`.
    public static let busy = Kind.busy
    /// Matches errors of kind ``Kind/readOnly`` in a `catch` clause: `catch SQLCipherError.readOnly`.
    public static let readOnly = Kind.readOnly
    /// Matches errors of kind ``Kind/constraint`` in a `catch` clause: `catch SQLCipherError.constraint`.
    public static let constraint = Kind.constraint
    /// Matches errors of kind ``Kind/misuse`` in a `catch` clause: `catch SQLCipherError.misuse`.
    public static let misuse = Kind.misuse
    /// Matches errors of kind ``Kind/invalidKey`` in a `catch` clause: `catch SQLCipherError.invalidKey`.
    public static let invalidKey = Kind.invalidKey
    /// Matches errors of kind ``Kind/invalidArgument`` in a `catch` clause: `catch SQLCipherError.invalidArgument`.
    public static let invalidArgument = Kind.invalidArgument
    /// Matches errors of kind ``Kind/typeMismatch`` in a `catch` clause: `catch SQLCipherError.typeMismatch`.
    public static let typeMismatch = Kind.typeMismatch
    /// Matches errors of kind ``Kind/cannotOpen`` in a `catch` clause: `catch SQLCipherError.cannotOpen`.
    public static let cannotOpen = Kind.cannotOpen
    /// Matches errors of kind ``Kind/full`` in a `catch` clause: `catch SQLCipherError.full`.
    public static let full = Kind.full
    /// Matches errors of kind ``Kind/interrupted`` in a `catch` clause: `catch SQLCipherError.interrupted`.
    public static let interrupted = Kind.interrupted
    /// Matches errors of kind ``Kind/ioError`` in a `catch` clause: `catch SQLCipherError.ioError`.
    public static let ioError = Kind.ioError
    /// Matches errors of kind ``Kind/timedOut`` in a `catch` clause: `catch SQLCipherError.timedOut`.
    public static let timedOut = Kind.timedOut
    /// Matches errors of kind ``Kind/cryptoProviderFailure`` in a `catch` clause:
    /// `catch SQLCipherError.cryptoProviderFailure`.
    public static let cryptoProviderFailure = Kind.cryptoProviderFailure
    /// Matches errors of kind ``Kind/unsafeSchema`` in a `catch` clause: `catch SQLCipherError.unsafeSchema`.
    public static let unsafeSchema = Kind.unsafeSchema
    /// Matches errors of kind ``Kind/sqlite`` in a `catch` clause: `catch SQLCipherError.sqlite`.
    public static let sqlite = Kind.sqlite
}

extension SQLCipherError: CustomStringConvertible {
    /// What went wrong and what to do, then the details: `… (SQLite 26/26: file is not a database) in: SQL`.
    public var description: String {
        var text = advice
        if resultCode != 0 {
            text += " (SQLite \(resultCode)/\(extendedResultCode): \(message))"
        } else if !message.isEmpty {
            text += " (\(message))"
        }
        if let sql { text += " in: \(sql)" }
        return text
    }

    /// One sentence per kind: what went wrong and what to do about it.
    private var advice: String {
        let file = path.map { "'\($0)'" } ?? "the database"
        switch kind {
        case .wrongKeyOrNotADatabase:
            return "The key does not open \(file), or it is not a database: check the key and its kind "
                + "(passphrase or raw), the cipher settings, and the file. The file was not changed."
        case .notSQLCipher:
            return "The SQLite engine in this process is not SQLCipher, so nothing would be encrypted: "
                + "link SQLCipherKit's own engine ahead of any system SQLite."
        case .corrupt:
            return "\(file) is corrupt or has been tampered with: restore it from a backup."
        case .busy:
            return "\(file) is locked by another connection: retry, or set a busy timeout."
        case .readOnly:
            return "\(file) can only be read: open it read-write, or check the file's permissions."
        case .constraint:
            return "A constraint rejected the change: fix the data or the statement."
        case .misuse:
            return "SQLCipherKit was used in a way it does not allow: fix the calling code."
        case .invalidKey:
            return "The key is invalid: pass the key material in the documented form."
        case .invalidArgument:
            return "An argument is out of range: pass a value the documentation allows."
        case .typeMismatch:
            return "A stored value does not convert to the requested type: read it as an optional or another type."
        case .cannotOpen:
            return "Cannot open \(file): check that the folder exists and is accessible, "
                + "and that the file exists when opening without create."
        case .full:
            return "There is no space left for \(file): free disk space or raise the file-size limit."
        case .interrupted:
            return "The operation was interrupted; nothing of it was committed."
        case .ioError:
            return "The operating system failed to read or write \(file): check the disk and the file system."
        case .timedOut:
            return "A wait for \(file) reached its limit: find what holds it so long, or raise the limit."
        case .cryptoProviderFailure:
            return "The crypto provider (OpenSSL) failed on \(file); the failed statement wrote nothing: close the "
                + "connection and open it again, and if it keeps failing check OpenSSL's configuration (OPENSSL_CONF)."
        case .unsafeSchema:
            return "\(file) is intact, but its schema calls a function SQLCipherKit never runs from a schema (a view, "
                + "trigger, CHECK, DEFAULT, index or generated column that calls it; SQLite then calls the schema "
                + "malformed): remove or change that object with the program that wrote it."
        case .sqlite:
            return "SQLite reported an error."
        }
    }
}

extension SQLCipherError: LocalizedError {
    /// The same text as ``description``: what went wrong and what to do.
    public var errorDescription: String? { description }
}
