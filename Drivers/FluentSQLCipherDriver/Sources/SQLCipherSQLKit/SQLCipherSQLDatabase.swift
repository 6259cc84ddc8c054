import Logging
import NIOCore
import SQLCipherKit
import SQLKit

/// SQLKit's `SQLDatabase` over an SQLCipherKit `DatabasePool`: an encrypted SQLite database for
/// SQLKit code.
///
/// A read-only statement (`SELECT`, see `Statement.isReadOnly`) runs on one of the pool's readers,
/// any other on its writer (each in a transaction of its own); one that starts with `INSERT`, `UPDATE`, `DELETE`,
/// `REPLACE`, `CREATE`, `DROP` or `ALTER` goes to the writer without being prepared on a reader first.
/// ``withSession(_:)`` and ``transaction(_:)`` hold the writer for their whole closure, across its `await`s (a
/// `WriterSession`): every statement of the closure runs on that connection.
///
/// ```swift
/// let pool = try DatabasePool(path: path, key: .passphrase(passphrase))
/// let db = SQLCipherSQLDatabase(pool: pool, eventLoop: eventLoopGroup.any())
/// try await db.create(table: "planet").column("id", type: .int, .primaryKey).column("name", type: .text).run()
/// ```
public struct SQLCipherSQLDatabase: SQLDatabase {
    /// The pool the statements run on.
    public let pool: DatabasePool
    /// The event loop of `EventLoopFuture` results.
    public let eventLoop: any EventLoop
    /// The logger of the executed statements. While they run, it is also swift-log's task-local logger when the
    /// pool has an observer and it has metadata; the observer takes that with them (SQLCipherKitObservability puts
    /// it on the lines of slow and failed statements): for Fluent's `req.db`, the request's `request-id`. SQLKit's
    /// `logging(to:)` does not reach it (its database forwards to this one, with this logger).
    public let logger: Logger
    /// How bound values are stored.
    public let encoder: SQLCipherDataEncoder
    /// How stored values are read.
    public let decoder: SQLCipherDataDecoder
    /// The level statements are logged at (nil: not logged). Bound values are never logged.
    public let queryLogLevel: Logger.Level?
    /// The writer session the statements run on, inside ``withSession(_:)`` or ``transaction(_:)``.
    public let session: WriterSession?

    /// A database over `pool`.
    public init(pool: DatabasePool, eventLoop: any EventLoop, logger: Logger = Logger(label: "SQLCipherSQLKit"),
                encoder: SQLCipherDataEncoder = .init(), decoder: SQLCipherDataDecoder = .init(),
                queryLogLevel: Logger.Level? = .debug, session: WriterSession? = nil) {
        self.pool = pool
        self.eventLoop = eventLoop
        self.logger = logger
        self.encoder = encoder
        self.decoder = decoder
        self.queryLogLevel = queryLogLevel
        self.session = session
    }

    /// SQLite's dialect, named `sqlite` (``SQLCipherDialect``).
    public var dialect: any SQLDialect { SQLCipherDialect() }

    /// The engine's SQLite version.
    public var version: (any SQLDatabaseReportedVersion)? { SQLCipherDatabaseVersion.engine }

    /// Runs `query`, calling `onRow` with each result row on ``eventLoop`` (as FluentKit's query builder expects).
    public func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.rows(sql: query) }.map { rows in
            for row in rows { onRow(row) }
        }
    }

    /// Runs `query`, calling `onRow` with each result row.
    public func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        for row in try await rows(sql: query) {
            onRow(row)
        }
    }

    /// Runs `query` and returns its result rows.
    public func rows(sql query: any SQLExpression) async throws -> [SQLCipherRow] {
        let (sql, binds) = serialize(query)
        if let queryLogLevel {
            // The SQL only: bound values may be secrets, and the database is encrypted for a reason. SQL that may
            // hold a key (the guard refuses it, but only once it runs) is withheld, as errors withhold it.
            let text = SQLCipherError.mayHoldKey(sql) ? "(withheld: the text may hold a key)" : sql
            logger.log(level: queryLogLevel, "Executing query",
                       metadata: ["sql": .string(text), "binds": .stringConvertible(binds.count)])
        }
        var arguments = StatementArguments.none
        arguments.positional = try binds.map { try encoder.encode($0) }
        return try await observed { try await run(sql, arguments) }.map { SQLCipherRow(row: $0, decoder: decoder) }
    }

    /// Runs `work` with ``logger`` bound as swift-log's task-local logger when the pool has an observer and the
    /// logger has metadata: the observer takes it on this task with the statements, so that the lines it logs can
    /// carry a Fluent request's metadata (its `request-id`). Bound as it is, never merged: merging writes through
    /// `Logger.current`'s handler, which a handler of reference type would keep, for every later request. Without an
    /// observer, or with a logger without metadata, nothing is bound.
    private func observed<T>(_ work: () async throws -> T) async throws -> T {
        guard pool.configuration.database.observer != nil, !logger.handler.metadata.isEmpty else {
            return try await work()
        }
        return try await withLogger(logger) { _ in try await work() }
    }

    /// Runs `closure` with a database whose statements all run on the writer, held for the whole closure.
    public func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        if session != nil { return try await closure(self) }
        return try await observed {
            try await pool.writeSession { session in
                Unchecked(try await closure(self.on(session)))
            }
        }.value
    }

    /// Runs `closure` in a transaction on the writer, held across its `await`s: committed when it returns, rolled
    /// back when it throws. Inside another transaction, `closure` joins it.
    public func transaction<R>(_ closure: @escaping @Sendable (SQLCipherSQLDatabase) async throws -> R) async throws
        -> R {
        if let session {
            return try await session.transaction { Unchecked(try await closure(self)) }.value
        }
        // Bound around the session: its BEGIN and COMMIT (the sync, often the slowest statement) carry it too.
        return try await observed {
            try await pool.writeSession { session in
                try await session.transaction { Unchecked(try await closure(self.on(session))) }
            }
        }.value
    }

    /// This database, with its statements on `session`.
    public func on(_ session: WriterSession) -> SQLCipherSQLDatabase {
        SQLCipherSQLDatabase(pool: pool, eventLoop: eventLoop, logger: logger, encoder: encoder, decoder: decoder,
                             queryLogLevel: queryLogLevel, session: session)
    }

    /// Runs one statement where it belongs and returns its rows.
    private func run(_ sql: String, _ arguments: StatementArguments) async throws -> [Row] {
        if let session {
            return try await session.execute { db in try Self.rows(db, sql, arguments) }
        }
        if Self.startsAsWrite(sql) {
            return try await pool.write { db in try Self.rows(db, sql, arguments) }
        }
        let read = try await pool.read { db -> [Row]? in
            let statement = try db.cachedStatement(sql)
            guard statement.isReadOnly else { return nil }
            return try statement.rows(arguments).all()
        }
        if let read { return read }
        return try await pool.write { db in try Self.rows(db, sql, arguments) }
    }

    /// The keywords a statement that can only write starts with: it goes to the writer at once, rather than being
    /// prepared on a reader first to learn that it is not read-only (one hop to a reader's thread and one prepare
    /// fewer per write). Any other statement (`SELECT`, `WITH`, `PRAGMA`, one after a comment…) is still asked.
    private static let writeKeywords: Set<String> = ["INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER"]

    /// Whether `sql`'s first word is one of ``writeKeywords`` (in any case).
    static func startsAsWrite(_ sql: String) -> Bool {
        let word = sql.utf8.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
            .prefix { (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
        guard (4...7).contains(word.count) else { return false }
        return writeKeywords.contains(String(decoding: word, as: UTF8.self).uppercased())
    }

    private static func rows(_ db: SQLCipherKit.Database, _ sql: String, _ arguments: StatementArguments) throws -> [Row] {
        try db.cachedStatement(sql).rows(arguments).all()
    }
}

/// A result carried out of a writer session: the session's API asks for `Sendable` results, and SQLKit's
/// `withSession` does not (its closure's result stays in the calling task, which is all that happens here).
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
