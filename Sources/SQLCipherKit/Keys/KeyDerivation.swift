import CSQLCipher

/// PBKDF2 as SQLCipher runs it, done once by SQLCipherKit so that many connections can share the result.
enum KeyDerivation {
    /// The raw key SQLCipher would derive from `passphrase` with `salt` under `settings`, as a
    /// ``Key/rawKey(_:salt:)`` key: keying a connection with it is the same as keying with the passphrase.
    ///
    /// The derived bytes never leave wiped storage.
    static func rawKey(from passphrase: Key, salt: [UInt8], settings: CipherSettings) throws(SQLCipherError) -> Key {
        guard passphrase.kind == .passphrase else { return passphrase }
        guard salt.count == Key.saltLength else {
            throw .api(.invalidArgument, "a salt must be \(Key.saltLength) bytes long, not \(salt.count)")
        }
        let (algorithm, iterations) = settings.keyDerivation
        let digest: UnsafeRawPointer? = switch algorithm {
        case .sha1: sqlcipherkit_evp_sha1()
        case .sha256: sqlcipherkit_evp_sha256()
        case .sha512: sqlcipherkit_evp_sha512()
        }
        var succeeded = false
        let derived = SecureBytes(count: Key.rawKeyLength) { out in
            passphrase.material.withUnsafeBytes { pass in
                salt.withUnsafeBufferPointer { saltBytes in
                    succeeded = sqlcipherkit_pbkdf2_hmac(
                        pass.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(pass.count),
                        saltBytes.baseAddress, Int32(saltBytes.count), Int32(iterations), digest,
                        Int32(Key.rawKeyLength), out.baseAddress?.assumingMemoryBound(to: UInt8.self)) == 1
                }
            }
        }
        guard succeeded else {
            throw .api(.sqlite, "libcrypto's PBKDF2 failed")
        }
        return derived.withUnsafeBytes { bytes in Key.rawKey(derived: bytes, salt: salt) }
    }
}

extension CipherSettings {
    /// The PBKDF2 algorithm and iteration count these settings imply: the explicit ones, else those of
    /// ``compatibility`` (SQLCipher 4 when nil).
    var keyDerivation: (algorithm: KDFAlgorithm, iterations: Int) {
        let defaults: (KDFAlgorithm, Int) = switch compatibility ?? 4 {
        case 1, 2: (.sha1, 4000)
        case 3: (.sha1, 64000)
        default: (.sha512, 256_000)
        }
        return (kdfAlgorithm ?? defaults.0, kdfIterations ?? defaults.1)
    }
}
