import FluentKit
import FluentSQLCipherDriver
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import SQLCipherKit

/// The app: the encrypted database (opened here, so a wrong key fails boot), FluentKit's `Databases` as a service
/// of the app's ServiceGroup (it closes the database on graceful shutdown), the migration run before the server
/// starts, and the routes; with `telemetry`, the database's observer, `/metrics` and (with traces on) the request
/// spans and swift-otel's exporter as a service (``TodoTelemetry``).
///
/// - Throws: ``TodoBootError`` when the key cannot be read or does not open the database.
public func buildApplication(settings: TodoSettings, server: ApplicationConfiguration = .init(),
                             logger: Logger = Logger(label: "hummingbird-todo"),
                             telemetry: TodoTelemetry? = nil) async throws
    -> some ApplicationProtocol {
    let key = try settings.key()
    let factory: DatabaseConfigurationFactory
    do {
        factory = try .sqlcipher(path: settings.databasePath, key: key,
                                 configuration: telemetry?.poolConfiguration ?? .init())
    } catch {
        throw TodoBootError("cannot open the database '\(settings.databasePath)': \(error)")
    }
    let databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
    databases.use(factory, as: .sqlcipher)
    let migrations = Migrations()
    migrations.add(CreateTodo())
    let migrator = Migrator(databases: databases, migrations: migrations, logger: logger,
                            on: databases.eventLoopGroup.any())

    let router = Router(context: BasicRequestContext.self)
    telemetry?.register(on: router)
    TodoController(databases: databases).addRoutes(to: router.group("todos"))
    var app = Application(router: router, configuration: server, logger: logger)
    // swift-otel's exporter before the databases: the app's group shuts its services down in reverse order (the
    // server, its date cache, the databases, then this), so the last requests' spans are exported.
    if let tracing = telemetry?.tracing { app.addServices(tracing) }
    app.addServices(databases)
    app.beforeServerStarts {
        try await migrator.setupIfNeeded().get()
        try await migrator.prepareBatch().get()
    }
    return app
}
