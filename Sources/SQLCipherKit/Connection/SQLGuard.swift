import CSQLCipher

/// The state of one connection's SQL guard: what it refuses depends on whether the connection is encrypted,
/// whether the SQL being compiled is the library's own, and whether SQLite is compiling it for itself while a
/// statement runs.
///
/// Touched only on the thread that uses the connection (the authorizer runs inside `sqlite3_prepare` and
/// `sqlite3_step` on that thread), as the connection itself is.
@usableFromInline final class SQLGuard {
    /// Whether the connection's main database is encrypted.
    let encrypted: Bool
    /// Greater than zero while the library compiles its own SQL (``Database/trusted(_:)``).
    var trustedDepth = 0
    /// Greater than zero while the library is inside `sqlite3_step`: SQL compiled then is SQLite's own (the
    /// `ATTACH … AS vacuum_db` of `VACUUM`), or an eponymous pragma table's, never text the caller wrote.
    var steppingDepth: Int {
        get { steppingCounter.pointee }
        set { steppingCounter.pointee = newValue }
    }
    /// The memory of ``steppingDepth``, which the connection also holds (``Database/steppingCounter``): the
    /// inlined step counts through a plain pointer, with no retain of this object and no run-time exclusivity
    /// check, both of which cost more per row than the step's own bookkeeping. Freed with this object, which the
    /// connection keeps for its whole life.
    let steppingCounter: UnsafeMutablePointer<Int>
    /// The explanation of the last refusal, taken by the error that reports it.
    private var refusal: String?

    deinit {
        steppingCounter.deallocate()
    }

    init(encrypted: Bool) {
        steppingCounter = .allocate(capacity: 1)
        steppingCounter.initialize(to: 0)
        self.encrypted = encrypted
    }

    /// The authorizer's verdict on one action; records the explanation when it refuses.
    func authorize(action: Int32, first: String?, second: String?) -> Int32 {
        guard trustedDepth == 0,
              let explanation = SQLGuard.refusal(action: action, first: first, second: second, encrypted: encrypted,
                                                 stepping: steppingDepth > 0) else {
            return SQLITE_OK
        }
        refusal = explanation
        return SQLITE_DENY
    }

    /// The explanation of the last refusal, once.
    func takeRefusal() -> String? {
        defer { refusal = nil }
        return refusal
    }

    // MARK: The rules

    /// The pragmas that take a key as SQL text. Keys go through ``Key``, `sqlite3_key_v2` and
    /// ``Database/rekey(to:)`` only: in SQL text a key would sit in statement caches, error messages and logs.
    static let keyPragmas: Set<String> = ["key", "rekey", "hexkey", "hexrekey", "textkey", "textrekey"]

    /// SQLCipher's pragmas that are not named `cipher_…`.
    static let otherCipherPragmas: Set<String> = ["kdf_iter", "fast_kdf_iter", "rekey_cipher", "rekey_kdf_iter"]

    /// Cipher pragmas that act even without a value.
    static let actingCipherPragmas: Set<String> = ["cipher_migrate"]

    /// Why SQL text may not do `action`, or nil when it may. `first` and `second` are the authorizer's
    /// arguments (for a pragma: its name and value; for a function: its name).
    static func refusal(action: Int32, first: String?, second: String?, encrypted: Bool, stepping: Bool) -> String? {
        switch action {
        case SQLITE_PRAGMA:
            guard let first else { return nil }
            return pragmaRefusal(name: first.lowercased(), value: second, encrypted: encrypted)
        case SQLITE_ATTACH:
            // While a statement runs, only SQLite itself compiles SQL: VACUUM attaches its copy with the main
            // database's key. Every ATTACH the caller writes is refused, with or without a KEY clause.
            if stepping { return nil }
            return "ATTACH is refused in SQL text: its KEY clause puts a key in SQL text, and KEY '' attaches a "
                + "file that is written in plaintext. Use Database.attach(_:as:key:) (the key is bound, the file "
                + "encrypted) or, to attach a plaintext file on purpose, Database.attachUnencrypted(_:as:)"
        case SQLITE_FUNCTION:
            guard let second, second.lowercased() == "sqlcipher_export" else { return nil }
            return "sqlcipher_export() is refused in SQL text: it copies the whole database into another schema, "
                + "in plaintext when that schema has no key. Use Database.export(to:key:cipher:) (with a key for "
                + "an encrypted copy, nil for a plaintext one) or Database.decrypt(path:key:)"
        default:
            return nil
        }
    }

    private static func pragmaRefusal(name: String, value: String?, encrypted: Bool) -> String? {
        if keyPragmas.contains(name) {
            return "PRAGMA \(name) is refused: keys never travel in SQL text. Open with a Key "
                + "(Database(path:key:)) and change it with Database.rekey(to:)"
        }
        if name.hasPrefix("cipher") || otherCipherPragmas.contains(name) {
            guard value != nil || actingCipherPragmas.contains(name) else { return nil }
            if name.hasPrefix("cipher_profile") || name.hasPrefix("cipher_log") {
                return "PRAGMA \(name) = … is refused: it writes SQLCipher's trace or log, which can hold the SQL "
                    + "text of statements and the values in it, to a file in plaintext"
            }
            if name == "cipher_migrate" {
                return "PRAGMA cipher_migrate is refused on an open connection: use Database.migrate(path:key:)"
            }
            return "PRAGMA \(name) = … is refused after open: changing a cipher setting of an open database makes "
                + "its pages unreadable (the file is intact), and the cipher_default_… and process-wide settings "
                + "change every later connection. Pass the settings in Database.Configuration.cipher "
                + "(CipherSettings) when opening; reading a cipher pragma (no value) is allowed"
        }
        if encrypted, name == "temp_store", let value, ["file", "1"].contains(value.lowercased()) {
            return "PRAGMA temp_store = FILE is refused on an encrypted connection: temporary files are not encrypted "
                + "(sorts, temporary tables and indices would go to TMPDIR in plaintext). Keep the default (memory)"
        }
        return nil
    }
}
