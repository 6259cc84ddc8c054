import CSQLCipher
import Glibc

/// A connection's observation: the SQLite hooks that report to its ``DatabaseObserver``, installed only when one is
/// configured, and what they remember between callbacks.
///
/// An observed connection's steps all take the checked step (``Statement/checkedStep()``), which marks a statement's
/// first step, counts its rows and gives its result; [`sqlite3_trace_v2`](https://sqlite.org/c3ref/trace_v2.html)'s
/// `SQLITE_TRACE_PROFILE` marks its end, also when the statement is reset or finalized before its end (the
/// profile's own duration has millisecond steps, so both ends are timed here). That sees every statement of every
/// route, the library's own included, without a branch on the library's inlined step. Only statements a step starts
/// are tracked (SQLite's own schema reads, which the profile never ends, are not), and each is forgotten at its end.
///
/// Confined like its connection: the callbacks run on the thread that runs the connection's work.
final class ConnectionObservation {
    let observer: any DatabaseObserver
    let path: String
    /// The statement the connection's checked step runs now.
    var stepping: OpaquePointer?
    /// The end of `stepping`, reported once its step's result is known.
    private var pending: StatementEvent?
    /// When each running statement began (system clock, monotonic clock), the connection's total changes then, and
    /// the context of the work that began it: a statement left unfinished (a cursor abandoned after one row) ends only
    /// when later work resets or finalizes it, and is reported under the context that ran it, not that later work's.
    private var starts: [OpaquePointer: Start] = [:]
    private struct Start {
        let wall: UInt64
        let monotonic: UInt64
        let totalChanges: Int64
        /// Nil when not read at the start (``startingContext(_:first:)``): then read at the end.
        let context: Context?
    }
    /// What ``context`` gave when a statement started.
    struct Context {
        let value: (any Sendable)?
    }
    private var rows: [OpaquePointer: Int] = [:]
    /// The open transaction SQLCipherKit began: when, both clocks.
    private var transactionStart: (wall: UInt64, monotonic: UInt64)?
    /// The busy timeout the busy handler applies, in milliseconds.
    var busyTimeoutMilliseconds: Int32
    /// SQLite's default automatic checkpoint (`SQLITE_DEFAULT_WAL_AUTOCHECKPOINT`), which the WAL hook replaces.
    static let autoCheckpointFrames: Int32 = 1000

    init(observer: any DatabaseObserver, path: String, busyTimeoutMilliseconds: Int32) {
        self.observer = observer
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
    }

    /// The connection, once open. The observer's methods then run as the caller's code that may run no SQL on it
    /// (``Database/callingUserCode(runsNoSQL:_:)``): an observer must not use the connection, and every statement it
    /// tries there throws ``SQLCipherError/Kind/misuse`` (its events come from the middle of the library's own
    /// operations, where the connection's state is not the caller's; found by a reviewer and two attackers).
    weak var database: Database?

    /// Runs `body` (a call of the observer) as the caller's code, once the connection is open.
    private func notify<Result>(_ body: () -> Result) -> Result {
        guard let database else { return body() }
        return database.callingUserCode(runsNoSQL: true, body)
    }

    /// The context an event of the work running now carries.
    var context: (any Sendable)? { ObservationContext.current ?? notify { observer.currentContext() } }

    /// Installs the hooks on `handle` (which this observation must outlive; ``uninstall(from:)`` before it closes).
    func install(on handle: OpaquePointer) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_trace_v2(handle, UInt32(SQLITE_TRACE_PROFILE), { mask, context, p, _ in
            guard Int32(mask) == SQLITE_TRACE_PROFILE, let context, let p else { return 0 }
            Unmanaged<ConnectionObservation>.fromOpaque(context).takeUnretainedValue().ended(OpaquePointer(p))
            return 0
        }, me)
        // Replaces SQLite's automatic checkpoint, which this hook then runs itself, as SQLite's did.
        sqlite3_wal_hook(handle, { context, db, schema, frames in
            guard let context, let db else { return SQLITE_OK }
            let observation = Unmanaged<ConnectionObservation>.fromOpaque(context).takeUnretainedValue()
            observation.walCommitted(db, schema: schema.map { String(cString: $0) } ?? "main", frames: frames)
            return SQLITE_OK
        }, me)
        // Replaces sqlite3_busy_timeout's handler, with the same waits.
        sqlite3_busy_handler(handle, { context, count in
            guard let context else { return 0 }
            let observation = Unmanaged<ConnectionObservation>.fromOpaque(context).takeUnretainedValue()
            return observation.busy(count: Int(count))
        }, me)
    }

    /// Removes the hooks (before the connection closes: its last checkpoint runs without them).
    func uninstall(from handle: OpaquePointer) {
        sqlite3_trace_v2(handle, 0, nil, nil)
        sqlite3_wal_hook(handle, nil, nil)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
    }

    // MARK: Statements

    /// The context a step of `statement` would start it with (`first`: its first step since it was prepared or
    /// reset), asked of the observer before the checked step's checks, which then see whatever the observer did (it
    /// must not use the connection; if it closes it, the step throws). Nil when the step starts nothing, and while the
    /// library's own ATTACH is open: the observer runs as the caller's code, which closes the engine's attachment
    /// for its duration, and changing the engine's flags expires the statement about to run (the library's ATTACH
    /// would compile again past its trusted window). The library's statements run to their end inside its
    /// operation, so the context at their end is their caller's.
    func startingContext(_ statement: OpaquePointer, first: Bool) -> Context? {
        guard first || starts[statement] == nil, database?.sqlGuard.attachmentOpen != true else { return nil }
        // SQL the observer tries while it is asked (refused: callingUserCode) is not asked about: asking again would
        // try it again, without end (found by an attacker).
        if askingContext { return Context(value: nil) }
        askingContext = true
        defer { askingContext = false }
        return Context(value: context)
    }

    /// True while ``startingContext(_:first:)`` asks the observer.
    private var askingContext = false

    /// The checked step is about to step `statement`, with nothing of the caller's to run before it; `first`: its
    /// first step since it was prepared or reset. (A statement stepped again after its end, without a reset, starts
    /// over in SQLite: its end removed its start.) `context`: ``startingContext(_:first:)``'s, or nil to read the
    /// context at the statement's end.
    func stepStarting(_ statement: OpaquePointer, first: Bool, context: Context?) {
        stepping = statement
        if first || starts[statement] == nil {
            starts[statement] = Start(wall: ObservationClock.now(), monotonic: ObservationClock.monotonic(),
                                      totalChanges: sqlite3_total_changes64(sqlite3_db_handle(statement)),
                                      context: context)
            rows[statement] = 0
        }
    }

    private func ended(_ statement: OpaquePointer) {
        // Only statements a checked step started (SQLite's schema reads run without an end of their own). The
        // statement stepping now may end only to start over (SQLite re-prepares it after a schema change, inside
        // the same step): its start and rows stay until the step returns (``stepReturned(_:code:)``).
        let inStep = statement == stepping
        guard let start = inStep ? starts[statement] : starts.removeValue(forKey: statement) else { return }
        let end = ObservationClock.monotonic()
        let sql = sqlite3_sql(statement).map { String(cString: $0) } ?? ""
        // sqlite3_changes64 is the last INSERT, UPDATE or DELETE's count: this statement's only when it changed rows
        // (the connection's total moved since it began); CREATE, DROP, ALTER or a pragma would show the one before.
        let db = sqlite3_db_handle(statement)
        let changed = sqlite3_total_changes64(db) != start.totalChanges
        let event = StatementEvent(
            path: path, sql: sql, operation: StatementEvent.operation(of: sql), startTime: start.wall,
            duration: .nanoseconds(Int64(end &- start.monotonic)),
            rows: (inStep ? rows[statement] : rows.removeValue(forKey: statement)) ?? 0,
            changes: changed ? Int(sqlite3_changes64(db)) : 0, resultCode: SQLITE_OK,
            context: start.context.map(\.value) ?? context)
        if inStep {
            pending = event
        } else {
            // Reset before its end.
            notify { observer.statementFinished(event) }
        }
    }

    /// The checked step of `statement` returned `code`: reports its end, if this step ended it.
    /// `refused`: the SQL guard refused something the statement did as it ran. The text of a failed statement that
    /// was refused, or that may hold a key (``SQLCipherError/mayHoldKey(_:)``: `VACUUM INTO 'file:…?key=…'` inside
    /// a transaction fails before its ATTACH reaches the guard), is left out of its event, as it is out of the
    /// error.
    func stepReturned(_ statement: OpaquePointer, code: Int32, refused: Bool = false) {
        stepping = nil
        if code == SQLITE_ROW {
            // An end inside a step that gives a row was a re-prepare's: the statement goes on.
            pending = nil
            rows[statement, default: 0] += 1
            return
        }
        starts[statement] = nil
        rows[statement] = nil
        guard let event = pending else { return }
        pending = nil
        let failed = code != SQLITE_DONE
        notify { observer.statementFinished(StatementEvent(
            path: event.path, sql: failed && (refused || SQLCipherError.mayHoldKey(event.sql)) ? "" : event.sql,
            operation: event.operation,
            startTime: event.startTime,
            duration: event.duration, rows: event.rows, changes: code == SQLITE_DONE ? event.changes : 0,
            resultCode: code == SQLITE_DONE ? SQLITE_OK : code, context: event.context)) }
    }

    // MARK: Transactions

    /// Both clocks now: when a `BEGIN` starts (``transactionBegan(at:)`` once it succeeded).
    static func instant() -> (wall: UInt64, monotonic: UInt64) {
        (ObservationClock.now(), ObservationClock.monotonic())
    }

    /// The transaction whose `BEGIN` started at `start` is open.
    func transactionBegan(at start: (wall: UInt64, monotonic: UInt64)) {
        transactionStart = start
    }

    /// Whether the transaction open on `handle` holds the write lock now (before its `COMMIT`).
    static func writes(_ handle: OpaquePointer?) -> Bool {
        handle.map { sqlite3_txn_state($0, nil) == SQLITE_TXN_WRITE } ?? false
    }

    func transactionEnded(_ outcome: TransactionEvent.Outcome, commitStarted: UInt64?, wrote: Bool,
                          handle: OpaquePointer?) {
        guard let start = transactionStart else { return }
        transactionStart = nil
        let end = ObservationClock.monotonic()
        let statistics = handle.map { CacheStatistics(handle: $0) }
        notify { observer.transactionFinished(TransactionEvent(
            path: path, outcome: outcome, wrote: wrote, startTime: start.wall,
            duration: .nanoseconds(Int64(end &- start.monotonic)),
            commitDuration: commitStarted.map { .nanoseconds(Int64(end &- $0)) } ?? .zero,
            cache: statistics ?? CacheStatistics.zero, context: context)) }
    }

    // MARK: Write-ahead log and busy waits

    private func walCommitted(_ db: OpaquePointer, schema: String, frames: Int32) {
        var info = stat()
        // The schema's own file: an attached database's log is its own.
        let file = sqlite3_db_filename(db, schema).map { String(cString: $0) } ?? ""
        let bytes = !file.isEmpty && stat(file + "-wal", &info) == 0 ? Int(info.st_size) : 0
        let eventPath = file.isEmpty ? path : file
        notify { observer.walCommitted(WALEvent(path: eventPath, schema: schema, frames: Int(frames), fileBytes: bytes,
                                       context: context)) }
        guard frames >= Self.autoCheckpointFrames else { return }
        let started = ObservationClock.monotonic()
        var logged: Int32 = 0, copied: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, &logged, &copied)
        let figures = Self.checkpointFigures(logged: logged, copied: copied)
        notify { observer.checkpointFinished(CheckpointEvent(
            path: eventPath, schema: schema, frames: figures.frames, checkpointed: figures.checkpointed,
            duration: .nanoseconds(Int64(ObservationClock.monotonic() &- started)), resultCode: code,
            context: context)) }
    }

    /// A checkpoint's frame counts as events give them: SQLite sets both to -1 when the checkpoint could not start
    /// (`SQLITE_BUSY`: another connection checkpoints at that moment), and counts are never negative.
    static func checkpointFigures(logged: Int32, copied: Int32) -> (frames: Int, checkpointed: Int) {
        (Int(max(0, logged)), Int(max(0, copied)))
    }

    /// SQLite's busy-timeout waits (`sqliteDefaultBusyCallback`): 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, then
    /// 100 ms, until the timeout.
    static let busyDelays: [Int32] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100]

    /// The waits before retry `count` (0 for the first): the delay now, and the total waited before it.
    static func busyWait(count: Int, timeout: Int32) -> Int32? {
        let delays = busyDelays
        let prior: Int32 = count < delays.count ? delays[..<count].reduce(0, +)
            : delays.reduce(0, +) + delays[delays.count - 1] * Int32(count - delays.count)
        var delay = count < delays.count ? delays[count] : delays[delays.count - 1]
        if prior + delay > timeout {
            delay = timeout - prior
            if delay <= 0 { return nil }
        }
        return delay
    }

    private func busy(count: Int) -> Int32 {
        guard let delay = Self.busyWait(count: count, timeout: busyTimeoutMilliseconds) else { return 0 }
        notify { observer.busyRetried(BusyEvent(path: path, retry: count + 1, delay: .milliseconds(Int(delay)),
                                       context: context)) }
        // A connection the observer closed (or that closed meanwhile) waits no longer: its operation fails.
        guard database?.isClosed != true else { return 0 }
        sqlite3_sleep(delay)
        return 1
    }
}

extension CacheStatistics {
    static let zero = CacheStatistics(hits: 0, misses: 0, writes: 0, spills: 0, bytes: 0)

    init(hits: Int, misses: Int, writes: Int, spills: Int, bytes: Int) {
        self.hits = hits
        self.misses = misses
        self.writes = writes
        self.spills = spills
        self.bytes = bytes
    }
}
