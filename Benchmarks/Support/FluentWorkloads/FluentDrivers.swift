import BenchmarkSupport
import FluentKit
import FluentSQLCipherDriver
import FluentSQLiteDriver
import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLCipherKit
import SQLKit

/// The Fluent drivers compared, each configured as its documentation shows: one line in an app's configuration.
public enum FluentDriverVariant: String, CaseIterable, Sendable {
    /// FluentSQLCipherDriver, `.sqlcipher(path:key:)` with a raw key (no key derivation is measured) and its default
    /// pool (one writer, 4 readers, WAL), on SQLCipher.
    case encrypted = "FluentSQLCipherDriver encrypted"
    /// FluentSQLCipherDriver, `.sqlcipher(unencryptedPath:)`: the same pool (one writer, 4 readers, WAL) and engine,
    /// no key, no encryption.
    case unencrypted = "FluentSQLCipherDriver unencrypted"
    /// vapor/fluent-sqlite-driver 4.9.0, `.sqlite(.file(path))`: one connection per event loop, on sqlite-nio's
    /// bundled plain SQLite (rollback journal, its defaults).
    case sqliteDriver = "fluent-sqlite-driver"

    /// The raw key of the encrypted variant (SQLCipher 4 defaults, no key derivation).
    static let rawKeyBytes: [UInt8] = (0..<Key.rawKeyLength).map { UInt8(truncatingIfNeeded: $0 &* 53 &+ 7) }

    /// The first 16 bytes of every plain SQLite file.
    static let plainHeader = Array("SQLite format 3\0".utf8)

    var databaseID: DatabaseID {
        switch self {
        case .encrypted, .unencrypted: .sqlcipher
        case .sqliteDriver: .sqlite
        }
    }

    /// FluentKit's databases with this driver on `path`: the event loops and thread pool a Vapor app has
    /// (`MultiThreadedEventLoopGroup.singleton`, one loop per core, and `NIOThreadPool.singleton`).
    public func open(_ path: String) throws -> OpenFluentDatabase {
        let databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
        switch self {
        case .encrypted:
            databases.use(try .sqlcipher(path: path, key: .rawKey(FluentDriverVariant.rawKeyBytes)), as: .sqlcipher)
        case .unencrypted:
            databases.use(try .sqlcipher(unencryptedPath: path), as: .sqlcipher)
        case .sqliteDriver:
            databases.use(.sqlite(.file(path)), as: .sqlite)
        }
        return OpenFluentDatabase(variant: self, databases: databases, path: path)
    }

    /// Checks the file the variant wrote, once its databases are shut down: the encrypted one has no plain SQLite
    /// header and does not hold `marker` (text every row carries); the unencrypted one's and sqlite-nio's start with
    /// the header and hold it.
    public func checkFile(_ path: String, marker: String) throws {
        guard let contents = FileManager.default.contents(atPath: path), contents.count >= 16 else {
            throw FluentBenchmarkFailure("\(rawValue): \(path) is missing or empty")
        }
        let hasHeader = Array(contents.prefix(16)) == FluentDriverVariant.plainHeader
        let hasMarker = contents.range(of: Data(marker.utf8)) != nil
        switch self {
        case .encrypted:
            guard !hasHeader, !hasMarker else {
                throw FluentBenchmarkFailure("\(rawValue) wrote a readable file (header \(hasHeader), marker \(hasMarker))")
            }
        case .unencrypted, .sqliteDriver:
            guard hasHeader, hasMarker else {
                throw FluentBenchmarkFailure("\(rawValue) wrote no plain SQLite file (header \(hasHeader), marker \(hasMarker))")
            }
        }
    }
}

/// A variant's FluentKit databases on one file.
public final class OpenFluentDatabase: Sendable {
    public let variant: FluentDriverVariant
    public let databases: Databases
    public let path: String
    private let logger = Logger(label: "FluentBenchmarks")

    init(variant: FluentDriverVariant, databases: Databases, path: String) {
        self.variant = variant
        self.databases = databases
        self.path = path
    }

    /// A database on the next event loop, as each request of a Vapor app gets one on its own loop.
    public func db() throws -> any FluentKit.Database {
        guard let db = databases.database(variant.databaseID, logger: logger,
                                          on: MultiThreadedEventLoopGroup.singleton.next()) else {
            throw FluentBenchmarkFailure("no database \(variant.databaseID)")
        }
        return db
    }

    /// The engine behind this variant's connections, asked through Fluent's own database: `sqlite_version()`,
    /// SQLCipher's `PRAGMA cipher_version` (nil on plain SQLite, which ignores the pragma), the journal mode and the
    /// synchronous setting a connection has.
    public func engine() async throws -> (sqlite: String, cipher: String?, journal: String, synchronous: String) {
        guard let sql = try db() as? any SQLDatabase else { throw FluentBenchmarkFailure("no SQLDatabase") }
        let version = try await sql.raw("SELECT sqlite_version() AS v").first()?.decode(column: "v", as: String.self)
        let cipher = try await sql.raw("PRAGMA cipher_version").first()?.decode(column: "cipher_version", as: String.self)
        let journal = try await sql.raw("PRAGMA journal_mode").first()?.decode(column: "journal_mode", as: String.self)
        let synchronous = try await sql.raw("PRAGMA synchronous").first()?.decode(column: "synchronous", as: Int.self)
        let names = [0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"]
        return (version ?? "", cipher, journal ?? "?", synchronous.map { names[$0] ?? "\($0)" } ?? "?")
    }

    /// Shuts the databases down (closing the pool or the connections, which checkpoints a WAL file).
    public func shutdown() async {
        await databases.shutdownAsync()
    }
}

/// Proves which engine each variant runs on, in this process, and that the two never mix: FluentSQLCipherDriver
/// answers `PRAGMA cipher_version` and writes a file with no plain SQLite header; fluent-sqlite-driver answers no
/// `cipher_version`, reports sqlite-nio's SQLite version and writes a plain SQLite file.
public enum FluentEngineProof {
    public static func prove(in folder: ScratchFolder) async throws -> String {
        var facts: [String] = []
        for variant in FluentDriverVariant.allCases {
            let path = folder.freshFile("proof-\(variant).db")
            let open = try variant.open(path)
            let (version, cipher, journal, synchronous) = try await open.engine()
            let settings = "journal_mode=\(journal), synchronous=\(synchronous)"
            let db = try open.db()
            try await FluentItem.migrate(on: db)
            let data = FluentData()
            try await [FluentItem(data, 0), FluentItem(data, 1)].create(on: db)
            await open.shutdown()
            try variant.checkFile(path, marker: "fluent-benchmark item")
            switch variant {
            case .encrypted, .unencrypted:
                guard let cipher, !cipher.isEmpty else {
                    throw FluentBenchmarkFailure("\(variant.rawValue) does not run on SQLCipher (no cipher_version)")
                }
                facts.append("\(variant.rawValue): SQLCipher \(cipher) on SQLite \(version), \(settings), "
                    + (variant == .encrypted ? "file has no SQLite header" : "file starts with \"SQLite format 3\""))
            case .sqliteDriver:
                guard cipher == nil else {
                    throw FluentBenchmarkFailure("\(variant.rawValue) runs on SQLCipher (cipher_version \(cipher ?? ""))")
                }
                facts.append("\(variant.rawValue): SQLite \(version) (sqlite-nio's, symbols sqlite_nio_sqlite3_*), \(settings), "
                    + "PRAGMA cipher_version returns no row, file starts with \"SQLite format 3\"")
            }
        }
        return facts.joined(separator: "; ")
    }
}
