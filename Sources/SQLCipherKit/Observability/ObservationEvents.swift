import CSQLCipher
import Glibc
import Synchronization

/// A point in time as tracing and logs want it: nanoseconds since the Unix epoch (the system clock).
public typealias NanosecondsSinceEpoch = UInt64

/// One statement, from its first step to its end (``DatabaseObserver/statementFinished(_:)``).
///
/// Statements the library runs for the caller (opening, transactions, backup, export) are reported as the caller's
/// are. The statements SQLite and SQLCipher run inside `VACUUM` and `sqlcipher_export` are not: SQLite turns tracing
/// off for them, and the statement that started them (`VACUUM`, `SELECT sqlcipher_export(?1)`) is reported whole.
public struct StatementEvent: Sendable {
    /// The database file's path (`:memory:` for an in-memory database).
    public let path: String
    /// The SQL text as prepared ([`sqlite3_sql`](https://sqlite.org/c3ref/expanded_sql.html)): parameters as `?`,
    /// never their bound values. Empty for a failed statement that the SQL guard refused as it ran, or whose text
    /// names a key word (``SQLCipherError/mayHoldKey(_:)``: `VACUUM INTO` a URI with a key parameter): its text may
    /// hold a key, and is left out here as it is out of the error.
    public let sql: String
    /// The statement's kind: its first keyword, upper-cased, from a fixed set (``StatementEvent/operations``),
    /// or `OTHER`. Safe as a metric label: it never holds SQL text.
    public let operation: String
    /// When the first step began.
    public let startTime: NanosecondsSinceEpoch
    /// From the first step to the end: the rows' processing between steps included.
    public let duration: Duration
    /// The rows the statement returned.
    public let rows: Int
    /// The rows it inserted, updated or deleted ([`sqlite3_changes64`](https://sqlite.org/c3ref/changes.html)) when
    /// it changed any; 0 otherwise (CREATE, DROP, ALTER and pragmas change no rows in SQLite's count), and 0 for a
    /// statement reset before its end (SQLite counts its changes only after the reset).
    public let changes: Int
    /// SQLite's (extended) result code: `SQLITE_OK` (0) when the statement ran to its end or was reset before it,
    /// the error's code when it failed.
    public let resultCode: Int32
    /// What ``DatabaseObserver/currentContext()`` returned for the work this statement belongs to, asked at its
    /// first step (the library's own `ATTACH`: at its end): a statement left before its end and reset later, in
    /// other work, keeps the context of the work that ran it, and its duration runs until that reset.
    public let context: (any Sendable)?

    /// The values of ``operation`` other than `OTHER`.
    public static let operations: Set<String> = [
        "ALTER", "ANALYZE", "ATTACH", "BEGIN", "COMMIT", "CREATE", "DELETE", "DETACH", "DROP", "END", "EXPLAIN",
        "INSERT", "PRAGMA", "REINDEX", "RELEASE", "REPLACE", "ROLLBACK", "SAVEPOINT", "SELECT", "UPDATE", "VACUUM",
        "VALUES", "WITH",
    ]

    /// The first keyword of `sql` (after blanks and comments), upper-cased, when it is one of ``operations``;
    /// `OTHER` otherwise.
    public static func operation(of sql: String) -> String {
        var bytes = Substring(sql).utf8[...]
        while let first = bytes.first {
            if first == 0x20 || (0x09...0x0d).contains(first) {
                bytes = bytes.dropFirst()
            } else if bytes.starts(with: "--".utf8) {
                bytes = bytes.drop { $0 != 0x0a }
            } else if bytes.starts(with: "/*".utf8) {
                let rest = bytes.dropFirst(2)
                var index = rest.startIndex
                while index < rest.endIndex, !rest[index...].starts(with: "*/".utf8) { index = rest.index(after: index) }
                bytes = index < rest.endIndex ? rest[index...].dropFirst(2) : rest[rest.endIndex...]
            } else {
                break
            }
        }
        let word = bytes.prefix { (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0) }
        guard word.count <= 9 else { return "OTHER" }
        let upper = String(decoding: word.map { (0x61...0x7a).contains($0) ? $0 - 0x20 : $0 }, as: UTF8.self)
        return operations.contains(upper) ? upper : "OTHER"
    }
}

/// A transaction SQLCipherKit began, from `BEGIN` to its end (``DatabaseObserver/transactionFinished(_:)``).
public struct TransactionEvent: Sendable {
    /// How it ended.
    public enum Outcome: String, Sendable {
        /// `COMMIT` ran.
        case committed
        /// `ROLLBACK` ran (the transaction's work threw, or its commit failed).
        case rolledBack = "rolled_back"
    }

    /// The database file's path.
    public let path: String
    /// Committed or rolled back.
    public let outcome: Outcome
    /// Whether it held the write lock at its end (it wrote, or began `IMMEDIATE`): a read transaction's `COMMIT`
    /// syncs nothing.
    public let wrote: Bool
    /// When `BEGIN` started.
    public let startTime: NanosecondsSinceEpoch
    /// From `BEGIN` to the end of `COMMIT` or `ROLLBACK`.
    public let duration: Duration
    /// `COMMIT` alone: where the sync to the disk happens (zero for a rollback).
    public let commitDuration: Duration
    /// The connection's page cache so far.
    public let cache: CacheStatistics
    /// What ``DatabaseObserver/currentContext()`` returned for the work the transaction belongs to.
    public let context: (any Sendable)?
}

/// A connection's page cache, counted since it opened
/// ([`sqlite3_db_status`](https://sqlite.org/c3ref/c_dbstatus_options.html)).
public struct CacheStatistics: Sendable, Equatable {
    /// Page reads the cache answered.
    public let hits: Int
    /// Page reads that went to the file (and, encrypted, through decryption).
    public let misses: Int
    /// Pages written to the file.
    public let writes: Int
    /// Dirty pages written before a commit because the cache was full.
    public let spills: Int
    /// Bytes the cache holds now.
    public let bytes: Int

    init(handle: OpaquePointer) {
        func value(_ option: Int32) -> Int {
            var current: Int32 = 0, highest: Int32 = 0
            return sqlite3_db_status(handle, option, &current, &highest, 0) == SQLITE_OK ? Int(current) : 0
        }
        hits = value(SQLITE_DBSTATUS_CACHE_HIT)
        misses = value(SQLITE_DBSTATUS_CACHE_MISS)
        writes = value(SQLITE_DBSTATUS_CACHE_WRITE)
        spills = value(SQLITE_DBSTATUS_CACHE_SPILL)
        bytes = value(SQLITE_DBSTATUS_CACHE_USED)
    }
}

/// A commit appended to a write-ahead log ([`sqlite3_wal_hook`](https://sqlite.org/c3ref/wal_hook.html)).
///
/// SQLite calls the hook as the committing statement ends: its event comes before that statement's own
/// ``DatabaseObserver/statementFinished(_:)`` (and an automatic checkpoint's ``CheckpointEvent`` with it).
public struct WALEvent: Sendable {
    /// The path of the schema's database file (an attached database's own).
    public let path: String
    /// The schema (`main`, or an attached database's name).
    public let schema: String
    /// The frames in the log now (pages written since it was last reset).
    public let frames: Int
    /// The `-wal` file's size in bytes (it is reused, not shrunk, after a checkpoint).
    public let fileBytes: Int
    /// What ``DatabaseObserver/currentContext()`` returned for the work this event belongs to.
    public let context: (any Sendable)?
}

/// An automatic checkpoint ([`sqlite3_wal_checkpoint_v2`](https://sqlite.org/c3ref/wal_checkpoint_v2.html),
/// `PASSIVE`, as SQLite's own automatic checkpoint).
public struct CheckpointEvent: Sendable {
    /// The path of the schema's database file (an attached database's own).
    public let path: String
    /// The schema (`main`, or an attached database's name).
    public let schema: String
    /// The frames in the log (0 when the checkpoint could not start).
    public let frames: Int
    /// The frames copied into the database (fewer when readers still use older ones; 0 when it could not start).
    public let checkpointed: Int
    /// How long the checkpoint took.
    public let duration: Duration
    /// `SQLITE_OK`, or why it stopped (`SQLITE_BUSY`: another connection checkpointed or wrote meanwhile).
    public let resultCode: Int32
    /// What ``DatabaseObserver/currentContext()`` returned for the work this event belongs to.
    public let context: (any Sendable)?
}

/// A statement found the database locked and waits before trying again (the busy timeout's retries).
public struct BusyEvent: Sendable {
    /// The database file's path.
    public let path: String
    /// How many times this step of the statement has waited so far (1 for the first; SQLite counts per step).
    public let retry: Int
    /// How long it waits now.
    public let delay: Duration
    /// What ``DatabaseObserver/currentContext()`` returned for the work this event belongs to.
    public let context: (any Sendable)?
}

/// A pool's call got its connection (``DatabaseObserver/writerAcquired(_:)``,
/// ``DatabaseObserver/readerAcquired(_:)``).
public struct PoolWaitEvent: Sendable {
    /// The database file's path.
    public let path: String
    /// How long the call waited for the connection.
    public let wait: Duration
    /// The writes still waiting for the writer after this one got it (writers only; 0 for readers).
    public let queueDepth: Int
    /// The connections of this kind in use, this one included (the writer: 1).
    public let inUse: Int
    /// The connections of this kind the pool has.
    public let capacity: Int
    /// Orders this event's figures among the pool's: one read later has a larger number. Events reach an observer
    /// from several threads, after their figures were read, so they can arrive out of order: an observer that keeps
    /// a gauge of ``inUse`` or ``queueDepth`` keeps the figure with the largest number (the SQLCipherKitObservability
    /// package does).
    public let sequence: UInt64
    /// What ``DatabaseObserver/currentContext()`` returned for the work this event belongs to.
    public let context: (any Sendable)?
}

/// A pool's connection given back (``DatabasePool``'s writer or one of its readers).
public struct PoolReleaseEvent: Sendable {
    /// Which of the pool's connections.
    public enum Role: String, Sendable {
        case writer, reader
    }

    /// The database file's path.
    public let path: String
    /// The writer or a reader.
    public let role: Role
    /// The connections of this kind in use now (the writer: 1 when it went straight to a waiting write).
    public let inUse: Int
    /// The connections of this kind the pool has.
    public let capacity: Int
    /// Orders this event's figures among the pool's: one read later has a larger number. Events reach an observer
    /// from several threads, after their figures were read, so they can arrive out of order: an observer that keeps
    /// a gauge of ``inUse`` keeps the figure with the largest number (the SQLCipherKitObservability
    /// package does).
    public let sequence: UInt64
}

/// The writes waiting for a pool's writer changed (``DatabaseObserver/writerQueueChanged(_:)``).
public struct PoolQueueEvent: Sendable {
    /// The database file's path.
    public let path: String
    /// The writes waiting for the writer now.
    public let queueDepth: Int
    /// Orders this event's figures among the pool's: one read later has a larger number. Events reach an observer
    /// from several threads, after their figures were read, so they can arrive out of order: an observer that keeps
    /// a gauge of ``queueDepth`` keeps the figure with the largest number (the SQLCipherKitObservability
    /// package does).
    public let sequence: UInt64
    /// What ``DatabaseObserver/currentContext()`` returned for the work this event belongs to.
    public let context: (any Sendable)?
}

/// The clocks events use.
enum ObservationClock {
    static func now() -> NanosecondsSinceEpoch {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    static func monotonic() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}


/// The numbers that order a pool's figures (``PoolWaitEvent/sequence``, ``PoolReleaseEvent/sequence``,
/// ``PoolQueueEvent/sequence``): each is taken under the lock that reads the figure it goes with, so a figure read
/// later has a larger number, whichever thread reports it first.
///
/// One sequence serves every pool of the process: a pool opened again on the same file (the same gauges) goes on
/// from the numbers its predecessor reached, rather than starting below them.
final class ObservationSequence: Sendable {
    /// The process's one sequence.
    static let shared = ObservationSequence()

    private let last = Atomic<UInt64>(0)

    private init() {}

    /// The next number (1, 2, …). Called with the lock held that guards the figure being read.
    func next() -> UInt64 {
        last.add(1, ordering: .relaxed).newValue
    }
}
