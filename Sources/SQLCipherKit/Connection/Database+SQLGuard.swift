import CSQLCipher

extension Database {
    /// Sets the engine's defenses and installs the authorizer that refuses, with ``SQLCipherError/Kind/misuse``,
    /// every SQL-level way to put a key in SQL text or to write data of an encrypted connection to a file in
    /// plaintext (the inventory is in the documentation article "SQL that SQLCipherKit refuses").
    ///
    /// The engine's defenses hold whoever compiles the SQL — SQL text, a trigger, a view, a column `DEFAULT`, a
    /// schema row that SQLCipher's export runs, a callback — because SQLite or SQLCipher enforce them, not a list
    /// of statements:
    ///
    /// - `SQLITE_LIMIT_ATTACHED` is 0 and [`SQLITE_DBCONFIG_ENABLE_ATTACH_CREATE`/`_WRITE`](https://sqlite.org/c3ref/c_dbconfig_defensive.html)
    ///   are off: no database can be attached, and an attachment could neither create nor write a file. Only the
    ///   library's own operations (``attach(_:as:key:)``, ``export(to:key:cipher:replacing:progress:)``,
    ///   ``migrate(path:key:willRun:)``) open them, for their one `ATTACH`; `VACUUM` opens the flags itself, and the guard
    ///   raises the limit for its `ATTACH` alone.
    /// - [`SQLITE_DBCONFIG_DEFENSIVE`](https://sqlite.org/c3ref/c_dbconfig_defensive.html): no `writable_schema`,
    ///   no `journal_mode=OFF`, no writes to `schema_version` or to shadow tables.
    /// - [`trusted_schema`](https://sqlite.org/pragma.html#pragma_trusted_schema) off: a function that is not
    ///   innocuous does not run from a schema (a view, a trigger, a CHECK constraint, a generated column, an index).
    /// - `sqlcipher_export()` refuses unless the library permits one call (the pin's local change
    ///   `sqlcipher-export-gate`): SQLite never shows the authorizer a function in a column `DEFAULT`.
    ///
    /// The authorizer then refuses, on every connection: the key pragmas (`PRAGMA key`, `rekey` and their
    /// hex/text forms); `ATTACH` (use ``attach(_:as:key:)`` or ``attachUnencrypted(_:as:)``); `sqlcipher_export()`
    /// (use ``export(to:key:cipher:replacing:progress:)``); cipher pragmas with a value and `cipher_migrate` (use
    /// ``CipherSettings`` at open); `writable_schema` and `trusted_schema` with a value; `page_size = …` on an
    /// encrypted schema, which SQLCipher applies as `cipher_page_size`; `VACUUM INTO` a URI with a key parameter;
    /// and on an encrypted connection every `temp_store` value SQLite reads as FILE (this engine keeps temporary
    /// files in memory anyway, `SQLITE_TEMP_STORE=3`).
    ///
    /// SQLite consults the authorizer whenever it compiles SQL, so the rules hold wherever the action hides: a
    /// trigger body, a view, a CTE, an eponymous pragma table, SQL that SQLite or SQLCipher compile while a
    /// statement runs. They decide on what SQLite hands the authorizer after its own parsing (dequoted names,
    /// canonical function names), with SQLite's own comparisons and value parsers, so no spelling reads
    /// differently to the guard than to SQLite (see `SQLGuard`'s rules). The library's own statements are
    /// compiled under ``trusted(_:)``.
    func installSQLGuard(encrypted: Bool) throws(SQLCipherError) {
        let db = try requireOpenHandle()
        sqlGuard.handle = db
        guard sqlGuard.engineFlag(SQLITE_DBCONFIG_DEFENSIVE, 1),
              !sqlGuard.engineFlag(SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0) else {
            throw .api(.notSQLCipher, "the engine did not take SQLITE_DBCONFIG_DEFENSIVE or trusted_schema off", path: path)
        }
        sqlGuard.closeAttachments()
        let context = Unmanaged.passUnretained(sqlGuard).toOpaque()
        // A commit the library does not make, while it holds a transaction scope, becomes a rollback.
        sqlite3_commit_hook(db, SQLGuard.commitHook, UnsafeMutableRawPointer(sqlGuard.transactionState))
        // A rollback it does not make, while it holds one, ends the library's transaction: nothing after it commits.
        sqlite3_rollback_hook(db, SQLGuard.rollbackHook, UnsafeMutableRawPointer(sqlGuard.transactionState))
        sqlite3_set_authorizer(db, { context, action, first, second, schema, _ in
            // The connection holds its guard for as long as the handle is open.
            guard let context else { return SQLITE_OK }
            return Unmanaged<SQLGuard>.fromOpaque(context).takeUnretainedValue()
                .authorize(action: action, first: first.map { String(cString: $0) },
                           second: second.map { String(cString: $0) }, schema: schema.map { String(cString: $0) })
        }, context)
    }

    /// Compiles the library's own SQL past the guard (the typed APIs: cipher settings at open, attach, export,
    /// migrate). Trust covers the SQL that `body` itself prepares, nothing else: not SQL compiled while one of its
    /// statements steps (a schema row SQLCipher's export runs, a trigger, SQLite's own nested SQL), and not SQL
    /// that user code called from `body` prepares (``callingUserCode(runsNoSQL:_:)``). Never run caller-provided SQL text in
    /// `body`.
    func trusted<Result>(_ body: () throws(SQLCipherError) -> Result) throws(SQLCipherError) -> Result {
        let saved = sqlGuard.trustedFrame
        sqlGuard.trustedFrame = (sqlGuard.steppingDepth, sqlGuard.userCodeDepth)
        defer { sqlGuard.trustedFrame = saved }
        return try body()
    }

    /// Runs caller-provided code (a progress closure, an observer) from inside a library operation: every SQL it runs
    /// on this connection meets the whole guard, and the engine's attachments stay closed, wherever it is called
    /// from. Called from inside one of this connection's steps (a progress handler), or with `runsNoSQL` (an
    /// observer's event, which the library sends from the middle of its operations: between its `ATTACH` and the
    /// key it gives the file, between its `SAVEPOINT` and the scope it opens), it may run no SQL on it at all
    /// (``requireNoSQLUserCode()``): SQLite forbids it inside a step, and the operation's state is not the caller's.
    func callingUserCode<Result>(runsNoSQL: Bool = false, _ body: () throws -> Result) rethrows -> Result {
        let noSQL = runsNoSQL || sqlGuard.steppingDepth > 0
        sqlGuard.userCodeDepth += 1
        if noSQL { noSQLUserCodeDepth += 1 }
        let reopen = sqlGuard.attachmentOpen
        if reopen { sqlGuard.closeAttachments() }
        defer {
            sqlGuard.userCodeDepth -= 1
            if noSQL { noSQLUserCodeDepth -= 1 }
            if reopen { sqlGuard.openAttachment() }
        }
        return try body()
    }

    /// Opens the engine for one more attachment while `body` runs (the library's own `ATTACH`), and closes it
    /// again whatever happens.
    func withAttachmentOpen<Result>(_ body: () throws(SQLCipherError) -> Result) throws(SQLCipherError) -> Result {
        sqlGuard.openAttachment()
        defer { sqlGuard.closeAttachments() }
        return try body()
    }

    /// Permits `sqlcipher_export()` one call on this connection while `body` runs (the engine's gate takes the
    /// permit on entry, so a nested call is refused); withdrawn afterwards if unused.
    func withExportPermit<Result>(_ body: () throws(SQLCipherError) -> Result) throws(SQLCipherError) -> Result {
        let db = try requireOpenHandle()
        sqlite3_set_clientdata(db, Database.exportPermit, UnsafeMutableRawPointer(bitPattern: 1), nil)
        defer { if stillHolds(db) { sqlite3_set_clientdata(db, Database.exportPermit, nil, nil) } }
        return try body()
    }

    /// The client-data name the engine's export gate reads (BuildSupport/engine/local-changes/sqlcipher-export-gate.change).
    static let exportPermit = "sqlcipherkit_export"
}
