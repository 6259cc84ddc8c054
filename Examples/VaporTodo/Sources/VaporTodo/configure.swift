import Fluent
import FluentSQLCipherDriver
import SQLCipherKit
import Vapor

/// Sets the app up: the encrypted database (opened here, so a wrong key fails boot), its migration, the routes, and
/// what the app reports (``TodoObservability``: nothing by default).
///
/// - Throws: ``TodoBootError`` when the key cannot be read or does not open the database.
public func configure(_ app: Application, settings: TodoSettings,
                      observability: TodoObservability = .init()) async throws {
    let key = try settings.key()
    let database: DatabaseConfigurationFactory
    do {
        database = try .sqlcipher(path: settings.databasePath, key: key,
                                  configuration: observability.poolConfiguration)
    } catch {
        throw TodoBootError("cannot open the database '\(settings.databasePath)': \(error)")
    }
    try await configure(app, database: database, as: .sqlcipher, observability: observability)
}

/// Sets the app up on a database the caller configured: `database` registered as `id` (the app's default
/// database), the `todos` migration run, the routes registered, with the request spans and `/metrics` route
/// `observability` asks for (its observer belongs in `database`'s own configuration).
/// ``configure(_:settings:observability:)`` calls it with the encrypted database; the load benchmark
/// (Benchmarks/Load) with each database it compares.
public func configure(_ app: Application, database: DatabaseConfigurationFactory, as id: DatabaseID,
                      observability: TodoObservability = .init()) async throws {
    observability.register(on: app)
    app.databases.use(database, as: id)
    app.migrations.add(CreateTodo(), to: id)
    try await app.autoMigrate()
    try app.register(collection: TodoController())
}
