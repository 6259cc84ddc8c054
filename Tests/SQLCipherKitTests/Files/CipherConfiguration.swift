import SQLCipherKit
import Testing

/// One cipher configuration a database can be written under: the settings a caller passes at open and the kind of
/// key. The matrix (``all``) is what every promise is tested under (`CipherConfigurationMatrixTests`, and the routes
/// and spellings of the SQL guard): every page size SQLCipher writes (1024 to 65536), SQLCipher 1 to 3's settings, HMAC off, each
/// KDF and HMAC algorithm, a low KDF iteration count, a plaintext header, a raw key with its salt.
struct CipherConfiguration: CustomTestStringConvertible, Sendable {
    enum KeyKind: Sendable { case rawKey, rawKeyWithSalt, passphrase }

    let name: String
    let cipher: CipherSettings
    var keyKind: KeyKind = .rawKey

    var testDescription: String { name }

    /// SQLCipher 4's defaults: the configuration every test before issue 43 ran under.
    static let sqlcipher4 = CipherConfiguration(name: "SQLCipher 4 defaults", cipher: CipherSettings())

    static let all: [CipherConfiguration] = [
        sqlcipher4,
        // No 512: SQLCipher's engine fails every write on it ("out of memory": too little room beside its reserve);
        // CipherSettings.validate refuses it (CipherConfigurationMatrixTests.pageTooSmall).
        CipherConfiguration(name: "page size 1024", cipher: CipherSettings(pageSize: 1024)),
        CipherConfiguration(name: "page size 8192", cipher: CipherSettings(pageSize: 8192)),
        CipherConfiguration(name: "page size 16384", cipher: CipherSettings(pageSize: 16384)),
        CipherConfiguration(name: "page size 65536", cipher: CipherSettings(pageSize: 65536)),
        CipherConfiguration(name: "compat 1", cipher: CipherSettings(compatibility: 1), keyKind: .passphrase),
        CipherConfiguration(name: "compat 2", cipher: CipherSettings(compatibility: 2), keyKind: .passphrase),
        CipherConfiguration(name: "compat 3", cipher: CipherSettings(compatibility: 3), keyKind: .passphrase),
        CipherConfiguration(name: "HMAC off", cipher: CipherSettings(usesHMAC: false)),
        CipherConfiguration(name: "HMAC and KDF SHA1",
                            cipher: CipherSettings(kdfIterations: 1_000, hmacAlgorithm: .sha1, kdfAlgorithm: .sha1),
                            keyKind: .passphrase),
        CipherConfiguration(name: "HMAC and KDF SHA256", cipher: .sha256),
        CipherConfiguration(name: "KDF 1000 iterations", cipher: CipherSettings(kdfIterations: 1_000),
                            keyKind: .passphrase),
        CipherConfiguration(name: "plaintext header 32",
                            cipher: CipherSettings(plaintextHeaderSize: 32, salt: Array(0x40..<0x50))),
        CipherConfiguration(name: "raw key with salt", cipher: CipherSettings(), keyKind: .rawKeyWithSalt),
    ]

    /// A new key of this configuration's kind (a fresh random one each call, unless `seed` repeats).
    func makeKey(_ seed: UInt8 = 0x11) throws -> Key {
        let bytes = (0..<32).map { UInt8(truncatingIfNeeded: Int($0) * 7 + Int(seed)) }
        switch keyKind {
        case .rawKey: return try .rawKey(bytes)
        case .rawKeyWithSalt: return try .rawKey(bytes, salt: Array(0x20..<0x30))
        case .passphrase: return try .passphrase("matrix passphrase \(seed)")
        }
    }

    /// The configuration to open a database of this configuration with.
    func database(mode: OpenMode = .readWriteCreate) -> Database.Configuration {
        Database.Configuration(mode: mode, cipher: cipher)
    }

    /// Opens (or creates) the database at `path` under this configuration, with ``makeKey(_:)``'s key for `seed`, an
    /// observer and a busy timeout when given.
    func open(_ path: String, seed: UInt8 = 0x11, mode: OpenMode = .readWriteCreate,
              observer: (any DatabaseObserver)? = nil, busyTimeout: Duration? = nil) throws -> Database {
        var settings = database(mode: mode)
        settings.observer = observer
        if let busyTimeout { settings.busyTimeout = busyTimeout }
        return try Database(path: path, key: makeKey(seed), configuration: settings)
    }

    /// Whether pages carry an HMAC (`cipher_integrity_check` has something to check): SQLCipher 1 and HMAC off have none.
    var usesHMAC: Bool { cipher.usesHMAC ?? (cipher.compatibility ?? 4 >= 2) }

    /// Whether these are SQLCipher 1 to 3's settings, which `Database.migrate` upgrades.
    var isEarlierVersion: Bool { (1...3).contains(cipher.compatibility ?? 4) }
}
