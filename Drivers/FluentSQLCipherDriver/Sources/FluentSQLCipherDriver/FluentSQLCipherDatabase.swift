import FluentKit
import FluentSQL
import Logging
import NIOCore
import SQLCipherKit
import SQLCipherSQLKit
import SQLKit

/// FluentKit's `Database` on an encrypted SQLCipher database, and an `SQLDatabase` too (so `db as? any
/// SQLDatabase` gives raw SQL, as with fluent-sqlite-driver).
///
/// FluentSQL's converters write the SQL; ``SQLCipherSQLDatabase`` runs it: reads on the pool's readers, writes on
/// its writer. A transaction holds the writer for its whole closure, across its `await`s; a transaction started
/// inside it joins it.
struct FluentSQLCipherDatabase: FluentKit.Database, SQLDatabase {
    let sql: SQLCipherSQLDatabase
    let context: DatabaseContext
    let inTransaction: Bool

    init(sql: SQLCipherSQLDatabase, context: DatabaseContext, inTransaction: Bool = false) {
        self.sql = sql
        self.context = context
        self.inTransaction = inTransaction
    }

    var eventLoop: any EventLoop { context.eventLoop }
    var logger: Logger { context.logger }
    var dialect: any SQLDialect { sql.dialect }
    var version: (any SQLDatabaseReportedVersion)? { sql.version }
    var queryLogLevel: Logger.Level? { sql.queryLogLevel }

    // MARK: FluentKit

    func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void)
        -> EventLoopFuture<Void> {
        // FluentKit's query builder expects its rows on the event loop: the future's callbacks run there.
        sql.execute(sql: Self.sql(of: query)) { row in onOutput(SQLCipherDatabaseOutput(row: row, schema: nil)) }
    }

    func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void) async throws {
        try await sql.execute(sql: Self.sql(of: query)) { row in onOutput(SQLCipherDatabaseOutput(row: row, schema: nil)) }
    }

    private static func sql(of query: DatabaseQuery) -> any SQLExpression {
        returningID(query, SQLQueryConverter(delegate: SQLCipherConverterDelegate()).convert(query))
    }

    /// A create returns the new rows' identifiers with `RETURNING` (no `last_insert_rowid()`, which would need the
    /// same connection for a second statement).
    private static func returningID(_ query: DatabaseQuery, _ converted: any SQLExpression) -> any SQLExpression {
        guard case .create = query.action, query.customIDKey != .some(.string("")) else { return converted }
        return SQLKit.SQLList([converted, SQLReturning(SQLColumn((query.customIDKey ?? .id).description))],
                       separator: SQLRaw(" "))
    }

    func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> {
        var schema = schema
        if schema.action == .update {
            // SQLite has no enum types: changes to one are nothing to do.
            schema.updateFields = schema.updateFields.filter {
                if case .dataType(_, .enum) = $0 { return false }
                return true
            }
            if !schema.createConstraints.isEmpty {
                return eventLoop.makeFailedFuture(FluentSQLCipherUnsupportedAlter(request: "add a constraint to an existing table"))
            }
            if !schema.deleteConstraints.isEmpty {
                return eventLoop.makeFailedFuture(FluentSQLCipherUnsupportedAlter(request: "drop a constraint of an existing table"))
            }
            if !schema.updateFields.isEmpty {
                return eventLoop.makeFailedFuture(FluentSQLCipherUnsupportedAlter(request: "change a column's type"))
            }
            if schema.createFields.isEmpty, schema.deleteFields.isEmpty {
                return eventLoop.makeSucceededFuture(())
            }
        }
        let logger = self.logger
        return sql.execute(sql: SQLSchemaConverter(delegate: SQLCipherConverterDelegate()).convert(schema)) { row in
            // Its column names only: a row's values are the app's data, which no log line of the driver carries.
            logger.debug("Unexpected row returned from a schema query", metadata: ["columns": "\(row.allColumns)"])
        }
    }

    func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> {
        // Enums are text in SQLite: there is no type to create, change or drop.
        eventLoop.makeSucceededFuture(())
    }

    func transaction<T>(_ closure: @escaping @Sendable (any FluentKit.Database) -> EventLoopFuture<T>)
        -> EventLoopFuture<T> {
        if inTransaction { return closure(self) }
        let context = self.context
        let promise = eventLoop.makePromise(of: T.self)
        let box = PromiseBox(promise)
        Task {
            do {
                let result = try await sql.transaction { db in
                    try await FutureResult(closure(FluentSQLCipherDatabase(sql: db, context: context, inTransaction: true)))
                        .value()
                }
                box.succeed(result)
            } catch {
                box.fail(error)
            }
        }
        return promise.futureResult
    }

    func withConnection<T>(_ closure: @escaping @Sendable (any FluentKit.Database) -> EventLoopFuture<T>)
        -> EventLoopFuture<T> {
        // The pool picks a connection per statement; a transaction is what needs one connection throughout.
        closure(self)
    }

    // MARK: SQLKit

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<Void> {
        sql.execute(sql: query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await sql.execute(sql: query, onRow)
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await sql.withSession(closure)
    }
}

/// The promise of a result that need not be `Sendable` (FluentKit's `transaction` returns any `T`): it is
/// fulfilled once, from the task that computed the value, and read on the event loop.
private struct PromiseBox<T>: @unchecked Sendable {
    let promise: EventLoopPromise<T>
    init(_ promise: EventLoopPromise<T>) { self.promise = promise }
    func succeed(_ result: Carried<T>) {
        // On the promise's event loop, where a value that is not Sendable may be handed over.
        promise.futureResult.eventLoop.execute { [self] in promise.assumeIsolated().succeed(result.value) }
    }
    func fail(_ error: any Error) { promise.fail(error) }
}

/// An `EventLoopFuture`'s value awaited without requiring it to be `Sendable` (see ``PromiseBox``).
private struct FutureResult<T>: @unchecked Sendable {
    let future: EventLoopFuture<T>
    init(_ future: EventLoopFuture<T>) { self.future = future }

    func value() async throws -> Carried<T> {
        try await withCheckedThrowingContinuation { continuation in
            future.whenComplete { result in
                continuation.resume(with: result.map { Carried($0) })
            }
        }
    }
}

/// A value handed from one task to the one awaiting it.
struct Carried<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
