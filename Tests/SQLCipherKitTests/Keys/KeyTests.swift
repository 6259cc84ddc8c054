import Foundation
import Synchronization
import Testing
@testable import SQLCipherKit

@Suite("Key")
struct KeyTests {
    private static let rawBytes = (0..<32).map { UInt8($0 * 7 & 0xff) }
    private static let salt = (0..<16).map { UInt8(0xf0 | $0) }

    @Test("a passphrase key holds the passphrase's UTF-8 bytes")
    func passphraseMaterial() throws {
        let key = try Key.passphrase("pässword")
        #expect(key.kind == .passphrase)
        #expect(key.material.withUnsafeBytes { Array($0) } == Array("pässword".utf8))
        let fromBytes = try Key.passphrase(bytes: [0, 1, 2, 255])
        #expect(fromBytes.material.withUnsafeBytes { Array($0) } == [0, 1, 2, 255])
    }

    @Test("a raw key becomes the x'…' text sqlite3_key_v2 takes")
    func rawKeyMaterial() throws {
        let key = try Key.rawKey(Self.rawBytes)
        let expected = "x'" + Hex.string(Self.rawBytes) + "'"
        #expect(key.kind == .rawKey)
        #expect(String(decoding: key.material.withUnsafeBytes { Array($0) }, as: UTF8.self) == expected)

        let salted = try Key.rawKey(Self.rawBytes, salt: Self.salt)
        let saltHex = Hex.string(Self.salt)
        #expect(salted.kind == .rawKeyWithSalt)
        #expect(String(decoding: salted.material.withUnsafeBytes { Array($0) }, as: UTF8.self)
            == String(expected.dropLast()) + saltHex + "'")
    }

    @Test("wrong lengths are a typed error", arguments: [0, 16, 31, 33, 48, 64])
    func rawKeyLength(length: Int) {
        let error = thrownError { try Key.rawKey([UInt8](repeating: 1, count: length)) }
        #expect(error?.kind == .invalidKey)
        // Never the length given (issue 44): a key's length is a clue to it.
        #expect(error?.message == "a raw key must be 32 bytes long, and this one is not")
    }

    @Test("a salt must be 16 bytes", arguments: [0, 15, 17, 32])
    func saltLength(length: Int) {
        let error = thrownError { try Key.rawKey(Self.rawBytes, salt: [UInt8](repeating: 1, count: length)) }
        #expect(error?.kind == .invalidKey)
        #expect(error?.message == "a salt must be 16 bytes long, and this one is not")
    }

    @Test("an empty passphrase is refused: SQLCipher would not encrypt")
    func emptyPassphrase() {
        #expect(thrownError { try Key.passphrase("") }?.kind == .invalidKey)
        #expect(thrownError { try Key.passphrase(bytes: []) }?.kind == .invalidKey)
    }

    @Test("a passphrase SQLCipher would read as a raw key is refused")
    func blobLookingPassphrase() throws {
        let hex = String(repeating: "ab", count: 32)
        #expect(thrownError { try Key.passphrase("x'\(hex)'") }?.kind == .invalidKey)
        #expect(thrownError { try Key.passphrase("X'00'") }?.kind == .invalidKey)
        // Close but not that form: fine.
        _ = try Key.passphrase("x'\(hex)")
        _ = try Key.passphrase("x'not hex'")
    }

    @Test("description, debugDescription and dump never show key material")
    func redaction() throws {
        let secret = "hunter2-unique-secret"
        let key = try Key.passphrase(secret)
        var dumped = ""
        dump(key, to: &dumped)
        for text in [key.description, key.debugDescription, String(describing: key), String(reflecting: key),
                     "\(key)", dumped] {
            #expect(!text.localizedCaseInsensitiveContains(secret))
            #expect(!text.localizedCaseInsensitiveContains("hunter"))
        }
        #expect(key.description == "Key(passphrase, redacted)")
        #expect(Mirror(reflecting: key).children.isEmpty)
        let raw = try Key.rawKey(Self.rawBytes)
        #expect(raw.description == "Key(rawKey, redacted)")
        #expect(!String(reflecting: raw).contains("0007"))
    }

    @Test("key bytes are zeroed when the last copy is released")
    func releasedKeyIsWiped() throws {
        let seen = Mutex<[[UInt8]]>([])
        SecureBytes.wipeObserver.withLock { observer in
            observer = { buffer in seen.withLock { $0.append(Array(buffer)) } }
        }
        defer { SecureBytes.wipeObserver.withLock { $0 = nil } }

        let passphrase = "wipe-me-\(UUID().uuidString)"
        do {
            let key = try Key.passphrase(passphrase)
            let copy = key
            #expect(copy.kind == .passphrase)
        }
        let buffers = seen.withLock { $0 }
        // Other tests may release keys meanwhile; ours is the one of this length (plus the spare byte).
        let ours = buffers.filter { $0.count == passphrase.utf8.count + 1 }
        #expect(!ours.isEmpty, "the released key's storage was never wiped")
        #expect(buffers.allSatisfy { $0.allSatisfy { $0 == 0 } }, "released key storage still holds bytes")
    }

    @Test("occurs(in:) finds a passphrase and a raw key's hex in any letter case, and nothing else")
    func occurrence() throws {
        let passphrase = try Key.passphrase("Correct Horse")
        #expect(passphrase.occurs(in: "select 'correct horse' as oops;"))
        #expect(passphrase.occurs(in: "Correct Horse"))
        #expect(!passphrase.occurs(in: "Correct Hors"))
        #expect(!passphrase.occurs(in: ""))
        let hex = String(repeating: "3a7f", count: 16)
        let raw = try Key.rawKey(hex: Array(hex.utf8))
        #expect(raw.occurs(in: "x'\(hex.uppercased())'"))
        #expect(!raw.occurs(in: "x''"), "the blob literal's quotes alone must not match")
        #expect(!raw.occurs(in: String(hex.dropLast())))
    }
}
