/// SQLCipher's cipher settings for a database: leave a setting nil to keep SQLCipher 4's default.
///
/// Settings are applied right after the key and before anything is read, in the order SQLCipher requires:
/// ``compatibility`` first (it sets a whole bundle of defaults), then each explicit setting over it.
///
/// ```swift
/// // Open a file written by SQLCipher 3 without migrating it.
/// var configuration = Database.Configuration()
/// configuration.cipher = CipherSettings(compatibility: 3)
/// let db = try Database(path: path, key: key, configuration: configuration)
/// ```
///
/// | setting | SQLCipher 4 default | pragma |
/// | --- | --- | --- |
/// | ``compatibility`` | 4 | `cipher_compatibility` |
/// | ``pageSize`` | 4096 | `cipher_page_size` |
/// | ``kdfIterations`` | 256,000 | `kdf_iter` |
/// | ``usesHMAC`` | true | `cipher_use_hmac` |
/// | ``hmacAlgorithm`` | HMAC-SHA512 | `cipher_hmac_algorithm` |
/// | ``kdfAlgorithm`` | PBKDF2-HMAC-SHA512 | `cipher_kdf_algorithm` |
/// | ``plaintextHeaderSize`` | 0 | `cipher_plaintext_header_size` |
/// | ``salt`` | the file's first 16 bytes | `cipher_salt` |
/// | ``memorySecurity`` | false | `cipher_memory_security` (process-wide) |
public struct CipherSettings: Sendable, Equatable {
    /// The HMAC that authenticates each page.
    public enum HMACAlgorithm: String, Sendable, CaseIterable {
        /// HMAC-SHA1 (SQLCipher 2 and 3).
        case sha1 = "HMAC_SHA1"
        /// HMAC-SHA256.
        case sha256 = "HMAC_SHA256"
        /// HMAC-SHA512 (SQLCipher 4).
        case sha512 = "HMAC_SHA512"
    }

    /// The key derivation function that turns a passphrase into the encryption key.
    public enum KDFAlgorithm: String, Sendable, CaseIterable {
        /// PBKDF2 with HMAC-SHA1 (SQLCipher 1 to 3).
        case sha1 = "PBKDF2_HMAC_SHA1"
        /// PBKDF2 with HMAC-SHA256.
        case sha256 = "PBKDF2_HMAC_SHA256"
        /// PBKDF2 with HMAC-SHA512 (SQLCipher 4).
        case sha512 = "PBKDF2_HMAC_SHA512"
    }

    /// The defaults of SQLCipher major version 1, 2, 3 or 4, applied before the other settings.
    public var compatibility: Int?
    /// The page size in bytes: a power of two from 512 to 65,536.
    public var pageSize: Int?
    /// The number of PBKDF2 iterations for a passphrase key (at least 1; ignored for raw keys).
    public var kdfIterations: Int?
    /// Whether each page carries an HMAC (true except for SQLCipher 1 files).
    public var usesHMAC: Bool?
    /// The page HMAC.
    public var hmacAlgorithm: HMACAlgorithm?
    /// The passphrase key derivation.
    public var kdfAlgorithm: KDFAlgorithm?
    /// How many bytes at the start of the file stay unencrypted (0, or a multiple of 16 below the page size).
    /// With 32,
    /// the file starts with the standard `SQLite format 3` header, which some platforms need (iOS shared
    /// containers); the salt must then be kept elsewhere and passed in ``salt``.
    public var plaintextHeaderSize: Int?
    /// The 16-byte salt, for files whose salt is not in their first bytes (``plaintextHeaderSize`` > 0), or
    /// to choose the salt of a new database.
    public var salt: [UInt8]?
    /// Whether SQLCipher wipes and locks all the memory it allocates. Process-wide, and slow: it applies to
    /// every connection once set.
    public var memorySecurity: Bool?

    /// SQLCipher 4 with SHA-256 instead of SHA-512: pages authenticated with HMAC-SHA256 and passphrases derived
    /// with PBKDF2-HMAC-SHA256 (256,000 iterations, AES-256-CBC and 4 KiB pages as by default).
    ///
    /// Faster where the CPU computes SHA-256 in hardware (x86 SHA extensions, ARMv8 crypto): the HMAC is most of
    /// the cost of reading or writing an encrypted page (BENCHMARKS.md, "Cipher profiles"). Still 256-bit
    /// authentication, as SQLCipher 4 supports it; but it is **not** SQLCipher 4's default format: every program
    /// that opens the file must be given the same settings (`PRAGMA cipher_hmac_algorithm = HMAC_SHA256` and
    /// `PRAGMA cipher_kdf_algorithm = PBKDF2_HMAC_SHA256` after the key, in the SQLCipher shell or another
    /// binding). A program using the defaults gets ``SQLCipherError/Kind/wrongKeyOrNotADatabase``. Convert an
    /// existing file with ``Database/export(to:key:cipher:replacing:progress:)``.
    ///
    /// ```swift
    /// let db = try Database(path: path, key: key, configuration: .init(cipher: .sha256))
    /// ```
    public static let sha256 = CipherSettings(hmacAlgorithm: .sha256, kdfAlgorithm: .sha256)

    /// Settings; every nil keeps SQLCipher 4's default.
    public init(compatibility: Int? = nil, pageSize: Int? = nil, kdfIterations: Int? = nil, usesHMAC: Bool? = nil,
                hmacAlgorithm: HMACAlgorithm? = nil, kdfAlgorithm: KDFAlgorithm? = nil,
                plaintextHeaderSize: Int? = nil, salt: [UInt8]? = nil, memorySecurity: Bool? = nil) {
        self.compatibility = compatibility
        self.pageSize = pageSize
        self.kdfIterations = kdfIterations
        self.usesHMAC = usesHMAC
        self.hmacAlgorithm = hmacAlgorithm
        self.kdfAlgorithm = kdfAlgorithm
        self.plaintextHeaderSize = plaintextHeaderSize
        self.salt = salt
        self.memorySecurity = memorySecurity
    }

    /// Whether every setting is nil (SQLCipher 4 defaults).
    public var isDefault: Bool { self == CipherSettings() }

    /// Throws ``SQLCipherError/Kind/invalidArgument`` naming the first setting out of range.
    public func validate() throws(SQLCipherError) {
        if let compatibility, !(1...4).contains(compatibility) {
            throw .api(.invalidArgument, "compatibility must be 1, 2, 3 or 4, not \(compatibility)")
        }
        if let pageSize, !(512...65536).contains(pageSize) || pageSize & (pageSize - 1) != 0 {
            throw .api(.invalidArgument, "the page size must be a power of two from 512 to 65536, not \(pageSize)")
        }
        if let pageSize, pageSize < 1024 {
            // SQLCipher takes 512 as cipher_page_size, but its engine then fails every write with "out of memory":
            // beside the IV and HMAC it reserves, too little of the page is left (SQLite needs 480 usable bytes).
            throw .api(.invalidArgument, "the page size of an encrypted database must be 1024 or more, not \(pageSize): "
                + "a smaller page leaves too little room beside the IV and HMAC SQLCipher reserves in each page "
                + "(SQLite needs 480 usable bytes)")
        }
        if let kdfIterations, kdfIterations < 1 {
            throw .api(.invalidArgument, "the KDF iteration count must be at least 1, not \(kdfIterations)")
        }
        if let plaintextHeaderSize,
           !(0..<(pageSize ?? 4096)).contains(plaintextHeaderSize) || plaintextHeaderSize % 16 != 0 {
            throw .api(.invalidArgument, "the plaintext header size must be 0 or a multiple of 16 below the page size, "
                + "not \(plaintextHeaderSize)")
        }
        if let salt, salt.count != Key.saltLength {
            throw .api(.invalidArgument, "a salt must be \(Key.saltLength) bytes long, not \(salt.count)")
        }
    }

    /// Throws unless a file with these settings keeps a salt that `key` can reopen it with: with a plaintext
    /// header the salt is not stored in the file, so it must be given here (or be part of a raw key).
    func requireRecoverableSalt(for key: Key?) throws(SQLCipherError) {
        guard let key, let header = plaintextHeaderSize, header > 0, salt == nil, key.kind != .rawKeyWithSalt else {
            return
        }
        throw .api(.invalidArgument, "a plaintext header keeps the salt out of the file: pass CipherSettings.salt "
            + "(16 bytes you store with the key) or a raw key with its salt")
    }

    /// The pragmas that apply these settings to `schema`, in SQLCipher's required order.
    func pragmas(schema: String) -> [String] {
        let prefix = "PRAGMA \(schema.quotedIdentifier)."
        var pragmas: [String] = []
        if let compatibility { pragmas.append(prefix + "cipher_compatibility = \(compatibility)") }
        if let pageSize { pragmas.append(prefix + "cipher_page_size = \(pageSize)") }
        if let kdfIterations { pragmas.append(prefix + "kdf_iter = \(kdfIterations)") }
        if let usesHMAC { pragmas.append(prefix + "cipher_use_hmac = \(usesHMAC ? "ON" : "OFF")") }
        if let hmacAlgorithm { pragmas.append(prefix + "cipher_hmac_algorithm = \(hmacAlgorithm.rawValue)") }
        if let kdfAlgorithm { pragmas.append(prefix + "cipher_kdf_algorithm = \(kdfAlgorithm.rawValue)") }
        if let plaintextHeaderSize { pragmas.append(prefix + "cipher_plaintext_header_size = \(plaintextHeaderSize)") }
        if let salt { pragmas.append(prefix + "cipher_salt = \"x'\(Hex.string(salt))'\"") }
        if let memorySecurity { pragmas.append("PRAGMA cipher_memory_security = \(memorySecurity ? "ON" : "OFF")") }
        return pragmas
    }
}
