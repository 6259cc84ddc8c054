#if canImport(Glibc)
import Glibc
#endif
import ReliabilitySupport
import SQLCipherKit

/// `memory-scan FOLDER [--leak] [--open [--leak-raw]] [--leak-derived]`: uses a passphrase and a raw key for everything that
/// handles keys — open, write, rekey, a failed open with the old key, pools (which derive the key themselves),
/// export — releases them all, then reads every readable byte of its own memory (/proc/self/mem) looking for any
/// 8-byte piece of the passphrase or the raw key, or 16-digit piece of the raw key in hex. Reports
/// `scanned BYTES`, one `hit …` line per copy found, then `hits N`.
///
/// `--open` keeps two connections keyed with the raw key open during the scan: one that has just written (its
/// codec encrypted pages) and one that has just read the file cold (its codec decrypted them), and looks for the
/// raw key's bytes only. After the scan it reports what it held open: `open CONNECTIONS`, `encrypted PAGES` (the
/// pages the writer's commit added to the file) and `decrypted PAGES` (the pages of the file, all of which the
/// reader read cold). Between pages SQLCipher holds its keys masked (`sqlcipher_shield`), and SQLCipherKit's
/// crypto provider must leave no key schedule behind either; the hex text stays out of this scan because
/// SQLCipher keeps the key material it was given (`x'…'`) for ATTACH as long as the connection is open.
///
/// Both scans also look for what SQLCipher and the crypto provider derive from the raw key for that database
/// (``DerivedKeys``: the HMAC key, its key pads, AES-256's encryption and decryption round keys), reported under
/// those names; `derived N` says how many patterns that added, `expansion ok` that the AES key expansion gives
/// FIPS-197's example.
///
/// The secrets are generated in place from RELIABILITY_SEED and zeroed after the keys are made; the scan's
/// patterns are stored masked, so that they are not themselves a copy. `--leak` keeps one copy of the
/// passphrase alive, `--leak-raw` (with `--open`) one of the raw key, `--leak-derived` one of every derived
/// secret: the negative controls proving that each scan finds a copy that is there. Any other argument is refused: a mistyped flag must not scan another case.
enum MemoryScan {
    private static let mask: UInt8 = 0x5A

    static func run(_ arguments: [String]) {
        let usage = "memory-scan FOLDER [--leak] [--open [--leak-raw]] [--leak-derived]"
        guard let folder = arguments.first,
              arguments.dropFirst().allSatisfy({ ["--leak", "--open", "--leak-raw", "--leak-derived"].contains($0) })
        else {
            fail(usage: usage)
        }
        let keepOpen = arguments.contains("--open")
        if arguments.contains("--leak-raw") && !keepOpen { fail(usage: usage) }
        let seed = environmentSeed()
        var passphrase = secret(seed: seed, count: 24, alphabet: Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789".utf8))
        var raw = secret(seed: seed &+ 1, count: 32, alphabet: nil)
        // Each secret is searched for piece by piece: free() overwrites the first 16 bytes of a released block
        // with its own pointers, so a whole-secret search would miss an unwiped buffer.
        let patterns = pieces("passphrase", passphrase.map { $0 ^ mask }, size: 8)
            + pieces("raw key", raw.map { $0 ^ mask }, size: 8)
        let textPatterns = pieces("raw key hex", maskedHex(raw, digits: Array("0123456789abcdef".utf8)), size: 16)
            + pieces("raw key HEX", maskedHex(raw, digits: Array("0123456789ABCDEF".utf8)), size: 16)
        // Sharing the buffer makes the wipe below copy-on-write: the leaked copy keeps the passphrase.
        let leaked: [UInt8]? = arguments.contains("--leak") ? passphrase : nil
        let leakedRaw: [UInt8]? = arguments.contains("--leak-raw") ? raw : nil
        let maskedRaw = raw.map { $0 ^ mask }
        guard DerivedKeys.expansionMatchesFIPS197() else { fail("the AES key expansion does not give FIPS-197's example") }
        report("expansion ok")

        var open: [Database] = []
        var pages = (encrypted: 0, decrypted: 0)
        orFail("exercise") {
            let passphraseKey = try Key.passphrase(bytes: passphrase)
            let rawKey = try Key.rawKey(raw)
            KeyMemory.wipe(&passphrase)
            KeyMemory.wipe(&raw)
            try exercise(folder: folder, passphrase: passphraseKey, raw: rawKey)
            if keepOpen { (open, pages) = try openConnections(folder: folder, raw: rawKey) }
        }
        // The raw-keyed database's salt, now that it exists; everything derived from it, masked.
        guard let file = fopen(folder + "/memory-scan.db", "rb") else { fail("no memory-scan.db") }
        var salt = [UInt8](repeating: 0, count: 16)
        let read = fread(&salt, 1, 16, file)
        fclose(file)
        guard read == 16 else { fail("memory-scan.db is shorter than its salt") }
        let derived = DerivedKeys.masked(key: maskedRaw, salt: salt, mask: mask)
        let derivedPatterns = derived.flatMap { pieces($0.name, $0.masked, size: 8) }
        report("derived \(derivedPatterns.count)")
        let leakedDerived: [UInt8]? = arguments.contains("--leak-derived")
            ? derived.flatMap { $0.masked.map { $0 ^ mask } } : nil

        withExtendedLifetime((leaked, leakedRaw, leakedDerived, open)) {
            let (scanned, hits) = scan(for: (keepOpen ? patterns : patterns + textPatterns) + derivedPatterns)
            report("scanned \(scanned)")
            if keepOpen {
                // Counted after the scan: these connections were open all through it.
                report("open \(open.filter { !$0.isClosed }.count)")
                report("encrypted \(pages.encrypted)")
                report("decrypted \(pages.decrypted)")
            }
            for hit in hits { report("hit \(hit)") }
            report("hits \(hits.count)")
        }
    }

    /// Everything in SQLCipherKit that touches key material.
    private static func exercise(folder: String, passphrase: Key, raw: Key) throws {
        let path = folder + "/memory-scan.db"
        let db = try Database(path: path, key: passphrase)
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('row')")
        try db.export(to: folder + "/memory-scan-export.db", key: passphrase)
        try db.rekey(to: raw)
        db.close()
        do {
            _ = try Database(path: path, key: passphrase, mode: .readWrite)
            fail("the old passphrase still opened the database after rekey")
        } catch SQLCipherError.wrongKeyOrNotADatabase {
        }
        let pool = try DatabasePool(path: path, key: raw)
        _ = try pool.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") }
        pool.close()
        let derivingPool = try DatabasePool(path: folder + "/memory-scan-pool.db", key: passphrase)
        try derivingPool.write { try $0.execute("CREATE TABLE t(x)") }
        _ = try derivingPool.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") }
        derivingPool.close()
    }

    /// `--open`: a connection that has just written and one that has just read the file from disk, both keyed
    /// with the raw key and returned open, with the pages the writer's commit added (each encrypted by its codec)
    /// and the pages of the file the reader read cold (each decrypted by its codec: `t` and the schema fill the
    /// file, and the sum reads every page of `t`).
    private static func openConnections(folder: String, raw: Key) throws
        -> (connections: [Database], pages: (encrypted: Int, decrypted: Int)) {
        let path = folder + "/memory-scan.db"
        let writer = try Database(path: path, key: raw)
        let before = try writer.scalar(Int.self, "PRAGMA page_count") ?? 0
        try writer.execute("INSERT INTO t VALUES (randomblob(20000))")
        let after = try writer.scalar(Int.self, "PRAGMA page_count") ?? 0
        let reader = try Database(path: path, key: raw)
        guard try reader.scalar(Int.self, "SELECT sum(length(x)) FROM t") == 20_003 else {
            fail("the reader did not read back what the writer wrote")
        }
        let read = try reader.scalar(Int.self, "PRAGMA page_count") ?? 0
        return ([writer, reader], (after - before, read))
    }

    /// `count` bytes from a seeded generator, drawn from `alphabet` (nil: any byte).
    private static func secret(seed: UInt64, count: Int, alphabet: [UInt8]?) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            alphabet?.randomElement(using: &generator) ?? UInt8.random(in: 0...255, using: &generator)
        }
    }

    /// `masked` cut into consecutive pieces of `size` bytes, each named by its range.
    private static func pieces(_ name: String, _ masked: [UInt8], size: Int) -> [(name: String, masked: [UInt8])] {
        stride(from: 0, to: masked.count, by: size).map { start in
            let end = min(start + size, masked.count)
            return ("\(name) [\(start)..<\(end)]", Array(masked[start..<end]))
        }
    }

    /// The hex text of `bytes` in the case `digits` gives, each digit masked as soon as it is made (not
    /// ``Hex/string(_:)``, which would hold the unmasked text, and this process is the one being scanned).
    private static func maskedHex(_ bytes: [UInt8], digits: [UInt8]) -> [UInt8] {
        bytes.flatMap { [digits[Int($0 >> 4)] ^ mask, digits[Int($0 & 0x0F)] ^ mask] }
    }

    /// Scans every readable mapping of this process for the unmasked patterns: the bytes scanned and the hits.
    ///
    /// One pass over the memory, whatever the number of patterns: a table of the patterns' first two bytes
    /// (two bytes of a piece are not a copy of it) picks the offsets worth comparing.
    private static func scan(for patterns: [(name: String, masked: [UInt8])]) -> (Int, [String]) {
        let chunk = 1 << 20
        let overlap = patterns.map(\.masked.count).max()! - 1
        var byPrefix = [[Int]](repeating: [], count: 1 << 16)
        // The same as flags, read through a pointer: the loop below runs once a byte, in a debug build too.
        let hasPrefix = UnsafeMutablePointer<Bool>.allocate(capacity: 1 << 16)
        hasPrefix.initialize(repeating: false, count: 1 << 16)
        defer { hasPrefix.deallocate() }
        for (index, pattern) in patterns.enumerated() {
            let prefix = Int(pattern.masked[0] ^ mask) << 8 | Int(pattern.masked[1] ^ mask)
            byPrefix[prefix].append(index)
            hasPrefix[prefix] = true
        }
        // The read buffer is a mapping of its own, left out of the scan (it holds copies of what it read).
        guard let buffer = mmap(nil, chunk + overlap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              buffer != MAP_FAILED else { fail("mmap failed") }
        defer { munmap(buffer, chunk + overlap) }
        let bufferStart = UInt(bitPattern: buffer)
        let memory = open("/proc/self/mem", O_RDONLY)
        guard memory >= 0 else { fail("cannot open /proc/self/mem: errno \(errno)") }
        defer { close(memory) }

        var scanned = 0
        var hits: [String] = []
        for region in readableRegions() where region.start != bufferStart {
            var address = region.start
            while address < region.end {
                let length = Int(min(UInt(chunk + overlap), region.end - address))
                let count = pread(memory, buffer, length, Int(bitPattern: address))
                if count <= 0 { break }  // unreadable (guard pages, special mappings)
                let bytes = buffer.assumingMemoryBound(to: UInt8.self)
                var offset = 0
                let end = min(count - 1, chunk)
                while offset < end {
                    let prefix = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
                    guard hasPrefix[prefix] else {
                        offset += 1
                        continue
                    }
                    for index in byPrefix[prefix] {
                        let masked = patterns[index].masked
                        guard offset + masked.count <= count,
                              (2..<masked.count).allSatisfy({ bytes[offset + $0] ^ mask == masked[$0] }) else { continue }
                        hits.append("\(patterns[index].name) at 0x\(String(address + UInt(offset), radix: 16)) in \(region.name)")
                    }
                    offset += 1
                }
                scanned += min(count, chunk)
                address += UInt(chunk)
            }
        }
        return (scanned, hits)
    }

    private struct Region {
        let start: UInt, end: UInt, name: String
    }

    /// The readable mappings listed in /proc/self/maps, minus the kernel's special pages.
    private static func readableRegions() -> [Region] {
        guard let file = fopen("/proc/self/maps", "r") else { fail("cannot read /proc/self/maps") }
        defer { fclose(file) }
        var regions: [Region] = []
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0, let line {
            let fields = String(cString: line).split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 5, fields[1].hasPrefix("r") else { continue }
            let range = fields[0].split(separator: "-")
            let name = fields.count > 5 ? fields[5...].joined(separator: " ") : "[anonymous]"
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16),
                  !name.hasPrefix("[vvar"), !name.hasPrefix("[vsyscall") else { continue }
            regions.append(Region(start: start, end: end, name: String(name.filter { $0 != "\n" })))
        }
        return regions
    }
}
