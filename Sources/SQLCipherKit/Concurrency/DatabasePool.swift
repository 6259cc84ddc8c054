import Foundation
import Glibc
import Synchronization

/// A write-ahead-log database with one writer and several readers, for servers and apps that read
/// concurrently: readers never wait for the writer, and each read sees one committed snapshot.
///
/// ```swift
/// let pool = try DatabasePool(path: path, key: .passphrase(passphrase))
/// try await pool.write { db in try db.execute("INSERT INTO note(body) VALUES (?)", ["hi"]) }
/// let count = try await pool.read { db in try db.scalar(Int.self, "SELECT count(*) FROM note") }
/// ```
///
/// ## The key is derived once
///
/// SQLCipher derives a passphrase's encryption key with PBKDF2 (256,000 × HMAC-SHA512 by default) on every
/// connection it opens. A pool does it once: it reads the database's salt (the file's first 16 bytes, or
/// ``CipherSettings/salt`` with a plaintext header), derives the raw key with the algorithm and iteration count
/// the cipher settings imply, through libcrypto, and keys every connection with that raw key and salt. The
/// result is byte-for-byte what keying each connection with the passphrase gives. A new database gets its salt
/// from the writer, which is opened with the passphrase first. The derived key is wiped when the pool closes.
///
/// Its connections run in WAL mode with ``Database/Synchronous/extra`` (the same as `FULL` there): every
/// acknowledged write survives a power cut (<doc:Durability>).
///
/// A connection closed while the pool lent it (by the closure's code or its observer: ``Database/close()``), or
/// the writer a failed ``rekey(to:)`` closed, is replaced by a new one with the pool's key before the next work
/// that needs it (not within a writer session or a group commit, whose transaction the closed writer ended). The
/// work that closed it fails with ``SQLCipherError/Kind/misuse`` when something of it was left to do on the
/// connection, such as its transaction's commit.
///
/// - Important: Do not call the pool (``read(_:)-85cly``, ``write(_:)-94hpm``, ``barrierWrite(_:)``, ``rekey(to:)``)
///   from inside one of its own closures: use the ``Database`` the closure receives. A nested call would wait
///   for a connection the outer call holds, so it throws ``SQLCipherError/Kind/misuse`` at once instead. A
///   nested ``close()`` marks the pool closed and returns; a thread of its own closes the connections once no
///   work holds them.
public final class DatabasePool: @unchecked Sendable {
    /// How a pool opens its connections.
    public struct Configuration: Sendable {
        /// The number of reader connections. Default: 4.
        public var readerCount: Int
        /// Cipher settings and busy timeout for every connection (the mode is chosen by the pool).
        public var database: Database.Configuration
        /// How long a call waits for the writer while other work holds it before it fails with
        /// ``SQLCipherError/Kind/timedOut``; nil waits without limit. Default: 60 seconds.
        ///
        /// The limit turns a wait that can never end into an error that says so: a ``WriterSession`` holds the
        /// writer across `await`s, so a session awaiting work that itself waits for the writer would otherwise
        /// hang silently. Closing the pool waits without limit.
        public var writerWaitTimeout: Duration?
        /// How `async` ``DatabasePool/write(_:)-94hpm`` calls that wait together share one commit (one fsync).
        /// Default: on (``GroupCommit/default``); ``GroupCommit/off`` commits each write on its own.
        public var groupCommit: GroupCommit

        /// A configuration with `readerCount` readers.
        public init(readerCount: Int = 4, database: Database.Configuration = .init(),
                    writerWaitTimeout: Duration? = .seconds(60), groupCommit: GroupCommit = .default) {
            self.readerCount = readerCount
            self.database = database
            self.writerWaitTimeout = writerWaitTimeout
            self.groupCommit = groupCommit
        }
    }

    /// The database file's path.
    public let path: String
    /// The configuration the pool was opened with.
    public let configuration: Configuration
    /// Whether the database is encrypted: false only for a pool opened with
    /// ``init(unencryptedPath:configuration:)``.
    public let isEncrypted: Bool

    // Invariants that make the class Sendable: `writer` is only used while `writerGate` is held, by one thread
    // at a time; a reader is used only by the thread that took it from `readers`; `isClosed` and `key` change
    // only with the writer gate and every reader permit held (see `exclusively`).
    let writerGate: WriterGate
    private var writer: Database?
    /// Set when the writer gate was released with the writer closed (``releaseWriter()``); guarded by the gate too.
    private var writerReplacementDue = false
    /// Runs the work of `async` calls: one thread per connection at most (see ``WorkerThreads``).
    let workers: WorkerThreads
    /// Groups `async` writes that wait together into one commit (``Configuration/groupCommit``).
    private let writeGroups: WriteGroups
    private let readers: ReaderPool
    private var key: Key?
    /// Set once by ``close()``.
    private let closed = OneWayFlag()
    // Thread-safe without the writer lock, which running work holds: close must reach that work.
    private let writerInterrupt: Mutex<InterruptHandle>

    /// Opens the pool: the writer (switching the database to WAL), then the readers.
    ///
    /// - Throws: ``SQLCipherError/Kind/wrongKeyOrNotADatabase`` when the key does not open the file;
    ///   ``SQLCipherError/Kind/invalidArgument`` for a reader count below 1 or a plaintext header without a salt.
    public convenience init(path: String, key: Key, configuration: Configuration = .init()) throws(SQLCipherError) {
        try self.init(path: path, optionalKey: key, configuration: configuration)
    }

    /// Opens a pool on a database that is *not* encrypted: a plain SQLite file, read and written as plaintext.
    ///
    /// ```swift
    /// let pool = try DatabasePool(unencryptedPath: "/var/cache/app/lookup.db")
    /// ```
    ///
    /// Plaintext only because the caller named it: no key, no cipher settings (a configuration's
    /// ``Database/Configuration/cipher`` is not used). The engine is still SQLCipher and is still checked, every
    /// connection still runs in WAL mode with ``Database/Synchronous/extra``, and the same SQL guard refuses
    /// what it refuses on any connection (the key pragmas, `ATTACH` in SQL text). ``rekey(to:)`` and
    /// ``backup(to:key:replacing:progress:)`` are refused with ``SQLCipherError/Kind/misuse``: encrypt the file
    /// with ``Database/encrypt(path:key:cipher:progress:)`` while no pool has it open, or write an encrypted copy with
    /// ``Database/export(to:key:cipher:replacing:progress:)``.
    ///
    /// - Throws: ``SQLCipherError/Kind/wrongKeyOrNotADatabase`` when the file is encrypted or not a database;
    ///   ``SQLCipherError/Kind/invalidArgument`` for a reader count below 1.
    public convenience init(unencryptedPath path: String, configuration: Configuration = .init())
        throws(SQLCipherError) {
        var configuration = configuration
        configuration.database.cipher = .init()
        try self.init(path: path, optionalKey: nil, configuration: configuration)
    }

    /// Opens the pool with `key`, or unencrypted when `key` is nil.
    private init(path: String, optionalKey key: Key?, configuration: Configuration) throws(SQLCipherError) {
        guard configuration.readerCount >= 1 else {
            throw .api(.invalidArgument, "a pool needs at least one reader, not \(configuration.readerCount)")
        }
        guard path != ":memory:", !path.isEmpty else {
            throw .api(.invalidArgument, "a pool needs a database file: in-memory databases are private to one connection")
        }
        try Database.requireNoKeyInURI(path)
        try configuration.groupCommit.validate()
        writeGroups = WriteGroups(limits: configuration.groupCommit)
        self.path = path
        self.configuration = configuration
        isEncrypted = key != nil
        let observer = configuration.database.observer
        let marking = PoolReference()
        writerGate = WriterGate(path: path, released: Self.writerReleased(observer: observer, path: path, marking: marking),
                                pendingChanged: Self.writerQueueChanged(observer: observer, path: path,
                                                                        marking: marking))
        workers = WorkerThreads(limit: configuration.readerCount + 1, name: "SQLCipherKit.DatabasePool")
        let existedBefore = access(path, F_OK) == 0
        let settings = configuration.database.cipher
        var writerConfiguration = configuration.database
        writerConfiguration.mode = .readWriteCreate

        let writer: Database
        let connectionKey: Key?
        if let key, key.kind == .passphrase {
            if let salt = try DatabasePool.existingSalt(path: path, settings: settings) {
                do {
                    let derived = try KeyDerivation.rawKey(from: key, salt: salt, settings: settings)
                    writer = try Database(path: path, optionalKey: derived, configuration: writerConfiguration,
                                          preflight: true)
                    connectionKey = derived
                } catch where error.kind == .wrongKeyOrNotADatabase && settings.salt == nil {
                    // The file's first 16 bytes are not always the salt the engine uses: after a crash in the middle
                    // of a checkpoint they can be torn while the WAL holds page 1 whole, and the engine reads the
                    // salt from there (the pin's local change kdf-salt-from-wal). Open with the passphrase, as any
                    // connection would, and derive once with the salt the engine found; a wrong passphrase fails here
                    // again, with the same error.
                    writer = try Database(path: path, key: key, configuration: writerConfiguration)
                    connectionKey = try KeyDerivation.rawKey(from: key, salt: try writer.cipherSalt(), settings: settings)
                }
            } else {
                // A new database: the writer creates the salt, then the key is derived with it.
                writer = try Database(path: path, key: key, configuration: writerConfiguration)
                try writer.setJournalMode(.wal)
                connectionKey = try KeyDerivation.rawKey(from: key, salt: try writer.cipherSalt(), settings: settings)
            }
        } else {
            // A raw key (no derivation to share), or no key at all.
            connectionKey = key
            writer = try Database(path: path, optionalKey: key, configuration: writerConfiguration, preflight: true)
        }
        if try writer.journalMode() != .wal {
            try writer.setJournalMode(.wal)
        }
        self.writer = writer
        self.key = connectionKey
        writerInterrupt = Mutex(writer.interruptHandle)

        var readerConfiguration = configuration.database
        readerConfiguration.mode = .readOnly
        do {
            readers = try ReaderPool(count: configuration.readerCount) { () throws(SQLCipherError) in
                try Database(path: path, optionalKey: connectionKey, configuration: readerConfiguration, preflight: true)
            }
        } catch {
            writer.close()
            if !existedBefore {
                // The pool created this database; a failed open leaves nothing behind.
                FileReplacement.remove(path)
            }
            throw error
        }
        marking.pool = self
    }

    /// The salt of an existing, non-empty database file (its first 16 bytes, which the engine confirms when the pool
    /// opens), or nil for a new one.
    static func existingSalt(path: String, settings: CipherSettings) throws(SQLCipherError) -> [UInt8]? {
        if let headerSize = settings.plaintextHeaderSize, headerSize > 0 {
            guard let salt = settings.salt else {
                throw .api(.invalidArgument, "a plaintext header keeps the salt out of the file: pass CipherSettings.salt")
            }
            return salt
        }
        if let salt = settings.salt { return salt }
        // Through SQLite's VFS: a close of our own descriptor would drop the locks other connections of this
        // process hold on the file (FileHeader).
        return try FileHeader.read(path: path, count: Key.saltLength)
    }

    // MARK: Access

    /// Runs `body` on the writer, in a transaction: committed when it returns, rolled back when it throws.
    /// Writes are serialized; readers keep reading meanwhile.
    public func write<Result>(_ body: (Database) throws -> Result) throws -> Result {
        try marked("DatabasePool.write") {
            try withWriter { database in try database.transaction(.immediate) { try body(database) } }
        }
    }

    /// ``write(_:)`` for a caller that holds the writer gate already (the `async` variants).
    private func writeHoldingGate<Result>(_ body: (Database) throws -> Result) throws -> Result {
        try marked("DatabasePool.write") {
            try withGateHeld { database in try database.transaction(.immediate) { try body(database) } }
        }
    }

    /// Runs `body` on a reader, in a read transaction: it sees the last committed state, unaffected by writes
    /// that commit meanwhile. Blocks while every reader is busy.
    public func read<Result>(_ body: (Database) throws -> Result) throws -> Result {
        try marked("DatabasePool.read") {
            try checkOpen()
            let observer = configuration.database.observer
            return try readers.withReader(acquired: observer.map { observer in
                { [path] wait, inUse, capacity, sequence in
                    observer.readerAcquired(PoolWaitEvent(path: path, wait: wait, queueDepth: 0, inUse: inUse,
                                                          capacity: capacity, sequence: sequence,
                                                          context: ObservationContext.current ?? observer.currentContext()))
                }
            }, released: observer.map { observer in
                { [path] inUse, capacity, sequence in
                    observer.connectionReleased(PoolReleaseEvent(path: path, role: .reader, inUse: inUse,
                                                                 capacity: capacity, sequence: sequence))
                }
            }, replacement: openReader) { database in
                try checkOpen()
                return try database.transaction(.deferred) { try body(database) }
            }
        }
    }

    /// Runs `body` on the writer while no reader runs: it waits for running reads to finish and holds new ones
    /// back until it returns (for schema changes that readers must not see half-done, or a rekey).
    public func barrierWrite<Result>(_ body: (Database) throws -> Result) throws -> Result {
        try marked("DatabasePool.barrierWrite") {
            try withWriter { database in
                try readers.withAllReaders { _ in
                    try database.transaction(.immediate) { try body(database) }
                }
            }
        }
    }

    /// ``write(_:)`` for `async` callers; cancelling the task stops its work, which is rolled back.
    ///
    /// The task waits for the writer without holding a thread, for at most
    /// ``Configuration/writerWaitTimeout``; then one of the pool's worker threads runs `body`. Writes that wait
    /// together share one commit (``Configuration/groupCommit``, on by default): each returns only once the commit
    /// holding its work is durable, and one that fails, fails alone (``Configuration/GroupCommit``).
    public func write<Result: Sendable>(_ body: @escaping @Sendable (Database) throws -> Result) async throws -> Result {
        try checkNotInSession("DatabasePool.write")
        try checkOpen()
        if writeGroups.limits.isEnabled {
            return try await writeGroups.submit(to: self, body)
        }
        try await acquireWriter()
        // The job always runs its closure (a cancelled one skips only the body), which gives the gate back on the
        // worker thread, before the task resumes: a task that shares this one's executor may be blocked in a close()
        // from outside, which waits for the gate (found by an attacker).
        return try await AsyncJob.run(on: workers, observer: configuration.database.observer, owner: self,
                                      path: path) { job in
            defer { self.releaseWriter() }
            return try self.writeHoldingGate { database in try job.perform(on: database, body) }
        }
    }

    /// ``read(_:)`` for `async` callers; cancelling the task interrupts its statement.
    public func read<Result: Sendable>(_ body: @escaping @Sendable (Database) throws -> Result) async throws -> Result {
        try await AsyncJob.run(on: workers, observer: configuration.database.observer, owner: self, path: path) { job in
            try self.read { database in try job.perform(on: database, body) }
        }
    }

    // MARK: Rekey and close

    /// Re-encrypts the database with `newKey`: waits for all work to finish, rekeys on the writer, then reopens
    /// the readers with the new key (a passphrase is derived once again, with the database's salt).
    public func rekey(to newKey: Key) throws(SQLCipherError) {
        try checkNotInSession("DatabasePool.rekey(to:)")
        try ReentrancyMarker.runTyped(self, "DatabasePool.rekey(to:)", path: path) { () throws(SQLCipherError) in
            try rekeyExclusively(to: newKey)
        }
    }

    private func rekeyExclusively(to newKey: Key) throws(SQLCipherError) {
        try exclusively { () throws(SQLCipherError) in
            // Closed while the rekey waited for the connections (found by an attacker: it went on, and reopened the
            // readers after the close had begun).
            try checkOpen()
            replaceClosedWriter()
            guard let writer else { throw .api(.misuse, "the pool is closed", path: path) }
            guard isEncrypted else {
                throw .api(.misuse, """
                    a pool opened with DatabasePool(unencryptedPath:) has no key to change: close it and encrypt \
                    the file with Database.encrypt(path:key:cipher:)
                    """, path: path)
            }
            let salt = try writer.cipherSalt()
            let connectionKey = try KeyDerivation.rawKey(from: newKey, salt: salt, settings: configuration.database.cipher)
            var committed = false
            do throws(SQLCipherError) {
                try writer.rekey(to: connectionKey, committed: &committed)
            } catch {
                // Failed after its commit (the read-back check, or its observer closed the writer): the file is
                // under the new key, which the pool takes for the connections it opens (found by a reviewer: the
                // replacement writer would open with the old key, and fail, for good).
                if committed {
                    key = connectionKey
                    if !closed.isSet { try? reopenReaders(with: connectionKey) }
                }
                throw error
            }
            key = connectionKey
            // Closed from the rekey's own events: the readers are not reopened, and the close closes them.
            if !closed.isSet { try reopenReaders(with: connectionKey) }
        }
    }

    /// Replaces every reader with a connection keyed with `connectionKey` (call holding them all).
    private func reopenReaders(with connectionKey: Key) throws(SQLCipherError) {
        var readerConfiguration = configuration.database
        readerConfiguration.mode = .readOnly
        let path = self.path
        try readers.reopenAll { () throws(SQLCipherError) in
            try Database(path: path, key: connectionKey, configuration: readerConfiguration)
        }
    }

    /// Closes every connection, and wipes the derived key once they are closed. Running statements are interrupted
    /// (their work fails with ``SQLCipherError/Kind/interrupted``); work that has not started fails with
    /// ``SQLCipherError/Kind/misuse``, as does any later use.
    ///
    /// It waits until no work holds a connection: from a task, it blocks the task's thread meanwhile. A later call
    /// from outside the pool's work waits too, and interrupts what still runs.
    ///
    /// Called from inside the pool's own work (a closure it runs, its observer's events, a writer session running),
    /// it marks the pool closed and returns at once: waiting there would wait for the connection that work holds. A
    /// thread of its own then closes the connections once no work holds them, without interrupting any: the work
    /// that asked goes on to its end (a write's closure commits), and work that starts later fails with
    /// ``SQLCipherError/Kind/misuse`` (in a writer session, its later statements: its transaction is rolled back). (Performing the close at the end of the outer call instead, on the caller's
    /// thread, deadlocked in one way after another: found by attackers and reviewers in stops 62 to 64.) Work that
    /// needs the file released (to delete, encrypt or reopen it) calls `close()` again from outside.
    ///
    /// Do not call it, from outside, where it would wait for a connection the caller's own work holds (a thread or
    /// a detached task that a closure of the pool waits for), nor from a task whose executor a running writer
    /// session needs to go on (an executor of one thread that the session's task also prefers).
    public func close() {
        let nested = ReentrancyMarker.isActive(self)
            || (WriterSession.isActive(in: self) && sessionsRunning.withLock { $0 > 0 })
        if !nested { _ = interruptsRunningWork.set() }
        guard closed.set() else {
            if !nested { connectionsClosed.wait() }
            return
        }
        if nested {
            Thread.detachNewThread { self.closeConnections() }
            return
        }
        closeConnections()
    }

    /// Opened once the connections are closed.
    private let connectionsClosed = OneWayLatch()
    /// Set by a close from outside the pool's work: the close interrupts what runs on the connections (a nested
    /// close's thread does too, once a later close from outside sets it).
    private let interruptsRunningWork = OneWayFlag()
    /// The writer sessions running: a task a session started keeps the session's mark after it ended.
    private let sessionsRunning = Mutex(0)

    /// A writer session got the writer, or ended.
    func sessionRunning(_ running: Bool) {
        sessionsRunning.withLock { $0 += running ? 1 : -1 }
    }

    /// Runs `body` as work of this pool on this thread (see ``ReentrancyMarker``): a ``close()`` inside it is nested.
    private func marked<Result>(_ description: String, _ body: () throws -> Result) throws -> Result {
        try ReentrancyMarker.run(self, description, path: path, body)
    }

    /// Closes every connection, once it holds the writer gate and every reader; what runs on them meanwhile is
    /// interrupted once ``interruptsRunningWork`` is set. Opens ``connectionsClosed`` at the end. Runs as the pool's
    /// work: a close from an event it causes (its statement, the gate's release) is nested, and does not wait for
    /// this very close (found by a reviewer: a deadlock).
    private func closeConnections() {
        defer { connectionsClosed.open() }
        // Keep interrupting what runs on the connections until the pool holds them all (Interrupter).
        let interrupter = Interrupter(writer: { [unowned self] in writerInterrupt.withLock { $0 } },
                                      readers: readers, active: interruptsRunningWork)
        Thread.detachNewThread { interrupter.run() }
        defer { interrupter.stop() }
        ReentrancyMarker.runAsWork(of: self, "DatabasePool.close()", path: path) {
            try? exclusively { () throws(SQLCipherError) in
                // Nothing runs now. Stop interrupting first: an interrupt makes the close's checkpoint give up, which
                // leaves the -wal file behind (seen: 35 of 40 runs of the driver's wrong-key test). SQLite also keeps
                // an interrupt that reached an idle connection until that connection's next statement starts, so the
                // writer runs one to clear it.
                interrupter.stop()
                _ = try? writer?.textValue("SELECT 1")
                openWriterToCloseLast()
                // Readers first: the last connection to close checkpoints the WAL into the database and removes the
                // -wal and -shm files, which only a read-write connection can do. Left behind, the next connection to
                // open the file (even one with a wrong key) would checkpoint them when it closes.
                readers.closeAll()
                writer?.close()
                writer = nil
                key = nil
            }
        }
    }

    /// When the writer is closed (its work, or an interrupted rekey, closed it), opens one for the close: the last
    /// connection to close checkpoints the WAL and removes the -wal and -shm files, which only a read-write
    /// connection can do (found by an attacker: a close that interrupted a rekey left the -wal file behind).
    private func openWriterToCloseLast() {
        guard writer?.isClosed != false, key != nil || !isEncrypted else { return }
        if let fresh = openWriterConnection() { writer = fresh }
    }

    /// The kinds of key the writer and the readers were opened with (for tests).
    var connectionKeyKinds: (writer: Key.Kind?, readers: [Key.Kind?]) {
        (try? withWriter { $0.keyKind }, readers.keyKinds)
    }

    /// The `async` writes queued for a group commit, the one whose task leads included (for tests).
    var groupCommitQueueCount: Int { writeGroups.queuedCount }
    /// The groups committed so far and the writes they held (for tests).
    var groupCommitStatistics: (groups: Int, writes: Int) { writeGroups.statistics }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { closed.isSet }

    func checkOpen() throws(SQLCipherError) {
        if closed.isSet { throw .api(.misuse, "the pool is closed", path: path) }
    }

    /// Throws ``SQLCipherError/Kind/misuse`` when the calling task runs a writer session of this pool: the call
    /// would wait for the writer the session holds.
    func checkNotInSession(_ description: String) throws(SQLCipherError) {
        guard WriterSession.isActive(in: self) else { return }
        throw .api(.misuse, "\(description) was called inside a writer session of the same pool, which holds the "
            + "writer it would wait for (a deadlock). Use the session's execute(_:) instead", path: path)
    }

    /// What the writer gate tells at each release, for `observer`, as the pool's work (`marking`'s): a close there
    /// is nested (found by a reviewer: an async write's release is reported outside its work, where a close would
    /// wait for the next holder of the gate).
    private static func writerReleased(observer: (any DatabaseObserver)?, path: String, marking: PoolReference)
        -> (@Sendable (Int, UInt64) -> Void)? {
        guard let observer else { return nil }
        return { inUse, sequence in
            ReentrancyMarker.runAsWork(of: marking.pool, "DatabasePool's observer", path: path) {
                observer.connectionReleased(PoolReleaseEvent(path: path, role: .writer, inUse: inUse, capacity: 1,
                                                             sequence: sequence))
            }
        }
    }

    /// What the writer gate tells when the writes waiting for the writer change, for `observer` (on the thread or
    /// task that changed them, with its context), as the pool's work (`marking`'s): the wait may be queued already,
    /// and a close there would queue behind it (found by a reviewer: a deadlock); marked, it is nested
    /// (``close()``).
    private static func writerQueueChanged(observer: (any DatabaseObserver)?, path: String, marking: PoolReference)
        -> (@Sendable (Int, UInt64) -> Void)? {
        guard let observer else { return nil }
        return { depth, sequence in
            let report = {
                observer.writerQueueChanged(PoolQueueEvent(path: path, queueDepth: depth, sequence: sequence,
                                                           context: ObservationContext.current ?? observer.currentContext()))
            }
            ReentrancyMarker.runAsWork(of: marking.pool, "DatabasePool's observer", path: path, report)
        }
    }

    /// Takes the writer gate for an `async` caller (waiting at most ``Configuration/writerWaitTimeout``), and reports
    /// the wait to the observer with the caller's context, as work of the pool: a ``close()`` there is nested (found
    /// by an attacker: the close waited for the gate this task held, a deadlock).
    func acquireWriter() async throws(SQLCipherError) {
        let started = configuration.database.observer.map { _ in ContinuousClock.now }
        try await writerGate.acquire(timeout: configuration.writerWaitTimeout)
        if let started {
            // No await in between: the mark and the report are on one thread. Already the pool's work there (a write
            // started without suspending from inside a read's closure), the close is nested in that work.
            ReentrancyMarker.runAsWork(of: self, "DatabasePool's observer", path: path) {
                reportWriterAcquired(waitingSince: started)
            }
        }
    }

    /// Reports that a write got the writer after waiting since `started`, with the current context. The caller holds
    /// the writer gate: the writer is its own to mark, and the observer may run no SQL on it.
    func reportWriterAcquired(waitingSince started: ContinuousClock.Instant) {
        guard let observer = configuration.database.observer else { return }
        let report = { [path, writerGate] in
            let (depth, sequence) = writerGate.numberedPending
            observer.writerAcquired(PoolWaitEvent(
                path: path, wait: ContinuousClock.now - started, queueDepth: depth, inUse: 1, capacity: 1,
                sequence: sequence, context: ObservationContext.current ?? observer.currentContext()))
        }
        if let writer { writer.callingUserCode(runsNoSQL: true, report) } else { report() }
    }

    /// Runs `body` on the writer, taking the writer gate for it (waiting at most
    /// ``Configuration/writerWaitTimeout``).
    private func withWriter<Result>(_ body: (Database) throws -> Result) throws -> Result {
        try checkNotInSession("DatabasePool.write")
        try checkOpen()
        let started = configuration.database.observer.map { _ in ContinuousClock.now }
        try writerGate.acquire(timeout: configuration.writerWaitTimeout)
        defer { releaseWriter() }
        if let started { reportWriterAcquired(waitingSince: started) }
        return try withGateHeld(body)
    }

    /// Runs `body` on the writer as the pool's write work (nested pool calls refused, a close nested); the caller
    /// holds the writer gate. For ``WriteGroups``, whose transaction is its own.
    func withWriterForGroup(_ body: (Database) throws -> Void) throws {
        try marked("DatabasePool.write") {
            try withGateHeld(body)
        }
    }

    /// Runs `body` on the writer; the caller holds the writer gate.
    func withGateHeld<Result>(_ body: (Database) throws -> Result) throws -> Result {
        try checkOpen()
        replaceClosedWriter()
        guard let writer else { throw SQLCipherError.api(.misuse, "the pool is closed", path: path) }
        return try body(writer)
    }

    /// Releases the writer gate. A writer closed while the gate was held (by the work's own code or its observer, or
    /// by a failed rekey) is replaced by the next holder, before its work and on the thread that runs it (a pool's
    /// worker for `async` calls: opening a connection blocks), never inside a writer session or a group commit,
    /// whose transaction it was (found by an attacker: the pool kept failing with "closed" on it until it closed).
    func releaseWriter() {
        if writer?.isClosed == true { writerReplacementDue = true }
        writerGate.release()
    }

    /// Opens a new writer in place of a closed one, with the pool's key; called holding the writer gate, before its
    /// holder's work. Not while the pool closes. A writer that does not open stays, closed: the work fails with
    /// misuse, and the next holder tries again.
    private func replaceClosedWriter() {
        guard writerReplacementDue else { return }
        guard let current = writer, current.isClosed, !closed.isSet else {
            writerReplacementDue = false
            return
        }
        guard let fresh = openWriterConnection() else { return }
        writer = fresh
        writerInterrupt.withLock { $0 = fresh.interruptHandle }
        writerReplacementDue = false
    }

    /// A new read-write connection with the pool's key, or nil when it does not open.
    private func openWriterConnection() -> Database? {
        var writerConfiguration = configuration.database
        writerConfiguration.mode = .readWrite
        return try? Database(path: path, optionalKey: key, configuration: writerConfiguration, preflight: true)
    }

    /// A reader in place of one its user closed. Called holding a reader permit: `key` changes only with all of them
    /// held.
    private func openReader() throws(SQLCipherError) -> Database {
        try checkOpen()
        var readerConfiguration = configuration.database
        readerConfiguration.mode = .readOnly
        return try Database(path: path, optionalKey: key, configuration: readerConfiguration, preflight: true)
    }

    /// Runs `body` holding the writer and every reader (close waits for the writer without limit).
    private func exclusively(_ body: () throws(SQLCipherError) -> Void) throws(SQLCipherError) {
        try writerGate.acquire(timeout: closed.isSet ? nil : configuration.writerWaitTimeout, counted: false)
        defer { releaseWriter() }
        try readers.withAllReadersTyped { () throws(SQLCipherError) in try body() }
    }

    deinit {
        workers.stop()
    }
}

/// Interrupts a closing pool's connections every 10 ms while `active` is set, from a thread of its own, until
/// ``stop()``: a statement that starts just after one interrupt (the call is a no-op while nothing runs) is caught by
/// the next. ``stop()`` returns only once no interrupt can land any more.
private final class Interrupter: Sendable {
    /// The writer's handle, read at each turn: a writer opened in place of a closed one has a handle of its own.
    private let writer: @Sendable () -> InterruptHandle
    private let readers: ReaderPool
    private let running = Mutex(true)
    /// Interrupts only while this is set (a close from outside the pool's work set it).
    private let active: OneWayFlag

    init(writer: @escaping @Sendable () -> InterruptHandle, readers: ReaderPool, active: OneWayFlag) {
        self.writer = writer
        self.readers = readers
        self.active = active
    }

    func run() {
        while running.withLock({ running in
            if running, active.isSet {
                writer().interrupt()
                readers.interruptAll()
            }
            return running
        }) {
            usleep(10_000)
        }
    }

    func stop() {
        running.withLock { $0 = false }
    }
}

/// The pool a closure made before the pool's own initialization ends refers to, once it has (weakly: the pool
/// owns the closure).
final class PoolReference: @unchecked Sendable {
    // Set once, at the end of the pool's initialization, before any of its work runs.
    weak var pool: DatabasePool?
}
