/// Receives what connections and pools do: each statement, transaction, write-ahead-log commit and checkpoint, busy
/// retry, and each wait for a pool's writer or a reader and its release.
///
/// Install one on ``Database/Configuration/observer`` (a ``DatabasePool`` and a ``DatabaseQueue`` pass theirs
/// to every connection they open). Without one, nothing is measured and nothing is installed on the connection:
/// the statement path is the same as before observation existed. The SQLCipherKitObservability package maps these
/// events to swift-log, swift-metrics and swift-distributed-tracing; an app can also implement the protocol itself.
///
/// ```swift
/// struct SlowStatements: DatabaseObserver {
///     func statementFinished(_ event: StatementEvent) {
///         if event.duration > .milliseconds(50) { print("slow \(event.operation): \(event.duration)") }
///     }
/// }
/// var configuration = Database.Configuration()
/// configuration.observer = SlowStatements()
/// ```
///
/// ## What events hold, and what they never hold
///
/// A statement event holds the SQL text as the caller prepared it (`sqlite3_sql`), never with its bound values
/// expanded, so a value bound with `?` is in no event. No event holds key material: keys reach the engine through
/// `sqlite3_key_v2` and `sqlite3_rekey_v2`, never as SQL text (<doc:ThreatModel>), SQL text that names a key is
/// refused before it runs, and a failed statement whose text may hold a key (``SQLCipherError/mayHoldKey(_:)``) has
/// its text left out of its event. ``StatementEvent/operation`` is one word from a fixed set, for metric labels.
///
/// ## Where the methods run
///
/// The connection's events run on the thread that runs its work, inside the statement or commit they report; a
/// pool's writer waits and releases run where the caller waits for the writer (its task or thread). Each should
/// return quickly and must not use the connection (or its pool): a statement it runs on the connection throws
/// ``SQLCipherError/Kind/misuse``, and so does one it runs on a pool's writer or reader when told it got that
/// connection (``writerAcquired(_:)``, ``readerAcquired(_:)``: the writer may be between a group's writes, its
/// transaction open). Every method has an empty default.
public protocol DatabaseObserver: Sendable {
    /// What ties an event to the caller's work (for tracing, the caller's `ServiceContext`), or nil.
    ///
    /// An `async` call of a pool or a queue calls this on the caller's task, before its work moves to one of the
    /// pool's threads, and every event of that work carries the value (``StatementEvent/context``). Synchronous work
    /// calls it on its own thread: for a statement just before its first step (the library's own `ATTACH`: at its
    /// end), for other events when they happen. It must not use the connection either: SQL it tries there throws,
    /// and a connection it closes fails the step (closed at once for every later call; see ``Database/close()`` for
    /// when the engine releases it). Default: nil.
    func currentContext() -> (any Sendable)?

    /// A statement finished: it ran to its end, failed, or was reset before its end.
    func statementFinished(_ event: StatementEvent)

    /// A transaction that SQLCipherKit began (``Database/transaction(_:_:)``, a pool's write, a group commit, a
    /// writer session) committed or rolled back.
    func transactionFinished(_ event: TransactionEvent)

    /// A commit appended frames to a write-ahead log.
    func walCommitted(_ event: WALEvent)

    /// An automatic checkpoint ran after a commit (when the log reached 1,000 frames, SQLite's default).
    func checkpointFinished(_ event: CheckpointEvent)

    /// A statement found the database locked by another connection and waits before it tries again.
    func busyRetried(_ event: BusyEvent)

    /// The writes waiting for a pool's writer changed without one getting it: a write joined the queue (a group
    /// commit's, or the wait for the writer another caller holds), or left it (it gave up at its wait limit, its
    /// task was cancelled, the pool closed), or a write went back to it (a group commit runs alone a write whose group
    /// failed). With ``writerAcquired(_:)``, which tells the queue when a write gets the writer, it keeps a gauge of
    /// the queue current while the writer is held. A close or a rekey waiting for the writer is not a write queued.
    func writerQueueChanged(_ event: PoolQueueEvent)

    /// A pool's write got the writer (``PoolWaitEvent/wait`` is how long it waited for it).
    func writerAcquired(_ event: PoolWaitEvent)

    /// A pool's read got a reader connection.
    func readerAcquired(_ event: PoolWaitEvent)

    /// A pool's writer or reader was given back (to the next waiter, or to the pool). The connection may already be
    /// another work's: an observer that kept a reference to it must not use or close it here.
    func connectionReleased(_ event: PoolReleaseEvent)
}

extension DatabaseObserver {
    public func currentContext() -> (any Sendable)? { nil }
    public func statementFinished(_ event: StatementEvent) {}
    public func transactionFinished(_ event: TransactionEvent) {}
    public func walCommitted(_ event: WALEvent) {}
    public func checkpointFinished(_ event: CheckpointEvent) {}
    public func busyRetried(_ event: BusyEvent) {}
    public func writerQueueChanged(_ event: PoolQueueEvent) {}
    public func writerAcquired(_ event: PoolWaitEvent) {}
    public func readerAcquired(_ event: PoolWaitEvent) {}
    public func connectionReleased(_ event: PoolReleaseEvent) {}
}
