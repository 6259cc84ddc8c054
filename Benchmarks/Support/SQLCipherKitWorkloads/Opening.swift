import BenchmarkSupport
import SQLCipherKit

/// Opening encrypted databases: what key derivation costs, and what a pool saves by deriving once.
public final class OpeningVariants {
    /// The number of connections of the pool comparison: 1 writer and 7 readers.
    public static let connections = 8
    private let scratch: () throws -> ScratchFolder
    private var files: (passphrase: String, rawKey: String, pool: String)?

    /// Opening variants whose databases go in the folder `scratch` gives.
    public init(scratch: @escaping () throws -> ScratchFolder) {
        self.scratch = scratch
    }

    /// The passphrase of the passphrase-keyed databases.
    private var passphrase: Key {
        get throws { try Key.passphrase("benchmark passphrase") }
    }

    /// One database keyed with the passphrase, one with the raw key, and one in WAL mode for the pools.
    private func fixtures() throws -> (passphrase: String, rawKey: String, pool: String) {
        if let files { return files }
        let folder = try scratch()
        let created = (passphrase: folder.freshFile("open-passphrase.db"), rawKey: folder.freshFile("open-raw.db"),
                       pool: folder.freshFile("open-pool.db"))
        for (path, key) in [(created.passphrase, try passphrase), (created.rawKey, try Key.rawKey(rawKeyBytes))] {
            let database = try Database(path: path, key: key)
            try database.execute("CREATE TABLE t(a); INSERT INTO t VALUES (1)")
            database.close()
        }
        let pool = try DatabasePool(path: created.pool, key: try passphrase, configuration: .init(readerCount: 1))
        try pool.write { try $0.execute("CREATE TABLE t(a); INSERT INTO t VALUES (1)") }
        pool.close()
        files = created
        return created
    }

    /// One connection, keyed with the passphrase (PBKDF2-HMAC-SHA512, 256,000 iterations) or the raw key.
    public var oneConnection: [Variant] {
        [
            Variant("passphrase") { [self] in
                let path = try fixtures().passphrase
                let key = try passphrase
                return try SideBySide.time { try Database(path: path, key: key).close() }
            },
            Variant("raw key") { [self] in
                let path = try fixtures().rawKey
                let key = try Key.rawKey(rawKeyBytes)
                return try SideBySide.time { try Database(path: path, key: key).close() }
            },
        ]
    }

    /// Eight connections, each deriving the passphrase's key, versus a pool of 1 writer + 7 readers deriving it once.
    public var pool: [Variant] {
        [
            Variant("per-connection KDF") { [self] in
                let path = try fixtures().pool
                let key = try passphrase
                return try SideBySide.time {
                    var opened: [Database] = []
                    for _ in 0..<OpeningVariants.connections {
                        let database = try Database(path: path, key: key)
                        _ = try database.scalar(Int.self, "SELECT a FROM t")
                        opened.append(database)
                    }
                    opened.forEach { $0.close() }
                }
            },
            Variant("KDF once (pool)") { [self] in
                let path = try fixtures().pool
                let key = try passphrase
                return try SideBySide.time {
                    let pool = try DatabasePool(path: path, key: key,
                                                configuration: .init(readerCount: OpeningVariants.connections - 1))
                    _ = try pool.read { try $0.scalar(Int.self, "SELECT a FROM t") }
                    pool.close()
                }
            },
        ]
    }
}
