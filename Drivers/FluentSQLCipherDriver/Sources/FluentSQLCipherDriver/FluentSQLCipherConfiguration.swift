import FluentKit
import Logging
import SQLCipherKit
import SQLCipherSQLKit

extension DatabaseConfigurationFactory {
    /// An encrypted SQLite database at `path`, opened with `key`, through SQLCipherKit's `DatabasePool` (one
    /// writer, several readers).
    ///
    /// ```swift
    /// app.databases.use(try .sqlcipher(path: "/var/lib/app/app.db", key: .fromFile(keyPath, format: .passphrase)),
    ///                   as: .sqlcipher)
    /// ```
    ///
    /// The file is opened here, once: a wrong key fails at boot with `SQLCipherError.Kind.wrongKeyOrNotADatabase`,
    /// not at the first request. Foreign keys are enforced (`configuration.database.foreignKeys` is turned on).
    ///
    /// - Parameters:
    ///   - path: The database file; created, encrypted with `key`, when missing.
    ///   - key: The key (a passphrase is derived once for the whole pool).
    ///   - configuration: Readers, cipher settings, busy timeout, the writer's wait limit.
    ///   - encoder: How bound values are stored (fluent-sqlite-driver's rules by default).
    ///   - decoder: How stored values are read.
    ///   - sqlLogLevel: The level statements are logged at; bound values are never logged.
    /// - Throws: `SQLCipherError` when the database does not open with this key and configuration.
    public static func sqlcipher(path: String, key: Key, configuration: DatabasePool.Configuration = .init(),
                                 encoder: SQLCipherDataEncoder = .init(), decoder: SQLCipherDataDecoder = .init(),
                                 sqlLogLevel: Logger.Level? = .debug) throws -> Self {
        var configuration = configuration
        configuration.database.foreignKeys = true
        return make(try DatabasePool(path: path, key: key, configuration: configuration),
                    encoder: encoder, decoder: decoder, sqlLogLevel: sqlLogLevel)
    }

    /// A database that is *not* encrypted at `path`, through SQLCipherKit's `DatabasePool` (one writer, several
    /// readers), for data that needs no encryption: a cache, public reference data, or the plaintext side of a
    /// comparison. Plaintext only because this name asks for it; everything else is as
    /// ``sqlcipher(path:key:configuration:encoder:decoder:sqlLogLevel:)`` (WAL, `synchronous=EXTRA`, foreign keys
    /// on, the same SQL guard and error mapping), so the driver can stand in for fluent-sqlite-driver everywhere.
    ///
    /// ```swift
    /// app.databases.use(try .sqlcipher(unencryptedPath: "/var/cache/app/lookup.db"), as: .init(string: "lookup"))
    /// ```
    ///
    /// - Parameters:
    ///   - path: The database file; created, as plain SQLite, when missing.
    ///   - configuration: Readers, busy timeout, the writer's wait limit (cipher settings are not used).
    ///   - encoder: How bound values are stored (fluent-sqlite-driver's rules by default).
    ///   - decoder: How stored values are read.
    ///   - sqlLogLevel: The level statements are logged at; bound values are never logged.
    /// - Throws: `SQLCipherError` when the file does not open as a plaintext database (an encrypted file fails
    ///   with `SQLCipherError.Kind.wrongKeyOrNotADatabase`).
    public static func sqlcipher(unencryptedPath path: String, configuration: DatabasePool.Configuration = .init(),
                                 encoder: SQLCipherDataEncoder = .init(), decoder: SQLCipherDataDecoder = .init(),
                                 sqlLogLevel: Logger.Level? = .debug) throws -> Self {
        var configuration = configuration
        configuration.database.foreignKeys = true
        return make(try DatabasePool(unencryptedPath: path, configuration: configuration),
                    encoder: encoder, decoder: decoder, sqlLogLevel: sqlLogLevel)
    }

    private static func make(_ pool: DatabasePool, encoder: SQLCipherDataEncoder, decoder: SQLCipherDataDecoder,
                             sqlLogLevel: Logger.Level?) -> Self {
        .init {
            FluentSQLCipherConfiguration(pool: pool, encoder: encoder, decoder: decoder, sqlLogLevel: sqlLogLevel,
                                         middleware: [])
        }
    }
}

/// The configuration ``DatabaseConfigurationFactory/sqlcipher(path:key:configuration:encoder:decoder:sqlLogLevel:)``
/// and ``DatabaseConfigurationFactory/sqlcipher(unencryptedPath:configuration:encoder:decoder:sqlLogLevel:)`` make:
/// the opened pool, handed to the driver.
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
