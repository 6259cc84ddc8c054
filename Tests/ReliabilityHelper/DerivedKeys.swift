#if canImport(Glibc)
import Glibc
#endif
import CSQLCipher
import SQLCipherKit

/// What SQLCipher and the crypto provider derive from a raw page key, for the memory scan: the HMAC key
/// (SQLCipher: PBKDF2-HMAC-SHA512 of the page key over the file's salt XOR 0x3a, 2 iterations, 32 bytes), the
/// HMAC-SHA512 key pads (the HMAC key XOR 0x36 and XOR 0x5c: their first 32 bytes, the rest of the 128-byte block
/// is the same for every key), and AES-256's round keys as the provider's AES context holds them (FIPS-197's key
/// expansion, round keys 2 to 14 for encryption; InvMixColumns of round keys 1 to 13 for decryption, as AES-NI
/// keeps them; round keys 0 and 1 are the page key itself, which the scan looks for already).
///
/// Every secret is computed in memory this type allocates and wipes, and handed out masked (XOR `mask`), so that
/// the scan's own patterns are not copies of what it looks for.
enum DerivedKeys {
    /// The secrets derived from `maskedKey` (32 bytes, XOR `mask`) for the database whose first 16 bytes are
    /// `salt`: name and masked bytes of each.
    static func masked(key maskedKey: [UInt8], salt: [UInt8], mask: UInt8) -> [(name: String, masked: [UInt8])] {
        let work = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 32 + 32 + 240 + 208)
        defer {
            KeyMemory.wipe(UnsafeMutableRawBufferPointer(work))
            work.deallocate()
        }
        work.initialize(repeating: 0)
        let key = UnsafeMutableBufferPointer(rebasing: work[0..<32])
        let hmacKey = UnsafeMutableBufferPointer(rebasing: work[32..<64])
        let expanded = UnsafeMutableBufferPointer(rebasing: work[64..<304])
        let decryption = UnsafeMutableBufferPointer(rebasing: work[304..<512])
        for index in 0..<32 { key[index] = maskedKey[index] ^ mask }

        let hmacSalt = salt.map { $0 ^ 0x3a }
        let derived = key.withMemoryRebound(to: CChar.self) { pass in
            sqlcipherkit_pbkdf2_hmac(pass.baseAddress, 32, hmacSalt, Int32(hmacSalt.count), 2,
                                     sqlcipherkit_evp_sha512(), 32, hmacKey.baseAddress)
        }
        guard derived == 1 else { fail("PBKDF2 failed") }
        expandKey(key, into: expanded)
        for round in 1...13 {
            for column in 0..<4 {
                let start = round * 16 + column * 4
                invMixColumn(expanded, at: start, into: decryption, at: (round - 1) * 16 + column * 4)
            }
        }
        func masked(_ bytes: UnsafeMutableBufferPointer<UInt8>, _ range: Range<Int>, xor: UInt8 = 0) -> [UInt8] {
            range.map { bytes[$0] ^ xor ^ mask }
        }
        return [
            ("HMAC key", masked(hmacKey, 0..<32)),
            ("HMAC key^ipad", masked(hmacKey, 0..<32, xor: 0x36)),
            ("HMAC key^opad", masked(hmacKey, 0..<32, xor: 0x5c)),
            ("AES round keys", masked(expanded, 32..<240)),
            ("AES decryption round keys", masked(decryption, 0..<208)),
        ]
    }

    // MARK: AES-256 key expansion (FIPS-197, section 5.2)

    /// Whether the key expansion gives FIPS-197's own example (appendix A.3): its first derived word and its
    /// last. A scan for wrongly derived round keys would find nothing and prove nothing.
    static func expansionMatchesFIPS197() -> Bool {
        let key = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 32)
        let expanded = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 240)
        defer {
            key.deallocate()
            expanded.deallocate()
        }
        let hex = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"
        guard let bytes = Hex.bytes(hex), bytes.count == 32 else { return false }
        for (index, byte) in bytes.enumerated() { key[index] = byte }
        expandKey(key, into: expanded)
        return Array(expanded[32..<36]) == [0x9b, 0xa3, 0x54, 0x11]
            && Array(expanded[236..<240]) == [0x70, 0x6c, 0x63, 0x1e]
    }

    /// The AES S-box, computed: the multiplicative inverse in GF(2^8), then the affine map.
    static let sbox: [UInt8] = (0...255).map { value in
        let inverse = value == 0 ? 0 : (1...255).first { multiply(UInt8(value), UInt8($0)) == 1 } ?? 0
        var byte = UInt8(inverse), result = UInt8(inverse)
        for _ in 0..<4 {
            byte = byte << 1 | byte >> 7
            result ^= byte
        }
        return result ^ 0x63
    }

    /// Multiplication in AES's GF(2^8).
    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var (a, b, product) = (a, b, UInt8(0))
        while b != 0 {
            if b & 1 != 0 { product ^= a }
            a = a & 0x80 != 0 ? (a << 1) ^ 0x1b : a << 1
            b >>= 1
        }
        return product
    }

    /// The 240 bytes of AES-256's expanded key for the 32-byte `key`.
    static func expandKey(_ key: UnsafeMutableBufferPointer<UInt8>, into expanded: UnsafeMutableBufferPointer<UInt8>) {
        for index in 0..<32 { expanded[index] = key[index] }
        var rcon: UInt8 = 1
        for word in 8..<60 {
            var temp = (expanded[word * 4 - 4], expanded[word * 4 - 3], expanded[word * 4 - 2], expanded[word * 4 - 1])
            if word % 8 == 0 {
                temp = (sbox[Int(temp.1)] ^ rcon, sbox[Int(temp.2)], sbox[Int(temp.3)], sbox[Int(temp.0)])
                rcon = multiply(rcon, 2)
            } else if word % 8 == 4 {
                temp = (sbox[Int(temp.0)], sbox[Int(temp.1)], sbox[Int(temp.2)], sbox[Int(temp.3)])
            }
            expanded[word * 4] = expanded[word * 4 - 32] ^ temp.0
            expanded[word * 4 + 1] = expanded[word * 4 - 31] ^ temp.1
            expanded[word * 4 + 2] = expanded[word * 4 - 30] ^ temp.2
            expanded[word * 4 + 3] = expanded[word * 4 - 29] ^ temp.3
        }
    }

    /// InvMixColumns of the column at `source[start..<start+4]`, written to `target[offset..<offset+4]`.
    static func invMixColumn(_ source: UnsafeMutableBufferPointer<UInt8>, at start: Int,
                             into target: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        let a = (source[start], source[start + 1], source[start + 2], source[start + 3])
        target[offset] = multiply(a.0, 14) ^ multiply(a.1, 11) ^ multiply(a.2, 13) ^ multiply(a.3, 9)
        target[offset + 1] = multiply(a.0, 9) ^ multiply(a.1, 14) ^ multiply(a.2, 11) ^ multiply(a.3, 13)
        target[offset + 2] = multiply(a.0, 13) ^ multiply(a.1, 9) ^ multiply(a.2, 14) ^ multiply(a.3, 11)
        target[offset + 3] = multiply(a.0, 11) ^ multiply(a.1, 13) ^ multiply(a.2, 9) ^ multiply(a.3, 14)
    }
}
