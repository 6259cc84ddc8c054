import CSQLCipher
import Glibc

/// A connection to an encrypted SQLCipher database.
///
/// Opening keys the connection (through `sqlite3_key_v2`), applies the cipher settings, checks that the engine
/// is SQLCipher and reads the schema once, so a wrong key fails here, with
/// ``SQLCipherError/Kind/wrongKeyOrNotADatabase``, not at the first query:
///
/// ```swift
/// let db = try Database(path: "/var/lib/app/data.db", key: .passphrase(passphrase))
/// try db.execute("CREATE TABLE IF NOT EXISTS note(id INTEGER PRIMARY KEY, body TEXT)")
/// try db.execute("INSERT INTO note(body) VALUES (?)", ["hello"])
/// let notes = try db.fetchAll(Note.self, "SELECT * FROM note")
/// ```
///
/// A failed open never leaves a file behind that was not there before, and never writes to one that was.
/// A connection is not safe to share between concurrent tasks; confine each to one task or thread (only
/// ``interruptHandle`` may be used from elsewhere).
public final class Database {
    /// The path the connection was opened with (`:memory:` for an in-memory database).
    public let path: String
    /// The configuration the connection was opened with.
    public let configuration: Database.Configuration

    /// The open `sqlite3` handle; nil once closed. Read on every step: not checked for exclusive access at run
    /// time (a connection is confined to one thread at a time, and the checks cost more than the read).
    @usableFromInline @exclusivity(unchecked)
    private(set) var handle: OpaquePointer?

    /// Interrupts this connection's running statement from any thread or task.
    public let interruptHandle: InterruptHandle

    /// The statements ``cachedStatement(_:)`` prepared.
    var statementCache = StatementCache()

    /// The handle a ``close()`` from caller code inside one of the connection's operations left for the engine to
    /// release once that operation is over (at the next ``close()``, or when the connection is released).
    private(set) var deferredClose: OpaquePointer?

    /// Whether `db`, a handle a frame took before running other code, is still this connection's to use: open, or
    /// closed but not yet released (a frame that restores engine state on `db` when it ends must check, found by a
    /// reviewer: a job's body that closed its connection freed the handle its progress handler's clean-up used).
    func stillHolds(_ db: OpaquePointer) -> Bool {
        handle == db || deferredClose == db
    }

    /// The number of savepoints opened by ``transaction(_:_:)`` and ``savepoint(_:)`` that are still open.
    var savepointDepth = 0

    /// The kind of key the connection was opened with (nil: unencrypted).
    let keyKind: Key.Kind?

    /// What the authorizer refuses, and the library's own SQL that passes it (SQLGuard.swift).
    @usableFromInline let sqlGuard: SQLGuard
    /// ``SQLGuard/steppingDepth``'s memory, for the inlined ``Statement/step()`` (valid while `sqlGuard` lives).
    @usableFromInline let steppingCounter: UnsafeMutablePointer<Int>

    /// Set while an `async` job runs on this connection: true once its task is cancelled, so the next statement
    /// does not start.
    // Not checked for exclusive access at run time (nor `checksCancellation`): `AsyncJob.perform` sets and clears
    // it on the thread that runs the job, and only that thread's statements read it, as the connection itself is
    // confined to one thread at a time.
    @exclusivity(unchecked)
    var isCancelled: (() -> Bool)? {
        didSet { updateChecksCancellation() }
    }

    /// Greater than zero while caller code runs that may run no SQL on this connection: a progress closure inside one
    /// of its steps (SQLite forbids touching a connection from inside its own step, and there the engine's defenses
    /// may be down: an export turns `writable_schema` on for its run), or an observer's event (sent from the middle
    /// of the library's operations). Every statement is refused then (``requireNoSQLUserCode()``).
    var noSQLUserCodeDepth = 0 {
        didSet { updateChecksCancellation() }
    }

    /// The hooks that report to ``Configuration/observer``; nil without one (ConnectionObservation.swift).
    let observation: ConnectionObservation?

    /// Throws ``SQLCipherError/Kind/misuse`` while caller code runs that may run no SQL on this connection.
    func requireNoSQLUserCode() throws(SQLCipherError) {
        guard noSQLUserCodeDepth == 0 else {
            throw .api(.misuse, "a progress callback or an observer may not run SQL on the connection whose operation "
                + "is reporting: SQLite forbids using a connection from inside its own running statement, and an "
                + "observer's events come from the middle of the library's operations. Use another connection, or run "
                + "the SQL after the operation returns", path: path)
        }
    }

    /// Whether ``isCancelled`` is set, caller code runs inside a step, or the connection is observed: what every
    /// step reads (a Bool, not a closure to copy and release), to take the checked step.
    @usableFromInline @exclusivity(unchecked)
    private(set) var checksCancellation = false

    private func updateChecksCancellation() {
        checksCancellation = isCancelled != nil || noSQLUserCodeDepth > 0 || observation != nil
    }

    /// Throws ``SQLCipherError/Kind/interrupted`` when the task running on this connection was cancelled.
    func checkCancellation() throws(SQLCipherError) {
        if let isCancelled, isCancelled() {
            throw .api(.interrupted, "the task was cancelled", path: path)
        }
    }

    /// Opens (or creates) the encrypted database at `path` with `key`.
    ///
    /// The order is SQLCipher's: open, key, cipher settings, the `cipher_version` check, then a read of the
    /// schema that fails with a wrong key, and last `PRAGMA cipher_status`, SQLCipher's own word that this
    /// connection encrypts (see ``cipherStatus(schema:)``).
    ///
    /// - Parameters:
    ///   - path: A file path, or `:memory:` for a private in-memory database.
    ///   - key: The key. A new database is encrypted with it.
    ///   - configuration: The open mode, cipher settings and busy timeout.
    /// - Throws: ``SQLCipherError`` of kind ``SQLCipherError/Kind/wrongKeyOrNotADatabase`` when the key does not
    ///   open the file, ``SQLCipherError/Kind/cannotOpen`` when the file cannot be opened,
    ///   ``SQLCipherError/Kind/notSQLCipher`` when the engine is not SQLCipher or does not confirm that the
    ///   connection encrypts,
    ///   ``SQLCipherError/Kind/invalidArgument`` for cipher settings out of range.
    public convenience init(path: String, key: Key, configuration: Database.Configuration = .init())
        throws(SQLCipherError) {
        try self.init(path: path, optionalKey: key, configuration: configuration, preflight: true)
    }

    /// Opens (or creates) the encrypted database at `path` with `key` in `mode`, with SQLCipher 4 settings.
    public convenience init(path: String, key: Key, mode: OpenMode) throws(SQLCipherError) {
        try self.init(path: path, optionalKey: key, configuration: .init(mode: mode), preflight: true)
    }

    /// Opens a database that is *not* encrypted: a plain SQLite file, for example to encrypt it with
    /// ``export(to:key:cipher:replacing:progress:)`` or ``Database/encrypt(path:key:cipher:progress:)``.
    ///
    /// The engine is still SQLCipher and is still checked; only this file is plaintext.
    public convenience init(unencryptedPath path: String, configuration: Database.Configuration = .init())
        throws(SQLCipherError) {
        try self.init(path: path, optionalKey: nil, configuration: configuration, preflight: true)
    }

    /// - Parameter preflight: Whether to read the schema before returning; only ``migrate(path:key:willRun:)`` skips
    ///   it, because its first statement must be `PRAGMA cipher_migrate`.
    init(path: String, optionalKey key: Key?, configuration: Database.Configuration, preflight: Bool)
        throws(SQLCipherError) {
        self.path = path
        self.configuration = configuration
        keyKind = key?.kind
        try Database.requireNoKeyInURI(path)
        sqlGuard = SQLGuard(encrypted: key != nil)
        steppingCounter = sqlGuard.steppingCounter
        try configuration.cipher.validate()
        try configuration.cipher.requireRecoverableSalt(for: key)
        let isFile = path != ":memory:" && !path.isEmpty
        let existedBefore = isFile && access(path, F_OK) == 0
        var status = stat()
        if existedBefore, stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            // SQLite would report a "disk I/O error".
            throw .api(.cannotOpen, "'\(path)' is a directory, not a database file", path: path)
        }
        if isFile && !existedBefore && configuration.mode != .readWriteCreate {
            throw .api(.cannotOpen, "no such file", path: path)
        }
        let inspecting = configuration.leavesFolderAsFound && configuration.mode == .readOnly && existedBefore
        let flags = inspecting ? Database.inspectionFlags(path: path) : configuration.mode.flags
        let handle = try Database.openHandle(path: path, flags: flags)
        self.handle = handle
        // Before the first read, so that the pre-flight read waits for another connection's lock too.
        sqlite3_busy_timeout(handle, Int32(clamping: configuration.busyTimeout.milliseconds))
        interruptHandle = InterruptHandle(handle)
        // Before the first statement, so that every statement of the connection is seen (the key is not SQL).
        observation = configuration.observer.map {
            ConnectionObservation(observer: $0, path: path,
                                  busyTimeoutMilliseconds: Int32(clamping: configuration.busyTimeout.milliseconds))
        }
        observation?.install(on: handle)
        sqlGuard.observed = observation != nil
        checksCancellation = observation != nil
        do throws(SQLCipherError) {
            if let key {
                try applyKey(key, schema: "main")
            }
            try installSQLGuard(encrypted: key != nil)
            sqlGuard.readOnly = configuration.mode == .readOnly
            try trusted { () throws(SQLCipherError) in
                if inspecting || configuration.mode == .readOnly {
                    // Before the first read of the file: no statement on this connection may write (an inspection
                    // opens read-write; a read-only connection could still write a VACUUM INTO copy). SQL text may
                    // not turn it off (SQLGuard.readOnly).
                    try execute("PRAGMA query_only = ON")
                }
                for pragma in configuration.cipher.pragmas(schema: "main") {
                    try execute(pragma)
                }
                if configuration.foreignKeys {
                    try execute("PRAGMA foreign_keys = ON")
                }
            }
            if configuration.verifiesCipherEngine {
                try Engine.requireSQLCipher(self)
            }
            if preflight {
                try readSchemaOnce()
                if key != nil && configuration.verifiesCipherEngine {
                    try requireEncrypting()
                }
                // After the key is proven (the pragma reads page 1, where a wrong key would fail with our SQL).
                if let bytes = configuration.pageCacheSize
                    ?? (key != nil ? Configuration.defaultEncryptedPageCacheSize : nil) {
                    // A negative cache_size is a size in KiB.
                    try execute("PRAGMA main.cache_size = -\(max(1, bytes / 1024))")
                }
                // Durable by default: SQLite's FULL can lose the last commit of a rollback journal to a power cut.
                // After the first read (the pragma reads the schema, which would key the file before the cipher
                // settings and the salt are all in place); a migration's connection, which skips this, is closed
                // once SQLCipher has rewritten the file.
                try trusted { () throws(SQLCipherError) in try applySynchronous(schema: "main") }
            }
        } catch {
            close()
            if isFile && !existedBefore {
                // The open created this file (empty: nothing was written). Leave no trace of a failed open.
                unlink(path)
            }
            throw error
        }
        // From now on the caller holds the connection, and an observer could use it (which it must not): its
        // methods run as the caller's code, so that such SQL meets the whole guard even inside the library's own
        // operations (``trusted(_:)``), whose SQL alone skips it.
        observation?.database = self
    }

    deinit {
        close()
    }

    /// Reads the schema, which decrypts page 1: this is where a wrong key shows, before any write.
    private func readSchemaOnce() throws(SQLCipherError) {
        do {
            try execute("SELECT count(*) FROM sqlite_schema")
        } catch where [.wrongKeyOrNotADatabase, .corrupt, .unsafeSchema].contains(error.kind) {
            // The SQL is ours, not the caller's: leave it out of the error (a truncated file fails here).
            throw SQLCipherError(kind: error.kind, resultCode: error.resultCode,
                                 extendedResultCode: error.extendedResultCode, message: error.message, path: path)
        } catch where error.kind == .sqlite {
            // This SQL cannot fail by itself: a generic error here is the codec failing to set up with this key
            // and these settings (for example, a plaintext header without its salt).
            throw SQLCipherError(kind: .wrongKeyOrNotADatabase, resultCode: error.resultCode,
                                 extendedResultCode: error.extendedResultCode,
                                 message: "SQLCipher could not read the first page with this key and these settings "
                                    + "(\(error.message))", path: path)
        }
    }

    /// Closes the connection. Calling it again does nothing; any later use throws
    /// ``SQLCipherError/Kind/misuse``.
    ///
    /// Called from code the library runs in the middle of one of the connection's operations (an observer's event,
    /// a progress closure), the connection is closed at once for every later call, the operation's included, which
    /// is interrupted and fails. The engine releases the connection (rolling back its transaction, releasing its
    /// locks) never from inside its own call: where the library's operation ends (a transaction's or savepoint's
    /// rollback, a backup's, export's or rekey's failure, the end of a pool's or queue's `async` job), or, for a
    /// statement run outside the library's operations (in a transaction of your own), when its step is over. Closed
    /// where no step runs (an observer's event at a statement's reset, at a transaction's end), it is released at
    /// the connection's next use (which throws ``SQLCipherError/Kind/misuse``), its next `close()`, or its release.
    public func close() {
        releaseDeferredClose()
        guard let handle else { return }
        interruptHandle.invalidate()
        guard sqlGuard.userCodeDepth == 0 else {
            // Found by an attacker: inside a busy wait of sqlite3_rekey_v2, where no statement keeps the connection
            // as a zombie, sqlite3_close_v2 freed it under the rekey; and the statement cache may be mid-change.
            deferredClose = handle
            self.handle = nil
            sqlGuard.handle = nil
            sqlite3_interrupt(handle)
            return
        }
        release(handle)
        self.handle = nil
        sqlGuard.handle = nil
    }

    /// Releases the connection a ``close()`` from caller code left to the engine, once the operation it interrupted
    /// has unwound to the library's own code: no caller code, no step of this connection's on the stack. The library
    /// calls this where its operations end (a scope's rollback, a backup's, an export's, a rekey's failure), at the
    /// end of every checked step, and at the next use of the closed connection. So a library frame never holds the
    /// engine's handle across a statement it runs on a connection the caller can reach: it takes the handle after
    /// (``requireOpenHandle()``), or checks ``stillHolds(_:)`` before it uses it again (a private connection without
    /// an observer, as `migrate`'s, cannot be closed under it).
    func releaseDeferredClose() {
        guard let pending = deferredClose, sqlGuard.userCodeDepth == 0, sqlGuard.steppingDepth == 0 else { return }
        deferredClose = nil
        release(pending)
    }

    /// Finalizes the cached statements (detaching those held elsewhere), removes the library's hooks and closes
    /// `handle`.
    private func release(_ handle: OpaquePointer) {
        // Out of the cache before they are released: a statement finalized here may report to the observer, whose
        // calls must not meet the cache mid-change (found by an attacker: an exclusivity trap).
        var statements = StatementCache()
        swap(&statements, &statementCache)
        statements.removeAll()
        observation?.uninstall(from: handle)
        // Its transaction ends now, its locks with it, though a statement held elsewhere keeps the connection as a
        // zombie (the library's own rollback: the guard's rules and hooks let it through).
        if sqlite3_get_autocommit(handle) == 0 {
            _ = try? controllingTransaction { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
        }
        // The guard's hooks read its memory, freed with the connection: SQLite runs the rollback hook when it finally
        // closes a zombie connection that a statement held elsewhere kept open in a transaction (found by a reviewer).
        // In their place, a commit hook that needs no memory: a closed connection commits nothing (a statement held
        // elsewhere, halted later, would otherwise commit in autocommit mode; found by a second reviewer).
        sqlite3_commit_hook(handle, { _ in 1 }, nil)
        sqlite3_rollback_hook(handle, nil, nil)
        sqlite3_set_authorizer(handle, nil, nil)
        // Its closure's box is released by the frame that set it, which no longer touches a released handle.
        sqlite3_progress_handler(handle, 0, nil, nil)
        // _v2 defers the close until outstanding statements are finalized, so this never fails with BUSY.
        sqlite3_close_v2(handle)
        // A close the observer asked for while the statements were finalized is this one.
        if deferredClose == handle { deferredClose = nil }
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { handle == nil }

    /// Sets how long a statement waits for another connection's lock before failing with
    /// ``SQLCipherError/Kind/busy``; zero fails at once.
    public func setBusyTimeout(_ timeout: Duration) throws(SQLCipherError) {
        let handle = try requireOpenHandle()
        if let observation {
            // Its busy handler waits as sqlite3_busy_timeout's does, and reports each wait.
            observation.busyTimeoutMilliseconds = Int32(clamping: timeout.milliseconds)
        } else {
            sqlite3_busy_timeout(handle, Int32(clamping: timeout.milliseconds))
        }
    }

    /// Interrupts the statement running on this connection (see ``InterruptHandle``).
    public func interrupt() {
        interruptHandle.interrupt()
    }

    /// The handle, or a misuse error once the connection is closed.
    func requireOpenHandle() throws(SQLCipherError) -> OpaquePointer {
        guard let handle else {
            // The caller's next use of a connection its own code closed (at a statement's reset, a commit's event)
            // releases it, if no library operation is under way.
            releaseDeferredClose()
            throw .api(.misuse, "the connection to '\(path)' is closed", path: path)
        }
        return handle
    }

    /// The result of the process's one `sqlite3_initialize` that sets SQLCipher up, run before the first open.
    ///
    /// A Swift static: its first use runs it, and every other thread that uses it meanwhile waits until it has
    /// returned. That matters: SQLite marks itself initialised *before* it runs SQLCipher's set-up
    /// (`SQLITE_EXTRA_INIT`, outside its lock), so a second thread's `sqlite3_initialize` returns at once, and a
    /// key given meanwhile fails ("SQLCipher not initialized"; seen with concurrent first opens). Its result is
    /// set aside: when OpenSSL gives SQLCipher no random bytes (FIPS default properties without a FIPS module),
    /// only this first call fails; SQLite then opens plaintext databases, and keying fails with the reason
    /// (``applyKey(_:schema:)``: ``SQLCipherError/Kind/cryptoProviderFailure``), not as a failed open.
    private static let engineInitialization: Int32 = sqlite3_initialize()

    private static func openHandle(path: String, flags modeFlags: Int32) throws(SQLCipherError) -> OpaquePointer {
        var db: OpaquePointer?
        let flags = modeFlags | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_FULLMUTEX
        _ = engineInitialization
        let code = sqlite3_open_v2(path, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw SQLCipherError(kind: .cannotOpen, resultCode: code & 0xff, extendedResultCode: code,
                                 message: message, path: path)
        }
        sqlite3_extended_result_codes(db, 1)
        return db
    }

    /// Throws ``SQLCipherError/Kind/invalidArgument`` when `path` is a URI with a key parameter (`key=`, `hexkey=`,
    /// `textkey=`): SQLCipher would key the database from it, outside ``Key`` and `sqlite3_key_v2`, and a path is
    /// in logs, errors and events. The error names the path without its query.
    static func requireNoKeyInURI(_ path: String) throws(SQLCipherError) {
        guard SQLGuard.isKeyedURI(path) else { return }
        throw .api(.invalidArgument, "a key in the path's URI (key=, hexkey=, textkey=) is refused: SQLCipher would "
            + "key the database from it, outside Key, and the path appears in logs and errors. Pass the key as a "
            + "Key and the path without it", path: String(path.prefix { $0 != "?" }))
    }

    /// The open flags of a read-only inspection of the existing file at `path` that leaves the folder as it
    /// found it.
    ///
    /// A `SQLITE_OPEN_READONLY` connection to a WAL database creates `-wal` and `-shm` when they are missing
    /// and cannot remove them at close: SQLite removes them only from a connection that can take the
    /// file's exclusive lock, which needs write access. So when none of the side files exists (no other
    /// connection has the database open in WAL mode, and there is no crash to recover) and the file and its
    /// folder are writable, the inspection opens read-write, without `SQLITE_OPEN_CREATE`, and sets
    /// `PRAGMA query_only` before its first read: no statement can write, and at close SQLite's own protocol
    /// removes the `-wal` and `-shm` this connection created, unless another connection has opened the
    /// database meanwhile (then they are that connection's, and its last close removes them). Otherwise the
    /// files it finds belong to someone else (a writer, or a crash to recover): it opens read-only and
    /// touches none of them.
    static func inspectionFlags(path: String) -> Int32 {
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        let sideFiles = ["-wal", "-shm", "-journal"].contains { access(path + $0, F_OK) == 0 }
        guard !sideFiles, access(path, W_OK) == 0, access(folder, W_OK) == 0 else { return SQLITE_OPEN_READONLY }
        return SQLITE_OPEN_READWRITE
    }
}
