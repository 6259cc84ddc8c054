extension Database {
    /// How ``Database`` opens a connection.
    public struct Configuration: Sendable {
        /// Read-only, read-write, or read-write creating the file. Default: ``OpenMode/readWriteCreate``.
        public var mode: OpenMode
        /// The cipher settings; all nil (SQLCipher 4 defaults) by default.
        public var cipher: CipherSettings
        /// How long a statement waits for another connection's lock before failing with
        /// ``SQLCipherError/Kind/busy``. Default: 5 seconds.
        public var busyTimeout: Duration
        /// Whether opening checks `PRAGMA cipher_version` and throws ``SQLCipherError/Kind/notSQLCipher``
        /// without it. Default: true.
        ///
        /// - Important: For tests only (for example, to exercise a stand-in engine). Turning it off in an app
        ///   removes the guard against writing plaintext with a plain SQLite.
        public var verifiesCipherEngine: Bool
        /// The most memory, in bytes, the connection's page cache may hold (`PRAGMA cache_size`). Default (nil):
        /// ``defaultEncryptedPageCacheSize`` (16 MiB) for an encrypted connection, SQLite's 2,000 KiB for a plain
        /// one.
        ///
        /// An encrypted connection decrypts and authenticates every page it reads from the file, about 5 µs per
        /// 4 KiB page with SQLCipher 4's defaults: a cache that holds the working set pays that once per page
        /// instead of once per read. The cache fills only as pages are read, so the memory is spent only on
        /// databases that large, up to this cap per connection (a ``DatabasePool`` of 1 writer and 7 readers: up
        /// to 8 times it). BENCHMARKS.md, "Page cache size", has the measured curve this default comes from.
        public var pageCacheSize: Int?
        /// Whether the connection enforces foreign keys (`PRAGMA foreign_keys = ON`, set at open). Default: false,
        /// SQLite's default: `REFERENCES` clauses are parsed but not checked.
        ///
        /// SQLite keeps the setting per connection, so it belongs here rather than in SQL: every connection a
        /// ``DatabasePool`` opens gets it, including the readers it reopens after a rekey.
        public var foreignKeys: Bool
        /// What a commit does to survive a power cut (`PRAGMA synchronous`, set at open). Default: ``Synchronous/extra``:
        /// every acknowledged commit survives a power cut, in rollback-journal and in WAL mode.
        ///
        /// SQLite's own default, ``Synchronous/full``, can lose the last acknowledged commit in rollback-journal
        /// mode: the commit ends by deleting the journal without syncing the folder, and a power cut can bring
        /// the journal back, which rolls the commit back. Ask for less by name only (``Synchronous``).
        public var synchronous: Synchronous
        /// What reports the connection's statements, transactions, write-ahead-log commits, checkpoints and busy
        /// retries (and a pool's waits). Default: nil: nothing is measured, and no hook is installed.
        ///
        /// See ``DatabaseObserver``; the SQLCipherKitObservability package maps the events to swift-log,
        /// swift-metrics and swift-distributed-tracing.
        public var observer: (any DatabaseObserver)?

        /// The page cache of an encrypted connection when ``pageCacheSize`` is nil: 16 MiB.
        public static let defaultEncryptedPageCacheSize = 16 << 20

        /// Set by the library's own inspections (``Database/checkIntegrity(path:key:cipher:)``,
        /// ``Database/inspect(path:key:cipher:)``, ``Database/detectFormat(path:key:)``), which run only the
        /// library's SQL: with ``OpenMode/readOnly``, the connection leaves the folder as it found it (see
        /// `Database.inspectionFlags(path:)`).
        var leavesFolderAsFound = false

        /// A configuration; the defaults open read-write, creating the file, with SQLCipher 4 settings.
        public init(mode: OpenMode = .readWriteCreate, cipher: CipherSettings = CipherSettings(),
                    busyTimeout: Duration = .seconds(5), verifiesCipherEngine: Bool = true,
                    pageCacheSize: Int? = nil, foreignKeys: Bool = false, synchronous: Synchronous = .extra,
                    observer: (any DatabaseObserver)? = nil) {
            self.mode = mode
            self.cipher = cipher
            self.busyTimeout = busyTimeout
            self.verifiesCipherEngine = verifiesCipherEngine
            self.pageCacheSize = pageCacheSize
            self.foreignKeys = foreignKeys
            self.synchronous = synchronous
            self.observer = observer
        }

        /// A read-only configuration for the library's own inspections, which leave the folder as they found it.
        static func inspection(cipher: CipherSettings = CipherSettings()) -> Configuration {
            var configuration = Configuration(mode: .readOnly, cipher: cipher)
            configuration.leavesFolderAsFound = true
            return configuration
        }
    }
}
