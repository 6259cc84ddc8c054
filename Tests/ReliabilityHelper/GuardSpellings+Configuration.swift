#if canImport(Glibc)
import Glibc
#endif
import SQLCipherKit

extension GuardSpellings {
    /// The cipher configuration the spellings run under (issue 43: every test of the guard had run under SQLCipher 4's
    /// defaults only). `RELIABILITY_CIPHER` names one of ``configurations``; unset or empty, SQLCipher 4's defaults.
    /// The current values decide which spellings of the cipher and page_size families change something.
    struct Configuration {
        let settings: CipherSettings
        /// What an unguarded connection runs after keying, as SQLCipherKit applies ``settings``.
        let pragmas: [String]
        var pageSize = 4096
        var usesHMAC = true
        var kdfIterations = 256_000
        var hmacAlgorithm = "HMAC_SHA512"
        var kdfAlgorithm = "PBKDF2_HMAC_SHA512"
        var compatibility = 4
    }

    static let configurations: [String: Configuration] = [
        "": Configuration(settings: CipherSettings(), pragmas: []),
        "page-1024": Configuration(settings: CipherSettings(pageSize: 1024), pragmas: ["PRAGMA cipher_page_size = 1024"],
                                   pageSize: 1024),
        "page-65536": Configuration(settings: CipherSettings(pageSize: 65536),
                                    pragmas: ["PRAGMA cipher_page_size = 65536"], pageSize: 65536),
        "compat-3": Configuration(settings: CipherSettings(compatibility: 3), pragmas: ["PRAGMA cipher_compatibility = 3"],
                                  pageSize: 1024, kdfIterations: 64_000, hmacAlgorithm: "HMAC_SHA1",
                                  kdfAlgorithm: "PBKDF2_HMAC_SHA1", compatibility: 3),
        "hmac-off": Configuration(settings: CipherSettings(usesHMAC: false), pragmas: ["PRAGMA cipher_use_hmac = OFF"],
                                  usesHMAC: false),
    ]

    static let configuration: Configuration = {
        let name = getenv("RELIABILITY_CIPHER").map { String(cString: $0) } ?? ""
        guard let configuration = configurations[name] else {
            fail(usage: "RELIABILITY_CIPHER=\(name): one of \(configurations.keys.sorted())")
        }
        return configuration
    }()

    /// Whether setting cipher pragma `name` to `value` would leave this configuration as it is.
    static func isCurrent(_ name: String, _ value: String) -> Bool {
        let current = configuration
        switch name {
        case "cipher_page_size": return Int(value) == current.pageSize
        case "cipher_use_hmac": return ["on", "1", "yes", "true"].contains(value.lowercased()) == current.usesHMAC
        case "kdf_iter": return Int(value) == current.kdfIterations
        case "cipher_hmac_algorithm": return value == current.hmacAlgorithm
        case "cipher_kdf_algorithm": return value == current.kdfAlgorithm
        case "cipher_compatibility": return Int(value) == current.compatibility
        default: return false
        }
    }

    /// The configuration's current value of each setting the cipherCurrentValue family sets.
    static var currentCipherSettings: [(String, String)] {
        let current = configuration
        return [("cipher_page_size", "\(current.pageSize)"), ("cipher_use_hmac", current.usesHMAC ? "ON" : "OFF"),
                ("cipher_use_hmac", current.usesHMAC ? "1" : "0"), ("kdf_iter", "\(current.kdfIterations)"),
                ("cipher_hmac_algorithm", current.hmacAlgorithm), ("cipher_kdf_algorithm", current.kdfAlgorithm),
                ("cipher_plaintext_header_size", "0"), ("cipher_default_page_size", "4096"),
                ("cipher_default_use_hmac", "ON"), ("cipher_default_kdf_iter", "256000")]
    }

    /// The page_size values the spellings try: every one but the configuration's own page size (leading digits,
    /// as SQLite reads them), which would change nothing.
    static var pageSizeValues: [String] {
        ["1024", "2048", "4096", "8192", "65536", "512", "+1024", "1024.5", "'2048'", "abc", "-1024"].filter { value in
            let digits = value.drop { $0 == "+" || $0 == "'" }.prefix { $0.isNumber }
            return Int(digits) != configuration.pageSize
        }
    }
}
