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
    app.databases.use(database, as: .sqlcipher)
    app.migrations.add(CreateTodo())
    try await app.autoMigrate()
    try app.register(collection: TodoController())
}
