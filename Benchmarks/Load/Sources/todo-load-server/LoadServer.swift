import Fluent
import FluentSQLCipherDriver
import FluentSQLiteDriver
import Foundation
import Logging
import SQLKit
import Vapor
import VaporTodo

/// The database a load server runs on (`TODO_LOAD_DATABASE`).
enum LoadDatabase: String, CaseIterable, Sendable {
    /// FluentSQLCipherDriver, encrypted: VaporTodo's own `configure(_:settings:)`, its key from `TODO_KEY_FILE`.
    case encrypted
    /// FluentSQLCipherDriver without encryption, `.sqlcipher(unencryptedPath:)`: the same pool and engine.
    case unencrypted
    /// vapor/fluent-sqlite-driver 4.9.0, `.sqlite(.file(path))` as its README shows, on sqlite-nio's SQLite.
    case sqliteDriver = "fluent-sqlite-driver"
    /// As `unencrypted`, with the pool's group commit off (`GroupCommit.off`): each write commits on its own, as
    /// before issue 46, measured side by side with the default.
    case unencryptedUngrouped = "unencrypted-ungrouped"
    /// As `encrypted`, with what VaporTodo's own entry point reports (``TodoTelemetry``): metrics through
    /// swift-prometheus, and traces through swift-otel to the OTLP/HTTP endpoint run.sh sets, a server span per
    /// request and a span per statement and transaction. Measured side by side with `encrypted`.
    case encryptedObserved = "encrypted-observed"
    /// As `encryptedObserved` without an OTLP endpoint: metrics (the observer's and Vapor's, through
    /// swift-prometheus) and no traces, which tells the two costs apart.
    case encryptedMetrics = "encrypted-metrics"
    /// As `encryptedObserved`, with run.sh setting swift-otel's head sampler to a ratio
    /// (`OTEL_TRACES_SAMPLER=parentbased_traceidratio`, `OTEL_TRACES_SAMPLER_ARG=0.1`): a tenth of the requests
    /// traced, as a server under load is usually run; the spans the sampler drops record nothing.
    case encryptedSampled = "encrypted-sampled"
}

/// `todo-load-server serve --hostname H --port P` (any Vapor command): Examples/VaporTodo's app on the database
/// `TODO_LOAD_DATABASE` names, its file `TODO_DATABASE`; `TODO_LOAD_SEED=N` inserts N todos at boot when the table
/// is empty (every 50th completed: `GET /todos?completed=true` is a page of N/50). At boot it prints one line
/// `engine: …` with what each variant runs on: SQLite's version, SQLCipher's (`PRAGMA cipher_version`, no row on
/// plain SQLite), the journal mode and the synchronous setting. The key comes from a key file only, never argv
/// or an environment value; no output holds it.
@main
enum LoadServer {
    static func main() async throws {
        var environment = try Environment.detect()
        try LoggingSystem.bootstrap(from: &environment)
        let app = try await Application.make(environment)
        let variables = ProcessInfo.processInfo.environment
        do {
            guard let name = variables["TODO_LOAD_DATABASE"], let database = LoadDatabase(rawValue: name) else {
                throw LoadServerError("set TODO_LOAD_DATABASE to one of "
                    + LoadDatabase.allCases.map(\.rawValue).joined(separator: ", "))
            }
            let path = variables[TodoSettings.databaseVariable] ?? "todo.db"
            let timings = variables[RouteTimings.variable].map(RouteTimings.init(file:))
            if let timings { app.middleware.use(timings, at: .beginning) }
            var telemetry: TodoTelemetry?
            switch database {
            case .encrypted:
                try await configure(app, settings: TodoSettings(environment: variables))
            case .encryptedObserved, .encryptedMetrics, .encryptedSampled:
                let made = try TodoTelemetry(environment: variables, logger: app.logger)
                telemetry = made
                try await configure(app, settings: TodoSettings(environment: variables),
                                    observability: made.observability)
            case .unencrypted:
                try await configure(app, database: try .sqlcipher(unencryptedPath: path), as: .sqlcipher)
            case .unencryptedUngrouped:
                try await configure(app, database: try .sqlcipher(unencryptedPath: path,
                                                                  configuration: .init(groupCommit: .off)),
                                    as: .sqlcipher)
            case .sqliteDriver:
                try await configure(app, database: .sqlite(.file(path)), as: .sqlite)
            }
            try await seed(app, count: Int(variables["TODO_LOAD_SEED"] ?? "") ?? 0)
            let engine = try await engine(app.db, database)
            FileHandle.standardOutput.write(Data("engine: \(database.rawValue): \(engine)\n".utf8))
            try await app.execute()
            try timings?.write()
            await telemetry?.shutdown()
        } catch {
            FileHandle.standardError.write(Data("todo-load-server: \(error)\n".utf8))
            try? await app.asyncShutdown()
            exit(1)
        }
        try await app.asyncShutdown()
    }

    /// Inserts `count` todos in one transaction, when the table is empty.
    static func seed(_ app: Application, count: Int) async throws {
        guard count > 0, try await Todo.query(on: app.db).count() == 0 else { return }
        try await app.db.transaction { db in
            for index in 0..<count {
                try await Todo(title: "seeded todo \(index)", completed: index % 50 == 0).create(on: db)
            }
        }
    }

    /// What the database runs on, asked through Fluent's own connections, and checked: SQLCipher answers
    /// `PRAGMA cipher_version`, sqlite-nio's plain SQLite returns no row.
    static func engine(_ db: any Database, _ database: LoadDatabase) async throws -> String {
        guard let sql = db as? any SQLDatabase else { throw LoadServerError("no SQLDatabase") }
        func text(_ query: String, _ column: String) async throws -> String? {
            guard let row = try await sql.raw(SQLQueryString(query)).first() else { return nil }
            if let value = try? row.decode(column: column, as: String.self) { return value }
            return try row.decode(column: column, as: Int.self).description
        }
        let version = try await text("SELECT sqlite_version() AS v", "v") ?? "?"
        let cipher = try await text("PRAGMA cipher_version", "cipher_version")
        let journal = try await text("PRAGMA journal_mode", "journal_mode") ?? "?"
        let synchronous = try await text("PRAGMA synchronous", "synchronous") ?? "?"
        let names = ["0": "OFF", "1": "NORMAL", "2": "FULL", "3": "EXTRA"]
        switch (database, cipher) {
        case (.sqliteDriver, nil): break
        case (.sqliteDriver, let cipher?): throw LoadServerError("fluent-sqlite-driver runs on SQLCipher \(cipher)")
        case (_, nil): throw LoadServerError("\(database.rawValue) does not run on SQLCipher")
        default: break
        }
        return [cipher.map { "SQLCipher \($0)" }, "SQLite \(version)", "journal_mode=\(journal)",
                "synchronous=\(names[synchronous] ?? synchronous)"].compactMap { $0 }.joined(separator: ", ")
    }
}

struct LoadServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
