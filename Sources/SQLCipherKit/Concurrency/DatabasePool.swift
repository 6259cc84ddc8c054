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
///   nested ``close()`` marks the pool closed and returns; the connections close when the outer call ends.
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
        writerGate = WriterGate(path: path, released: Self.writerReleased(observer: observer, path: path),
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
        try marked("DatabasePool.write", closesWhenDone: false) {
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
        let askedAtAcquire = try await acquireWriter()
        // Whether the write's work asked a close, on the thread that ran it (a reviewer: the pool's being closed
        // meanwhile also comes from other callers, whose close this write must neither take nor wait for).
        let askedInWork = Mutex(false)
        let outcome: Swift.Result<Result, any Error>
        do {
            // The job has finished when this returns (even when the task was cancelled): the gate is free to go.
            outcome = .success(try await AsyncJob.run(on: workers, observer: configuration.database.observer) { job in
                let wasOpen = !self.closed.isSet
                defer { if self.closeAsked(onThisThreadSince: wasOpen) { askedInWork.withLock { $0 = true } } }
                return try self.writeHoldingGate { database in try job.perform(on: database, body) }
            })
        } catch {
            outcome = .failure(error)
        }
        // A close the work asked is taken while the gate is still held, and handed that gate.
        let asked = askedAtAcquire || askedInWork.withLock { $0 }
        if takeCloseRequest(.asyncCall(askedByWork: asked)) {
            // The close gets the gate this write holds: a writer session queued at the gate, awaiting this write,
            // would otherwise hold it while the close waited for it (a reviewer: a deadlock without a time limit).
            await performTakenClose(holdingGate: true)
        } else {
            releaseWriter()
            if asked { await awaitClosing() }
        }
        return try outcome.get()
    }

    /// ``read(_:)`` for `async` callers; cancelling the task interrupts its statement.
    public func read<Result: Sendable>(_ body: @escaping @Sendable (Database) throws -> Result) async throws -> Result {
        try await AsyncJob.run(on: workers, observer: configuration.database.observer) { job in
            try self.read { database in try job.perform(on: database, body) }
        }
    }

    // MARK: Rekey and close

    /// Re-encrypts the database with `newKey`: waits for all work to finish, rekeys on the writer, then reopens
    /// the readers with the new key (a passphrase is derived once again, with the database's salt).
    public func rekey(to newKey: Key) throws(SQLCipherError) {
        try checkNotInSession("DatabasePool.rekey(to:)")
        // A close from the rekey's events takes effect when it ends (found by an attacker: not before the next call).
        defer { closeIfRequested() }
        try ReentrancyMarker.runTyped(self, "DatabasePool.rekey(to:)", path: path) { () throws(SQLCipherError) in
            try rekeyExclusively(to: newKey)
        }
    }

    private func rekeyExclusively(to newKey: Key) throws(SQLCipherError) {
        try exclusively { () throws(SQLCipherError) in
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
                    try? reopenReaders(with: connectionKey)
                }
                throw error
            }
            key = connectionKey
            try reopenReaders(with: connectionKey)
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

    /// Closes every connection. Running statements are interrupted (their work fails with
    /// ``SQLCipherError/Kind/interrupted``); work that has not started fails with
    /// ``SQLCipherError/Kind/misuse``, as does any later use. The derived key is wiped.
    ///
    /// It waits until no work holds a connection: from a task, it blocks the task's thread meanwhile. Called from
    /// inside the pool's own work (a closure it runs, its observer's events, a writer session), it marks the pool
    /// closed at once and closes the connections when that work ends: the call that ran the work returns once they
    /// are closed (an `async` call awaits the close, which runs on a thread of its own, not on the task's), unless a
    /// writer session holds the writer then: the connections are closed when that session ends.
    public func close() {
        guard closed.set() else { return }
        let inSession = WriterSession.isActive(in: self), nested = ReentrancyMarker.isActive(self)
        let fromEvent = nested && ReentrancyMarker.isEvent(of: self)
        // Judged and asked under one lock: a session that ends meanwhile either sees the request or is seen ended (a
        // reviewer: a task the session started could store a request after the session's end had looked for one).
        let deferred = closeState.withLock { state -> Bool in
            if inSession, state.sessionsRunning > 0 {
                // Inside a writer session: only its end may close, since other work it awaits (a read on a pool
                // thread) would wait for the writer it holds (found by a reviewer: a deadlock).
                state.request = .whenSessionEnds
                return true
            }
            if nested {
                // Called from one of the pool's own closures: waiting for every connection here would wait for the
                // one this thread holds. The outer call closes the pool when it ends.
                state.request = .whenIdle
                state.asker = pthread_self()
                state.askedFromEvent = fromEvent
                return true
            }
            return false
        }
        if !deferred { closeConnections() }
    }

    /// A nested ``close()`` waiting to be performed.
    private enum CloseRequest {
        /// By the outermost call of the pool's work on the thread that asked, once it holds nothing of the pool's (for
        /// an `async` write or a group, its end); asked from one of the pool's own events, by the next call that
        /// ends (``CloseTaker``).
        case whenIdle
        /// By the end of the writer session inside which it was asked, or that ran when it was to be performed.
        case whenSessionEnds
    }

    /// Who asks to perform a nested close, and so which requests it takes (``takeCloseRequest(_:)``).
    enum CloseTaker {
        /// The outermost call of the pool's work on this thread, as it ends (a blocking call): a request its own work
        /// asked on this thread.
        case outermostCall
        /// The end of an `async` call (a write, a group's lead, a wait that failed): a request its work asked
        /// (`askedByWork`, known to the call: the thread its work ran on).
        case asyncCall(askedByWork: Bool)
        /// The end of a writer session: a request asked inside it, or waiting for it.
        case sessionEnd
    }

    /// The close's progress: a nested request waiting to be performed, who asked it, whether the connections are
    /// being closed (by ``closeConnections(holdingGate:)``, or by whoever took the request), and the tasks waiting for
    /// that to end; and the writer sessions running (0 or 1: a session holds the writer): a task a session started
    /// keeps its mark after the session ends, and its close is then not nested.
    private struct CloseState {
        var request: CloseRequest?
        /// The thread whose work asked the nested close (set once: one ``close()`` gets past the closed flag).
        var asker: pthread_t?
        /// Whether it was asked from one of the pool's own events, outside any call's work (a waiting write's
        /// `writerQueueChanged`, an `async` write's `writerAcquired`): no call of the asker's ends after it on that
        /// thread, so any caller that ends may perform it.
        var askedFromEvent = false
        var sessionsRunning = 0
        var closing = false
        var closed = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let closeState = Mutex(CloseState())

    /// A writer session got the writer.
    func sessionStarted() {
        closeState.withLock { $0.sessionsRunning += 1 }
    }

    /// A writer session ended, before it gives the writer back: returns whether it took a close to perform (one asked
    /// inside it, or that waited for it: ``takeCloseRequest(_:)``), under one lock with its end, so that a close asked
    /// by a task it started is either taken here or not nested (a reviewer).
    func sessionEnded() -> Bool {
        closeState.withLock { state in
            state.sessionsRunning -= 1
            return Self.take(.sessionEnd, from: &state)
        }
    }

    /// Closes the connections if a nested ``close()`` asked for it and this call, the outermost of the pool's work on
    /// this thread, may perform it. The request is taken under one lock: one caller performs it.
    func closeIfRequested() {
        if takeCloseRequest(.outermostCall) { closeConnections() }
    }

    /// Performs a close asked from one of the pool's events, for an `async` caller that holds nothing of the pool's
    /// (its wait for the writer failed): on a thread of its own (``performTakenClose(holdingGate:)``).
    func awaitRequestedClose() async {
        if takeCloseRequest(.asyncCall(askedByWork: false)) { await performTakenClose() }
    }

    /// Takes the pending close request if `taker` may perform it (none from inside the pool's own work); from then on
    /// the pool counts as closing (``awaitClosing()``). A caller that takes it must perform it. A caller takes only
    /// what its own work asked (found by a reviewer: a write took a close a read closure had asked, then waited for
    /// that closure's reader, which waited for the write), or a close asked from an event. While a writer session
    /// holds the writer, which the close would wait for, the request waits for the session's end instead (found by a
    /// reviewer: a read the session awaited closed at its end, and waited for the session).
    func takeCloseRequest(_ taker: CloseTaker) -> Bool {
        guard !ReentrancyMarker.isActive(self) else { return false }
        return closeState.withLock { Self.take(taker, from: &$0) }
    }

    private static func take(_ taker: CloseTaker, from state: inout CloseState) -> Bool {
        guard let request = state.request else { return false }
        let askedHere = state.asker.map { pthread_equal($0, pthread_self()) != 0 } == true
        let mine: Bool
        switch taker {
        case .outermostCall: mine = request == .whenIdle && (askedHere || state.askedFromEvent)
        case .asyncCall(let askedByWork): mine = request == .whenIdle && (askedByWork || state.askedFromEvent)
        case .sessionEnd: mine = request == .whenSessionEnds || state.askedFromEvent
        }
        guard mine else { return false }
        if case .sessionEnd = taker {
        } else if state.sessionsRunning > 0 {
            state.request = .whenSessionEnds
            return false
        }
        state.request = nil
        state.closing = true
        return true
    }

    /// Whether this thread's work asked the nested close. `wasOpen`: the pool was open when the work started on this
    /// thread (the asker is kept once the request is taken, and a thread runs other work later).
    func closeAsked(onThisThreadSince wasOpen: Bool) -> Bool {
        guard wasOpen else { return false }
        let me = pthread_self()
        return closeState.withLock { $0.asker.map { pthread_equal($0, me) != 0 } == true }
    }

    /// Performs a close request this `async` caller took (``takeCloseRequest(_:)``), once it holds nothing
    /// of the pool's but the writer gate, if `holdingGate`, which it hands to the close: on a thread of its own, while
    /// the task awaits it. The close waits for the pool's other work, and a writer session that holds the writer needs
    /// a cooperative thread to go on: blocking this one could leave none (one per core: a deadlock on a 1-core
    /// machine, or under a task executor of one thread; stop 63 left it undone).
    func performTakenClose(holdingGate: Bool = false) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                self.closeConnections(holdingGate: holdingGate)
                continuation.resume()
            }
        }
    }

    /// Returns once the connections are closed, when a close is under way (another caller took the request, or a
    /// ``close()`` from outside runs); at once otherwise, a close that waits for a writer session's end included.
    /// For work that closed the pool but found its request taken by another caller (a reviewer: it returned before
    /// the close was done).
    func awaitClosing() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = closeState.withLock { state -> Bool in
                guard state.closing, !state.closed else { return true }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Runs `body` as work of this pool on this thread (see ``ReentrancyMarker``); the outermost call performs a
    /// close requested from inside, unless `closesWhenDone` is false: its caller holds the writer gate, which the
    /// close waits for (found by an attacker: a deadlock), and hands the gate to the close as it ends.
    private func marked<Result>(_ description: String, closesWhenDone: Bool = true,
                                _ body: () throws -> Result) throws -> Result {
        defer { if closesWhenDone { closeIfRequested() } }
        return try ReentrancyMarker.run(self, description, path: path, body)
    }

    /// Closes every connection, once it holds the writer gate (taken here, or handed over by its caller: `holdingGate`)
    /// and every reader.
    private func closeConnections(holdingGate: Bool = false) {
        closeState.withLock { $0.closing = true }
        defer {
            let waiting = closeState.withLock { state in
                state.closed = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }
        // Keep interrupting what runs on the connections until the pool holds them all (Interrupter).
        let interrupter = Interrupter(writer: writerInterrupt.withLock { $0 }, readers: readers)
        Thread.detachNewThread { interrupter.run() }
        defer { interrupter.stop() }
        try? exclusively(holdingGate: holdingGate) { () throws(SQLCipherError) in
            // Nothing runs now. Stop interrupting first: an interrupt makes the close's checkpoint give up, which
            // leaves the -wal file behind (seen: 35 of 40 runs of the driver's wrong-key test). SQLite also keeps
            // an interrupt that reached an idle connection until that connection's next statement starts, so the
            // writer runs one to clear it.
            interrupter.stop()
            _ = try? writer?.textValue("SELECT 1")
            // Readers first: the last connection to close checkpoints the WAL into the database and removes the
            // -wal and -shm files, which only a read-write connection can do. Left behind, the next connection to
            // open the file (even one with a wrong key) would checkpoint them when it closes.
            readers.closeAll()
            writer?.close()
            writer = nil
            key = nil
        }
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

    /// What the writer gate tells at each release, for `observer`.
    private static func writerReleased(observer: (any DatabaseObserver)?, path: String)
        -> (@Sendable (Int, UInt64) -> Void)? {
        guard let observer else { return nil }
        return { inUse, sequence in
            observer.connectionReleased(PoolReleaseEvent(path: path, role: .writer, inUse: inUse, capacity: 1,
                                                         sequence: sequence))
        }
    }

    /// What the writer gate tells when the writes waiting for the writer change, for `observer` (on the thread or
    /// task that changed them, with its context), as the pool's work (`marking`'s): the wait may be queued already,
    /// and a close there would queue behind it (found by a reviewer: a deadlock); it is performed by the next call
    /// that ends (a close asked from an event: ``takeCloseRequest(_:)``).
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
    /// the wait to the observer with the caller's context, as work of the pool: a ``close()`` there is performed
    /// where the caller's work ends, with the gate handed over (found by an attacker: the close waited for the gate
    /// this task held, a deadlock). Returns whether the observer's `writerAcquired` asked a close
    /// (``closeAsked(onThisThreadSince:)``).
    @discardableResult
    func acquireWriter() async throws(SQLCipherError) -> Bool {
        let started = configuration.database.observer.map { _ in ContinuousClock.now }
        do {
            try await writerGate.acquire(timeout: configuration.writerWaitTimeout)
        } catch {
            // A close asked while it waited (the observer's writerQueueChanged), now that it holds nothing.
            await awaitRequestedClose()
            throw error
        }
        if let started {
            // No await in between: the mark, the report and the check are on one thread. Already the pool's work there
            // (a write started without suspending from inside a read's closure), the outer call performs a close asked
            // here.
            let wasOpen = !closed.isSet
            ReentrancyMarker.runAsWork(of: self, "DatabasePool's observer", path: path) {
                reportWriterAcquired(waitingSince: started)
            }
            return closeAsked(onThisThreadSince: wasOpen)
        }
        return false
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

    /// Runs `body` on the writer as the pool's write work (nested pool calls refused; a nested close is left to the
    /// caller, which hands it the gate as it ends); the caller holds the writer gate. For ``WriteGroups``, whose
    /// transaction is its own.
    func withWriterForGroup<Result>(_ body: (Database) throws -> Result) throws -> Result {
        try marked("DatabasePool.write", closesWhenDone: false) {
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
        var writerConfiguration = configuration.database
        writerConfiguration.mode = .readWrite
        guard let fresh = try? Database(path: path, optionalKey: key, configuration: writerConfiguration,
                                        preflight: true) else { return }
        writer = fresh
        writerInterrupt.withLock { $0 = fresh.interruptHandle }
        writerReplacementDue = false
    }

    /// A reader in place of one its user closed. Called holding a reader permit: `key` changes only with all of them
    /// held.
    private func openReader() throws(SQLCipherError) -> Database {
        try checkOpen()
        var readerConfiguration = configuration.database
        readerConfiguration.mode = .readOnly
        return try Database(path: path, optionalKey: key, configuration: readerConfiguration, preflight: true)
    }

    /// Runs `body` holding the writer and every reader (close waits for the writer without limit); `holdingGate`: the
    /// caller holds the writer gate already, and hands it over.
    private func exclusively(holdingGate: Bool = false, _ body: () throws(SQLCipherError) -> Void)
        throws(SQLCipherError) {
        if !holdingGate {
            try writerGate.acquire(timeout: closed.isSet ? nil : configuration.writerWaitTimeout, counted: false)
        }
        defer { releaseWriter() }
        try readers.withAllReadersTyped { () throws(SQLCipherError) in try body() }
    }

    deinit {
        workers.stop()
    }
}

/// Interrupts a closing pool's connections every 10 ms, from a thread of its own, until ``stop()``: a statement that
/// starts just after one interrupt (the call is a no-op while nothing runs) is caught by the next. ``stop()`` returns
/// only once no interrupt can land any more.
private final class Interrupter: Sendable {
    private let writer: InterruptHandle
    private let readers: ReaderPool
    private let running = Mutex(true)

    init(writer: InterruptHandle, readers: ReaderPool) {
        self.writer = writer
        self.readers = readers
    }

    func run() {
        while running.withLock({ running in
            if running {
                writer.interrupt()
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
