import FluentKit
import Logging
import SQLCipherKit
import SQLCipherSQLKit

/// FluentKit's driver for an encrypted SQLCipher database: makes a ``FluentSQLCipherDatabase`` per request over
/// one shared ``DatabasePool``, and closes the pool at shutdown.
struct FluentSQLCipherDriver: DatabaseDriver {
    let pool: DatabasePool
    let encoder: SQLCipherDataEncoder
    let decoder: SQLCipherDataDecoder
    let sqlLogLevel: Logger.Level?

    func makeDatabase(with context: DatabaseContext) -> any FluentKit.Database {
        FluentSQLCipherDatabase(
            sql: SQLCipherSQLDatabase(pool: pool, eventLoop: context.eventLoop, logger: context.logger,
                                      encoder: encoder, decoder: decoder, queryLogLevel: sqlLogLevel),
            context: context)
    }

    func shutdown() {
        pool.close()
    }
}
