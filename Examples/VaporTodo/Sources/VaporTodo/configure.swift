import Fluent
import FluentSQLCipherDriver
import SQLCipherKit
import Vapor

/// Sets the app up: the encrypted database (opened here, so a wrong key fails boot), its migration, the routes.
///
/// - Throws: ``TodoBootError`` when the key cannot be read or does not open the database.
public func configure(_ app: Application, settings: TodoSettings) async throws {
    let key = try settings.key()
    let database: DatabaseConfigurationFactory
    do {
        database = try .sqlcipher(path: settings.databasePath, key: key)
    } catch {
        throw TodoBootError("cannot open the database '\(settings.databasePath)': \(error)")
    }
    try await configure(app, database: database, as: .sqlcipher)
}

/// Sets the app up on a database the caller configured: `database` registered as `id` (the app's default
/// database), the `todos` migration run, the routes registered. ``configure(_:settings:)`` calls it with the
/// encrypted database; the load benchmark (Benchmarks/Load) with each database it compares.
public func configure(_ app: Application, database: DatabaseConfigurationFactory, as id: DatabaseID) async throws {
    app.databases.use(database, as: id)
    app.migrations.add(CreateTodo(), to: id)
    try await app.autoMigrate()
    try app.register(collection: TodoController())
}
