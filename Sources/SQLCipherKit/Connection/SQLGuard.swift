import CSQLCipher

/// The state of one connection's SQL guard: what it refuses depends on whether the connection is encrypted,
/// whether the SQL being compiled is the library's own, and who is compiling it.
///
/// The guard is the second wall. The first is the engine's own state, which the library sets on every connection
/// (``Database/installSQLGuard(encrypted:)``) and which holds whatever compiles the SQL: no database may be
/// attached (`SQLITE_LIMIT_ATTACHED` 0, attaching neither creates nor writes a file), the connection is
/// defensive (no `writable_schema`, no `journal_mode=OFF`), functions in a schema run only when innocuous
/// (`trusted_schema` off), and `sqlcipher_export()` refuses unless the library permits one call. Only the
/// library's own operations open the first three for the one statement that needs them.
///
/// Touched only on the thread that uses the connection (the authorizer runs inside `sqlite3_prepare` and
/// `sqlite3_step` on that thread), as the connection itself is.
@usableFromInline final class SQLGuard {
    /// Whether the connection's main database is encrypted.
    let encrypted: Bool
    /// The connection, for the engine state the rules read and set (nil until installed, and once closed).
    var handle: OpaquePointer?
    /// Where the library's own SQL is being compiled (``Database/trusted(_:)``): the step and user-code depths at
    /// which the library entered its trusted block. Trust holds only for SQL compiled at exactly those depths —
    /// by the library's body itself — never for SQL compiled while one of its statements steps (a schema row run
    /// by the export, a trigger, SQLCipher's own nested SQL) or by user code it calls.
    var trustedFrame: (stepping: Int, userCode: Int)?
    /// Greater than zero while the library runs caller-provided code (a progress closure): SQL compiled then is
    /// the caller's, however deep inside a library operation it runs.
    var userCodeDepth = 0
    /// Greater than zero while the library is inside `sqlite3_step`.
    var steppingDepth: Int {
        get { steppingCounter.pointee }
        set { steppingCounter.pointee = newValue }
    }
    /// The memory of ``steppingDepth``, which the connection also holds (``Database/steppingCounter``): the
    /// inlined step counts through a plain pointer, with no retain of this object and no run-time exclusivity
    /// check, both of which cost more per row than the step's own bookkeeping. Freed with this object, which the
    /// connection keeps for its whole life.
    let steppingCounter: UnsafeMutablePointer<Int>
    /// The schemas whose pages go through SQLCipher's codec, in ASCII lower case: `main` on an encrypted
    /// connection, and every schema ``Database/attach(_:as:key:)`` attached with a key. SQLite compares schema
    /// names without regard to ASCII case.
    var encryptedSchemas: Set<String>
    /// True while the library itself has opened the engine for one attachment (``Database/withAttachmentOpen(_:)``).
    var attachmentOpen = false
    /// The transaction and savepoint actions of the caller's SQL compiled since ``takeCompiledControl()``: the
    /// statement keeps them, and each of its steps meets their rules again (``controlRefusal(_:)``), as they read the
    /// library's transaction scope, which may have changed since the statement was compiled (found by an attacker:
    /// `RELEASE u`, prepared outside a transaction, released the library's savepoint when stepped inside one).
    private var compiledControl: [ControlAction] = []

    /// A transaction or savepoint action the authorizer saw: its code and arguments.
    struct ControlAction {
        let action: Int32
        let first: String?
        let second: String?
    }

    /// The actions ``compiledControl`` gathered, and forgets them.
    func takeCompiledControl() -> [ControlAction] {
        defer { compiledControl.removeAll() }
        return compiledControl
    }

    /// Keeps the caller's savepoints inside the library's scopes as SQLite has them, once a statement with `actions`
    /// ran (not `EXPLAIN`ed): `SAVEPOINT` adds its name, `RELEASE` removes the newest of that name and every one after
    /// it, `ROLLBACK TO` those after it. (They were recorded when compiled: a `SAVEPOINT u` prepared but never run, or
    /// one already released, let `RELEASE u` end a savepoint of the caller's around the library's, and the library's
    /// with it; found by a reviewer.)
    func controlStepped(_ actions: [ControlAction]) {
        guard holdsTransaction else { return }
        let depth = scopeDepth
        for action in actions where action.action == SQLITE_SAVEPOINT {
            let name = (action.second ?? "").asciiLowercased
            let newest = userSavepoints.lastIndex { $0.depth == depth && $0.name == name }
            switch action.first {
            case "BEGIN": userSavepoints.append((depth, name))
            case "RELEASE": if let newest { userSavepoints.removeSubrange(newest...) }
            case "ROLLBACK": if let newest { userSavepoints.removeSubrange((newest + 1)...) }
            default: break
            }
        }
    }

    /// Why the rules refuse `actions` now, a statement's step, or nil.
    func controlRefusal(_ actions: [ControlAction]) -> String? {
        for action in actions {
            if let explanation = refusal(action: action.action, first: action.first, second: action.second,
                                         schema: nil) {
                return explanation
            }
        }
        return nil
    }

    /// The schemas the library attaches for its own operations, which SQL that caller code runs from inside them (an
    /// export's last progress call) may not use: the content is the library's copy.
    static let librarySchemas: Set<String> = ["sqlcipherkit_export"]
    /// True when the guard raised the engine's attachment limit for `VACUUM`'s own `ATTACH`: lowered again by the
    /// first authorizer call after that `VACUUM` (no `ATTACH` compiles without one).
    var raisedForVacuum = false
    /// During ``Database/migrate(path:key:willRun:)``: what SQLCipher's `cipher_migrate` may do in its nested SQL — attach
    /// `file` (the database's path with `-migrated`) once, set `cipher_compatibility`, and run the export (which the
    /// engine's gate allows once).
    var cipherMigration: (file: String, attached: Bool)?
    /// Whether the connection was opened read-only (``OpenMode/readOnly``, every reader of a pool): the library sets
    /// `query_only` on it, which SQL text may not turn off, and no `VACUUM` (`INTO`) runs there.
    var readOnly = false
    /// Whether the connection has an observer (``Database/Configuration/observer``): its busy handler and WAL hook
    /// are the observer's, which `PRAGMA busy_timeout = …` and `PRAGMA wal_autocheckpoint = …` would replace.
    var observed = false
    /// The transaction scopes the library has open on this connection (``scopeDepth``): a transaction it began
    /// (``Database/transaction(_:_:)``, a pool's `read` and `write`, a writer session's transaction), a savepoint of
    /// its own (``Database/savepoint(_:)``), a transaction a writer session's transaction joined. While one is open,
    /// SQL text may neither begin, commit, roll back nor end a transaction, and may release or roll back to only the
    /// savepoints it began inside the innermost scope (``userSavepoints``; not one around it, whose release would take
    /// the library's with it); and the commit hook turns any commit the library does not make into a rollback, so
    /// that after SQLite itself ended the transaction (`INSERT OR ROLLBACK`, `RAISE(ROLLBACK)`, a full disk) no later
    /// statement of the closure commits on its own.
    ///
    /// Plain memory (`[0]` the number of scopes open, `[1]` whether the library controls a transaction now, `[2]`
    /// whether the transaction ended under an open scope: ``transactionEndedUnderScope``) that the commit and
    /// rollback hooks read with no retain and no exclusivity check, as ``steppingCounter``: every transaction passes
    /// through both, and a pool's `write` is one.
    let transactionState: UnsafeMutablePointer<Int>
    /// The savepoints SQL text began inside a library scope: the scope's depth, and the name in ASCII lower case.
    var userSavepoints: [(depth: Int, name: String)] = []

    /// The number of transaction scopes the library has open.
    var scopeDepth: Int {
        get { transactionState[0] }
        set { transactionState[0] = newValue }
    }

    /// True while the library itself begins, commits or rolls back a transaction or one of its savepoints.
    var controlsTransaction: Bool {
        get { transactionState[1] != 0 }
        set { transactionState[1] = newValue ? 1 : 0 }
    }

    /// Whether the library has a transaction scope open.
    var holdsTransaction: Bool { transactionState[0] > 0 }

    /// Whether, since the outermost scope opened, a transaction was rolled back that the library did not roll back:
    /// SQLite ended the transaction the scopes are in (`INSERT OR ROLLBACK`, `RAISE(ROLLBACK)`, a full disk, a
    /// commit the commit hook refused). Any transaction open now was begun again after it (found by an attacker: a
    /// `SAVEPOINT` of SQL text, or the library's cached `BEGIN` run by the caller), and the library commits none of
    /// it (``Database/commitTransaction()``).
    var transactionEndedUnderScope: Bool { transactionState[2] != 0 }

    /// Opens a transaction scope.
    func beginScope() {
        transactionState[0] += 1
    }

    /// Closes the innermost transaction scope, if any, with the savepoints SQL text began inside it.
    func endScope() {
        guard transactionState[0] > 0 else { return }
        if !userSavepoints.isEmpty {
            let depth = transactionState[0]
            userSavepoints.removeAll { $0.depth >= depth }
        }
        transactionState[0] -= 1
        if transactionState[0] == 0 { transactionState[2] = 0 }
    }

    /// The commit hook (`sqlite3_commit_hook`, installed by ``Database/installSQLGuard(encrypted:)`` with
    /// ``transactionState`` as its argument): non-zero turns the commit into a rollback. A commit while the library
    /// holds a transaction scope is the library's own, or refused.
    static let commitHook: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { state in
        guard let state = state?.assumingMemoryBound(to: Int.self) else { return 0 }
        return state[0] > 0 && state[1] == 0 ? 1 : 0
    }

    /// The rollback hook (`sqlite3_rollback_hook`, installed with ``commitHook``): a rollback the library does not
    /// make while it holds a scope sets ``transactionEndedUnderScope``.
    static let rollbackHook: @convention(c) (UnsafeMutableRawPointer?) -> Void = { state in
        guard let state = state?.assumingMemoryBound(to: Int.self), state[0] > 0, state[1] == 0 else { return }
        state[2] = 1
    }
    /// The prefix of the savepoints the library opens (``Database/savepoint(_:)``): SQL text may not release them
    /// or roll them back.
    static let librarySavepointPrefix = "sqlcipherkit_savepoint_"
    /// The explanation of the last refusal, taken by the error that reports it.
    private var refusal: String?

    deinit {
        steppingCounter.deallocate()
        transactionState.deallocate()
    }

    init(encrypted: Bool) {
        steppingCounter = .allocate(capacity: 1)
        steppingCounter.initialize(to: 0)
        transactionState = .allocate(capacity: 3)
        transactionState.initialize(repeating: 0, count: 3)
        self.encrypted = encrypted
        encryptedSchemas = encrypted ? ["main"] : []
    }

    /// Whether SQL compiled now is the library's own: inside ``Database/trusted(_:)``, compiled by its body.
    var compilesTrustedSQL: Bool {
        guard let trustedFrame else { return false }
        return trustedFrame.stepping == steppingDepth && trustedFrame.userCode == userCodeDepth
    }

    /// The authorizer's verdict on one action; records the explanation when it refuses. `schema` is the
    /// authorizer's database argument (for a pragma: the schema written before its name, or nil).
    func authorize(action: Int32, first: String?, second: String?, schema: String?) -> Int32 {
        if raisedForVacuum && !vacuumRuns {
            closeAttachments()
        }
        guard !compilesTrustedSQL else { return SQLITE_OK }
        // Not the library's own `BEGIN` and `COMMIT`, compiled under its control and cached, which stay on the fast
        // path (the callgrind gate's transactions): stepped by the caller from the cache inside a transaction of the
        // library's, that `COMMIT` meets the commit hook and that `BEGIN` fails in SQLite.
        if action == SQLITE_TRANSACTION || action == SQLITE_SAVEPOINT, !controlsTransaction {
            compiledControl.append(ControlAction(action: action, first: first, second: second))
        }
        guard let explanation = refusal(action: action, first: first, second: second, schema: schema) else {
            return SQLITE_OK
        }
        refusal = explanation
        return SQLITE_DENY
    }

    /// Whether a refusal waits to be taken by the error that reports it.
    var hasRefusal: Bool { refusal != nil }

    /// The explanation of the last refusal, once.
    func takeRefusal() -> String? {
        defer { refusal = nil }
        return refusal
    }

    // MARK: The engine's state

    /// Reads (`value` -1) or sets one of the connection's `SQLITE_DBCONFIG_…` flags; the setting in effect.
    @discardableResult
    func engineFlag(_ option: Int32, _ value: Int32 = -1) -> Bool {
        guard let handle else { return false }
        var current: Int32 = 0
        _ = sqlcipherkit_db_config_flag(handle, option, value, &current)
        return current != 0
    }

    /// The number of databases attached to the connection (its schemas but `main` and `temp`).
    var attachedCount: Int32 {
        guard let handle else { return 0 }
        var count: Int32 = 0
        while sqlite3_db_name(handle, count + 2) != nil { count += 1 }
        return count
    }

    /// Whether a `VACUUM` is running: SQLite turns the attach flags on for the duration of its run
    /// (`sqlite3RunVacuum`), and nothing else does on a connection whose library has not opened them.
    var vacuumRuns: Bool {
        !attachmentOpen && engineFlag(SQLITE_DBCONFIG_ENABLE_ATTACH_CREATE)
    }

    /// Lets the engine attach one more database, creating and writing it: for the library's own `ATTACH`.
    func openAttachment() {
        guard let handle else { return }
        // A VACUUM that raised the limit for its own ATTACH is over: the library runs no operation inside one.
        raisedForVacuum = false
        attachmentOpen = true
        sqlite3_limit(handle, SQLITE_LIMIT_ATTACHED, attachedCount + 1)
        engineFlag(SQLITE_DBCONFIG_ENABLE_ATTACH_CREATE, 1)
        engineFlag(SQLITE_DBCONFIG_ENABLE_ATTACH_WRITE, 1)
    }

    /// The engine's resting state: no further database may be attached, and an attachment could neither create
    /// nor write a file. Set at open, and again after every operation that opened it.
    func closeAttachments() {
        guard let handle else { return }
        attachmentOpen = false
        raisedForVacuum = false
        sqlite3_limit(handle, SQLITE_LIMIT_ATTACHED, 0)
        engineFlag(SQLITE_DBCONFIG_ENABLE_ATTACH_CREATE, 0)
        engineFlag(SQLITE_DBCONFIG_ENABLE_ATTACH_WRITE, 0)
    }

    // MARK: The rules
    //
    // Every rule decides by what SQLite will do, from what SQLite itself hands the authorizer: the pragma's
    // name and value after SQLite's tokenizer has dequoted them (`"key"`, `[key]`, `` `key` `` and `'key'` all
    // arrive as `key`; a negative value as `-N`), the canonical name of a function, the file name of an ATTACH.
    // Comments, white space, quoting, the `PRAGMA x(v)` form and schema prefixes never reach a rule; what
    // remains is decided with SQLite's own comparisons (ASCII case only, as `sqlite3_stricmp`) and its own
    // value parsers (`getTempStore` for temp_store). The generative test (`GuardSpellingTests`, run in a child
    // process by `ReliabilityHelper guard-spellings`) checks each rule against the effect of thousands of
    // spellings on an unguarded connection.

    /// The pragmas that take a key as SQL text (pragma.c's `PragTyp_KEY` entries). Keys go through ``Key``,
    /// `sqlite3_key_v2` and ``Database/rekey(to:)`` only: in SQL text a key would sit in statement caches,
    /// error messages and logs.
    static let keyPragmas: Set<String> = ["key", "rekey", "hexkey", "hexrekey", "textkey", "textrekey"]

    /// SQLCipher's pragmas that are not named `cipher…` (`sqlcipher_codec_pragma` dispatches on these names).
    static let otherCipherPragmas: Set<String> = ["kdf_iter", "fast_kdf_iter", "rekey_cipher", "rekey_kdf_iter"]

    /// Pragmas that would take down a defense the engine holds on every connection.
    static let defensePragmas: Set<String> = ["writable_schema", "trusted_schema"]

    /// Pragmas that change the state of the whole process, not of the connection (pragma.c: `hard_heap_limit` and
    /// `soft_heap_limit` set `sqlite3_hard_heap_limit64` and `sqlite3_soft_heap_limit64`; `temp_store_directory`
    /// and `data_store_directory` set the global `sqlite3_temp_directory` and `sqlite3_data_directory`). From SQL
    /// text one connection would starve every other of memory, or move every other connection's files.
    static let processWidePragmas: Set<String> = ["hard_heap_limit", "soft_heap_limit", "temp_store_directory",
                                                  "data_store_directory"]

    /// Cipher pragmas that act even without a value.
    static let actingCipherPragmas: Set<String> = ["cipher_migrate"]

    /// Why SQL text may not do `action`, or nil when it may. `first` and `second` are the authorizer's
    /// arguments (for a pragma: its name and value; for a function: its name; for ATTACH: the file name when
    /// it is a literal), `schema` its database argument.
    func refusal(action: Int32, first: String?, second: String?, schema: String?) -> String? {
        if userCodeDepth > 0, let explanation = userCodeRefusal(action: action, first: first, schema: schema) {
            return explanation
        }
        switch action {
        case SQLITE_PRAGMA:
            guard let first else { return nil }
            return pragmaRefusal(name: first.asciiLowercased, value: second, schema: schema?.asciiLowercased)
        case SQLITE_ATTACH:
            if let migration = cipherMigration, !migration.attached, first == migration.file {
                // SQLCipher's cipher_migrate attaches the copy it writes, once (Database.migrate).
                cipherMigration?.attached = true
                return nil
            }
            // VACUUM attaches its copy (`ATTACH %Q AS vacuum_…`), and SQLCipher keys it with the main key — unless
            // the name is a URI with a `key=`, `hexkey=` or `textkey=` parameter, which SQLCipher applies instead
            // (an empty `key=` writes the copy in plaintext). That ATTACH is VACUUM's own only while the engine says
            // a VACUUM runs and no caller code runs inside it: then the engine's limit is raised for it alone.
            if steppingDepth > 0, userCodeDepth == 0, vacuumRuns {
                if holdsTransaction {
                    // SQLite refuses VACUUM inside a transaction only after its ATTACH has created the output file;
                    // when the library's transaction has been ended under it, VACUUM's own BEGIN would be refused
                    // the same way. Refused here, before the file exists.
                    return "VACUUM is refused inside a transaction SQLCipherKit began: run it outside DatabasePool.read "
                        + "and write, Database.transaction and a writer session's transaction"
                }
                if readOnly {
                    return "VACUUM is refused on a read-only connection (a pool's reader): it writes a file. Run "
                        + "VACUUM INTO on the pool's writer (DatabasePool.write), or use Database.backup(to:key:)"
                }
                if let first, Self.isKeyedURI(first) {
                    return "VACUUM INTO a URI with a key parameter (key=, hexkey=, textkey=) is refused: SQLCipher "
                        + "would key the copy from SQL text, and an empty key= writes it in plaintext. Leave the key "
                        + "out (the copy is encrypted with this connection's key), or use "
                        + "Database.export(to:key:cipher:)"
                }
                if let handle {
                    sqlite3_limit(handle, SQLITE_LIMIT_ATTACHED, attachedCount + 1)
                    raisedForVacuum = true
                }
                return nil
            }
            // Every other ATTACH is refused, with or without a KEY clause, whoever compiles it: SQL text, a
            // trigger, a schema row that SQLCipher's export runs, a callback.
            return "ATTACH is refused in SQL text: its KEY clause puts a key in SQL text, and KEY '' attaches a "
                + "file that is written in plaintext. Use Database.attach(_:as:key:) (the key is bound, the file "
                + "encrypted) or, to attach a plaintext file on purpose, Database.attachUnencrypted(_:as:)"
        case SQLITE_TRANSACTION where holdsTransaction && !controlsTransaction:
            return "\(first ?? "COMMIT") in SQL text is refused inside a transaction SQLCipherKit opened "
                + "(Database.transaction and savepoint, DatabasePool.read and write, a writer session): return from "
                + "the closure to commit, throw to roll back; use SAVEPOINT, RELEASE and ROLLBACK TO inside it"
        case SQLITE_SAVEPOINT where !controlsTransaction:
            return savepointRefusal(operation: first ?? "", name: (second ?? "").asciiLowercased)
        case SQLITE_FUNCTION:
            // `second` is the function's registered name, whatever the spelling in the SQL.
            guard let second, second.asciiLowercased == "sqlcipher_export" else { return nil }
            // SQLCipher's cipher_migrate runs the export it needs (the engine's gate still allows one call only).
            if cipherMigration != nil { return nil }
            return "sqlcipher_export() is refused in SQL text: it copies the whole database into another schema, "
                + "in plaintext when that schema has no key. Use Database.export(to:key:cipher:) (with a key for "
                + "an encrypted copy, nil for a plaintext one) or Database.decrypt(path:key:)"
        default:
            return nil
        }
    }

    /// Why SQL that caller code runs from inside a library operation (an export's last progress call, under the
    /// whole guard) may not do `action`, beyond what SQL text may not do anywhere, or nil: it may not use the
    /// library's own schema, nor detach a schema it names by an expression (SQLite then gives the authorizer no
    /// name), which could be the library's (both found by attackers).
    private func userCodeRefusal(action: Int32, first: String?, schema: String?) -> String? {
        if action == SQLITE_DETACH, first == nil {
            return "DETACH of a schema named by an expression is refused in code SQLCipherKit calls from inside one "
                + "of its operations: name the schema"
        }
        let named = action == SQLITE_DETACH ? first : schema
        if let named, Self.librarySchemas.contains(named.asciiLowercased) {
            return "\(named) is SQLCipherKit's own schema, attached for the operation that runs now: code it calls "
                + "(a progress closure) may not use it"
        }
        return nil
    }

    /// Why SQL text may not run `operation` (`BEGIN`, `RELEASE` or `ROLLBACK`, as the authorizer names
    /// `SAVEPOINT`, `RELEASE` and `ROLLBACK TO`) on savepoint `name`, or nil. Records nothing: a savepoint counts as
    /// begun once its statement ran (``controlStepped(_:)``).
    private func savepointRefusal(operation: String, name: String) -> String? {
        if name.hasPrefix(Self.librarySavepointPrefix) {
            return "SAVEPOINT, RELEASE and ROLLBACK TO of \(name) are refused in SQL text: savepoints named "
                + "\(Self.librarySavepointPrefix)… are SQLCipherKit's (Database.savepoint, Database.transaction); "
                + "return from their closure to release them, throw to roll back to them"
        }
        guard holdsTransaction, operation != "BEGIN" else { return nil }
        let depth = scopeDepth
        guard userSavepoints.contains(where: { $0.depth == depth && $0.name == name }) else {
            return "\(operation == "RELEASE" ? "RELEASE" : "ROLLBACK TO") \(name) is refused inside a transaction or "
                + "savepoint SQLCipherKit opened: \(name) was not begun inside it, and releasing or rolling back to a "
                + "savepoint around it would end SQLCipherKit's with it. Use savepoints you begin inside the closure"
        }
        return nil
    }

    private func pragmaRefusal(name: String, value: String?, schema: String?) -> String? {
        if Self.keyPragmas.contains(name) {
            return "PRAGMA \(name) is refused: keys never travel in SQL text. Open with a Key "
                + "(Database(path:key:)) and change it with Database.rekey(to:)"
        }
        // The engine's own defenses, which SQL text may not take down: `writable_schema` lets SQL put any text in
        // a schema row (which SQLCipher's export would run, and a database whose schema does not parse never opens
        // again); `trusted_schema` lets functions in a schema run (column defaults, CHECK constraints, triggers).
        if Self.defensePragmas.contains(name), value != nil {
            return "PRAGMA \(name) = … is refused: SQLCipherKit keeps \(name) off on every connection (with "
                + "SQLITE_DBCONFIG_DEFENSIVE), so that SQL text can neither rewrite the schema nor have the schema "
                + "run functions on its behalf. Change tables with CREATE, ALTER and DROP"
        }
        if observed, value != nil, name == "busy_timeout" {
            return "PRAGMA busy_timeout = … is refused on a connection with an observer: it would replace the "
                + "observer's busy handler, which applies the timeout and reports each wait. Set the timeout with "
                + "Database.setBusyTimeout(_:) or Database.Configuration.busyTimeout"
        }
        if observed, value != nil, name == "wal_autocheckpoint" {
            return "PRAGMA wal_autocheckpoint = … is refused on a connection with an observer: it would replace the "
                + "observer's write-ahead-log hook, which runs SQLite's automatic checkpoint (at 1,000 frames) and "
                + "reports it. Checkpoint with PRAGMA wal_checkpoint, or open without an observer to change the size"
        }
        if readOnly, name == "query_only", value != nil {
            return "PRAGMA query_only = … is refused on a read-only connection (a pool's reader): SQLCipherKit keeps "
                + "it on, so that no statement there writes. Write through DatabasePool.write"
        }
        if Self.processWidePragmas.contains(name), value != nil {
            return "PRAGMA \(name) = … is refused: it changes the whole process, every connection whoever opened it, "
                + "not this one. Set heap limits with Engine.setHeapLimits(_:) at start-up; SQLCipherKit's engine keeps "
                + "temporary files in memory, and the data folder applies on Windows only"
        }
        if name == "cipher_compatibility" || name == "cipher_migrate", cipherMigration != nil {
            // Database.migrate runs the pragma (untrusted: it runs SQL while it is prepared), and SQLCipher's
            // cipher_migrate tries each earlier version's settings.
            return nil
        }
        if name.hasPrefix("cipher") || Self.otherCipherPragmas.contains(name) {
            guard value != nil || Self.actingCipherPragmas.contains(name) else { return nil }
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
        // SQLCipher takes `page_size` on a keyed schema as `cipher_page_size` (sqlcipher_codec_pragma): on a new
        // database it writes pages that the default settings cannot read.
        if name == "page_size", value != nil, encryptedSchemas.contains(schema ?? "main") {
            return "PRAGMA page_size = … is refused on an encrypted schema: SQLCipher applies it as "
                + "cipher_page_size, and a database written so does not open with its settings. Pass "
                + "CipherSettings(pageSize:) in Database.Configuration.cipher when opening"
        }
        // SQLite reads temp_store's value with getTempStore: the first character when it is a digit 0-2,
        // else FILE or MEMORY in any ASCII case, else DEFAULT. FILE asks for temporary files, which SQLCipher
        // does not encrypt (this engine keeps them in memory anyway: SQLITE_TEMP_STORE=3).
        if encrypted, name == "temp_store", let value, Self.tempStore(value) == 1 {
            return "PRAGMA temp_store = FILE is refused on an encrypted connection: temporary files are not encrypted "
                + "(sorts, temporary tables and indices would go to TMPDIR in plaintext). Keep the default (memory)"
        }
        return nil
    }

    /// What SQLite's `getTempStore` makes of a temp_store value: 0 DEFAULT, 1 FILE, 2 MEMORY.
    static func tempStore(_ value: String) -> Int {
        if let first = value.utf8.first, (UInt8(ascii: "0")...UInt8(ascii: "2")).contains(first) {
            return Int(first - UInt8(ascii: "0"))
        }
        switch value.asciiLowercased {
        case "file": return 1
        case "memory": return 2
        default: return 0
        }
    }
}
