import FluentKit
import Logging
import SQLCipherKit
import SQLCipherSQLKit

extension DatabaseConfigurationFactory {
    /// An encrypted SQLite database at `path`, opened with `key`, through SQLCipherKit's ``DatabasePool`` (one
    /// writer, several readers).
    ///
    /// ```swift
    /// app.databases.use(try .sqlcipher(path: "/var/lib/app/app.db", key: .fromFile(keyPath, format: .passphrase)),
    ///                   as: .sqlcipher)
    /// ```
    ///
    /// The file is opened here, once: a wrong key fails at boot with ``SQLCipherError/Kind/wrongKeyOrNotADatabase``,
    /// not at the first request. Foreign keys are enforced (`configuration.database.foreignKeys` is turned on).
    ///
    /// - Parameters:
    ///   - path: The database file; created, encrypted with `key`, when missing.
    ///   - key: The key (a passphrase is derived once for the whole pool).
    ///   - configuration: Readers, cipher settings, busy timeout, the writer's wait limit.
    ///   - encoder: How bound values are stored (fluent-sqlite-driver's rules by default).
    ///   - decoder: How stored values are read.
    ///   - sqlLogLevel: The level statements are logged at; bound values are never logged.
    /// - Throws: ``SQLCipherError`` when the database does not open with this key and configuration.
    public static func sqlcipher(path: String, key: Key, configuration: DatabasePool.Configuration = .init(),
                                 encoder: SQLCipherDataEncoder = .init(), decoder: SQLCipherDataDecoder = .init(),
                                 sqlLogLevel: Logger.Level? = .debug) throws -> Self {
        var configuration = configuration
        configuration.database.foreignKeys = true
        let pool = try DatabasePool(path: path, key: key, configuration: configuration)
        return .init {
            FluentSQLCipherConfiguration(pool: pool, encoder: encoder, decoder: decoder, sqlLogLevel: sqlLogLevel,
                                         middleware: [])
        }
    }
}

/// The configuration ``DatabaseConfigurationFactory/sqlcipher(path:key:configuration:encoder:decoder:sqlLogLevel:)``
/// makes: the opened pool, handed to the driver.
struct FluentSQLCipherConfiguration: DatabaseConfiguration {
    let pool: DatabasePool
    let encoder: SQLCipherDataEncoder
    let decoder: SQLCipherDataDecoder
    let sqlLogLevel: Logger.Level?
    var middleware: [any AnyModelMiddleware]

    func makeDriver(for databases: Databases) -> any DatabaseDriver {
        FluentSQLCipherDriver(pool: pool, encoder: encoder, decoder: decoder, sqlLogLevel: sqlLogLevel)
    }
}
