import Foundation
import ProcessTestSupport
import Testing

/// Key hygiene: after keys are used for everything (open, write, export, rekey, a failed open, pools that
/// derive the key themselves) and released, the child scans all of its own readable memory for the passphrase
/// and the raw key (bytes and hex); and with connections still open, for the raw key's bytes (SQLCipher masks
/// its keys between pages; the crypto provider must keep no key schedule), checking that the child did hold them
/// open. Both also look for what is derived from the raw key (the HMAC key, its pads, AES round keys). Each scan
/// has a control that keeps a copy of a key alive and must find it. The in-process check of the
/// released buffer itself is in KeyTests.
@Suite("Reliability: key hygiene")
struct KeyHygieneTests {
    @Test("No copy of a released passphrase or raw key remains anywhere in the process's memory")
    func noKeyInMemory() throws {
        let folder = try TemporaryDirectory()
        let started = Date()
        let result = try Self.scan(folder: folder.path)
        #expect(result.hits == 0, "\(result.lines)")
        #expect(result.scanned > 10_000_000, "the scan read only \(result.scanned) bytes")
        Self.expectDerivedPatterns(result.lines)
        print("RELIABILITY key hygiene: \(result.scanned / 1_000_000) MB of process memory scanned, "
              + "\(result.hits) copies of the keys, \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    @Test("Open connections that have encrypted and decrypted pages hold no raw key bytes between pages")
    func noKeyScheduleWhileOpen() throws {
        let folder = try TemporaryDirectory()
        let result = try Self.scan(folder: folder.path, open: true)
        #expect(result.hits == 0, "\(result.lines)")
        #expect(result.scanned > 10_000_000, "the scan read only \(result.scanned) bytes")
        Self.expectHeldOpen(result.lines)
        Self.expectDerivedPatterns(result.lines)
    }

    @Test("Control: with connections open, the scan finds a copy of the raw key that is kept alive")
    func openScanFindsALeak() throws {
        let folder = try TemporaryDirectory()
        let result = try Self.scan(folder: folder.path, open: true, leakRaw: true)
        #expect(result.lines.contains { $0.hasPrefix("hit raw key [") }, "\(result.lines)")
        Self.expectHeldOpen(result.lines)
    }

    /// What the child held open through an `--open` scan: two connections whose codecs have encrypted (the
    /// writer's new pages: a 20,000-byte blob's overflow pages) and decrypted (the reader's cold read of the
    /// whole file, those pages included) pages.
    static func expectHeldOpen(_ lines: [String]) {
        func value(_ name: String) -> Int {
            lines.first { $0.hasPrefix(name + " ") }.flatMap { Int($0.dropFirst(name.count + 1)) } ?? 0
        }
        #expect(value("open") == 2, "the scan ran without its two open connections: \(lines)")
        #expect(value("encrypted") >= 4, "the writer encrypted no pages before the scan: \(lines)")
        #expect(value("decrypted") > value("encrypted"), "the reader decrypted no pages before the scan: \(lines)")
    }

    @Test("Control: with connections open, the scan finds each derived secret kept alive (HMAC key, pads, AES rounds)")
    func openScanFindsDerivedLeaks() throws {
        let folder = try TemporaryDirectory()
        let result = try Self.scan(folder: folder.path, open: true, leakDerived: true)
        for name in Self.derivedNames {
            #expect(result.lines.contains { $0.hasPrefix("hit \(name) [") }, "no hit for \(name): \(result.lines)")
        }
        Self.expectHeldOpen(result.lines)
    }

    /// The secrets SQLCipher and the provider derive from the raw key (ReliabilityHelper's DerivedKeys): each scan
    /// looks for them too, and reports how many patterns that added.
    static let derivedNames = ["HMAC key", "HMAC key^ipad", "HMAC key^opad", "AES round keys",
                               "AES decryption round keys"]

    static func expectDerivedPatterns(_ lines: [String]) {
        #expect(lines.contains("expansion ok"), "the helper's AES key expansion was not checked: \(lines)")
        #expect(lines.contains("derived 64"), "the scan did not look for the derived secrets: \(lines)")
    }

    @Test("Control: the scan finds a copy of the passphrase that is kept alive")
    func scanFindsALeak() throws {
        let folder = try TemporaryDirectory()
        let result = try Self.scan(folder: folder.path, leak: true)
        #expect(result.hits >= 1, "\(result.lines)")
        #expect(result.lines.contains { $0.hasPrefix("hit passphrase") }, "\(result.lines)")
    }

    static func scan(folder: String, leak: Bool = false, open: Bool = false, leakRaw: Bool = false,
                     leakDerived: Bool = false) throws -> (scanned: Int, hits: Int, lines: [String]) {
        let seed = UInt64.random(in: 1...UInt64.max >> 1)
        let flags = (leak ? ["--leak"] : []) + (open ? ["--open"] : []) + (leakRaw ? ["--leak-raw"] : [])
            + (leakDerived ? ["--leak-derived"] : [])
        let child = try HelperProcess(["memory-scan", folder] + flags, environment: ["RELIABILITY_SEED": "\(seed)"])
        var lines: [String] = []
        while let line = child.readLine() { lines.append(line) }
        child.finish()
        try #require(child.exitStatus == 0, "\(child.standardError)")
        let scanned = lines.first { $0.hasPrefix("scanned ") }.flatMap { Int($0.dropFirst(8)) } ?? 0
        let hits = try #require(lines.last.flatMap { $0.hasPrefix("hits ") ? Int($0.dropFirst(5)) : nil }, "\(lines)")
        return (scanned, hits, lines)
    }
}
