import Foundation
import ProcessTestSupport
import ReliabilitySupport
import SQLCipherKit
import Synchronization
import Testing

/// Wrong keys: over a thousand wrong raw keys and passphrases against two passphrase databases (WAL and
/// rollback journal). Every attempt fails typed, no error shows the key tried, and no attempt writes anything:
/// the files keep their bytes, hash and modification time, and no side file ever appears.
@Suite("Reliability: wrong keys")
struct WrongKeyTests {
    static let passphrase = "Correct Horse Battery Staple — café №7"
    static let databases = ["rollback.db", "wal.db"]

    @Test("1,000+ wrong keys: each fails typed, and no file is ever written")
    func wrongKeysNeverOpenNorWrite() throws {
        let started = Date()
        let folder = try TemporaryDirectory()
        let seed = reliabilitySeed()
        var generator = SplitMix64(seed: seed)
        let right = try Key.passphrase(Self.passphrase)
        for name in Self.databases { try Self.makeSample(folder.file(name), key: right, wal: name == "wal.db") }
        let listing = try folder.names()
        try #require(listing == Self.databases, "side files left after closing: \(listing)")
        let before = try FolderSnapshot(folder, files: Self.databases)

        // ~1,000 raw keys of every form, including ones that carry the database's real salt.
        var attempts: [WrongKeyAttempt] = []
        let modes: [OpenMode] = [.readWrite, .readOnly, .readWriteCreate]
        for index in 0..<1_000 {
            let name = Self.databases[index % 2]
            let salt = [UInt8](before.files[name]?.bytes.prefix(Key.saltLength) ?? Data())
            let bytes = (0..<Key.rawKeyLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let randomSalt = (0..<Key.saltLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let key: Key, secrets: [String]
            switch index % 10 {
            case 0...4:
                (key, secrets) = (try Key.rawKey(bytes), [Hex.string(bytes)])
            case 5:
                (key, secrets) = (try Key.rawKey(bytes, salt: randomSalt), [Hex.string(bytes)])
            case 6:
                (key, secrets) = (try Key.rawKey(bytes, salt: salt), [Hex.string(bytes)])
            case 7:
                // Hex text, upper and lower case digits mixed.
                let hex = Hex.string(bytes).enumerated().map { $0.offset % 3 == 0 ? $0.element.uppercased() : String($0.element) }.joined()
                (key, secrets) = (try Key.rawKey(hex: Array(hex.utf8)), [hex, Hex.string(bytes)])
            case 8:
                let hex = Hex.string(bytes) + Hex.string(salt)
                (key, secrets) = (try Key.rawKey(hex: Array(hex.utf8)), [Hex.string(bytes)])
            default:
                let hex = (Hex.string(bytes) + Hex.string(randomSalt)).uppercased()
                (key, secrets) = (try Key.rawKey(hex: Array(hex.utf8)), [hex, Hex.string(bytes)])
            }
            attempts.append(WrongKeyAttempt(path: folder.file(name), key: key, secrets: secrets,
                                            mode: modes[Int.random(in: 0..<3, using: &generator)], label: "raw #\(index)"))
        }
        let rawCount = attempts.count

        // ~100 near misses of the right passphrase, each against one of the two files.
        let nearMisses = Self.nearMisses(of: Self.passphrase, using: &generator)
        try #require(nearMisses.count >= 90)
        for (index, wrong) in nearMisses.enumerated() {
            attempts.append(WrongKeyAttempt(path: folder.file(Self.databases[index % 2]), key: try Key.passphrase(wrong),
                                            secrets: [wrong, Self.passphrase], mode: modes[index % 3],
                                            label: "passphrase #\(index) \(String(reflecting: wrong).prefix(80))"))
        }
        attempts.shuffle(using: &generator)

        // Two threads, each with its own connections (a Database is confined to one thread). After every
        // attempt the folder must hold the two databases and nothing else.
        let problems = Mutex<[String]>([])
        let opened = Atomic<Int>(0)
        let shared = attempts, folderPath = folder.path
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            for attempt in stride(from: worker, to: shared.count, by: 2).map({ shared[$0] }) {
                var found = attempt.run()
                if found.contains(where: { $0.hasPrefix("opened") }) { opened.add(1, ordering: .relaxed) }
                // A listing that fails is a problem too, not a pass.
                do {
                    let names = try FileManager.default.contentsOfDirectory(atPath: folderPath).sorted()
                    if names != Self.databases { found.append("the folder holds \(names) after the attempt") }
                } catch {
                    found.append("cannot list the folder after the attempt: \(error)")
                }
                if !found.isEmpty { problems.withLock { $0.append("\(attempt.label): \(found)") } }
            }
        }
        let found = problems.withLock { $0 }
        #expect(found.isEmpty, "seed \(seed): \(found.count) problems: \(found.prefix(10))")

        // Nothing was written: same bytes, hash, modification time; no side file.
        let after = try FolderSnapshot(folder, files: Self.databases)
        let differences = after.differences(from: before)
        #expect(differences.isEmpty, "seed \(seed): \(differences)")
        for name in Self.databases {
            for suffix in ["-wal", "-shm", "-journal"] {
                #expect(!FileManager.default.fileExists(atPath: folder.file(name + suffix)), "\(name + suffix) exists")
            }
        }

        // The right key still opens and reads both.
        for name in Self.databases {
            let db = try Database(path: folder.file(name), key: right, mode: .readOnly)
            #expect(try db.scalar(Int.self, "SELECT count(*) FROM account") == 40)
            #expect(try db.scalar(String.self, "SELECT body FROM memo WHERE id = 3") == "memo 3")
            #expect(try db.cipherIntegrityCheck().filter(\.isFailure).isEmpty)
            db.close()
        }

        let passphraseCount = attempts.count - rawCount
        print("RELIABILITY wrong keys: \(attempts.count) attempts (\(rawCount) raw, \(passphraseCount) passphrase), "
              + "\(opened.load(ordering: .relaxed)) opened, files \(differences.isEmpty ? "unchanged" : "CHANGED"), "
              + "\(String(format: "%.1f", Date().timeIntervalSince(started))) s (seed \(seed))")
    }

    @Test("The unchanged-file check notices a write with the right key, and a side file")
    func snapshotNoticesWrites() throws {
        let folder = try TemporaryDirectory()
        let right = try Key.passphrase(Self.passphrase)
        for name in Self.databases { try Self.makeSample(folder.file(name), key: right, wal: name == "wal.db") }
        let before = try FolderSnapshot(folder, files: Self.databases)
        #expect(try FolderSnapshot(folder, files: Self.databases).differences(from: before).isEmpty)

        // An open WAL connection shows its side files.
        let wal = try Database(path: folder.file("wal.db"), key: right, mode: .readWrite)
        #expect(try FolderSnapshot(folder, files: Self.databases).differences(from: before)
            .contains { $0.hasPrefix("folder listing") })
        wal.close()

        // One committed row changes the rollback file's bytes and hash.
        let db = try Database(path: folder.file("rollback.db"), key: right, mode: .readWrite)
        try db.execute("UPDATE account SET balance = balance + 1 WHERE id = 1")
        db.close()
        let differences = try FolderSnapshot(folder, files: Self.databases).differences(from: before)
        #expect(differences.contains { $0.hasPrefix("rollback.db: SHA-256") }, "\(differences)")
        #expect(differences.contains { $0.hasPrefix("rollback.db: bytes") }, "\(differences)")
        #expect(!differences.contains { $0.hasPrefix("wal.db") }, "\(differences)")
    }

    // MARK: Helpers

    /// A small passphrase database (a few tables and rows), in WAL or rollback mode, closed.
    static func makeSample(_ path: String, key: Key, wal: Bool) throws {
        let db = try Database(path: path, key: key)
        try db.setJournalMode(wal ? .wal : .delete)
        try db.execute("""
            CREATE TABLE account(id INTEGER PRIMARY KEY, owner TEXT NOT NULL, balance INTEGER NOT NULL);
            CREATE TABLE memo(id INTEGER PRIMARY KEY, body TEXT, attachment BLOB);
            CREATE INDEX account_owner ON account(owner);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)
            INSERT INTO account SELECT i, 'owner ' || i, i * 100 FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10)
            INSERT INTO memo SELECT i, 'memo ' || i, randomblob(200) FROM n;
            """)
        db.close()
    }

    /// Near misses of `right`: one character changed, dropped, doubled or swapped, case flipped, blanks and
    /// newlines around it, prefixes, suffixes, look-alike characters, other Unicode normalization, much longer.
    /// None is `right` byte for byte, nor `right` followed by NUL bytes (which PBKDF2 does not tell apart).
    static func nearMisses(of right: String, using generator: inout SplitMix64) -> [String] {
        let characters = Array(right)
        func replacing(_ index: Int, with text: String) -> String {
            String(characters[..<index]) + text + String(characters[(index + 1)...])
        }
        var misses: [String] = []
        for index in stride(from: 0, to: characters.count, by: 2) {
            let letter = Character(UnicodeScalar(UInt8.random(in: 97...122, using: &generator)))
            misses.append(replacing(index, with: String(letter == characters[index] ? "#" : letter)))
        }
        for index in characters.indices where characters[index].isLetter && index.isMultiple(of: 3) {
            let flipped = characters[index].isUppercase ? characters[index].lowercased() : characters[index].uppercased()
            misses.append(replacing(index, with: flipped))
        }
        misses += [right.lowercased(), right.uppercased()]
        misses += [" ", "\n", "\r\n", "\t", "  "].map { right + $0 }
        misses += [" " + right, "\n" + right, "\u{FEFF}" + right]
        misses += [1, 2, 5, characters.count / 2].map { String(characters.dropLast($0)) }
        misses += [1, 3].map { String(characters.dropFirst($0)) }
        misses += ["!", "1", "7", ".", "é", right].map { right + $0 }
        misses += ["x", "A", "the "].map { $0 + right }
        // Look-alikes: Cyrillic о, а, е, С; en dash and hyphen for the em dash; "No" for №; no-break space.
        misses += [("o", "\u{043E}"), ("a", "\u{0430}"), ("e", "\u{0435}"), ("C", "\u{0421}"), ("—", "–"), ("—", "-"),
                   ("№", "No"), (" ", "\u{00A0}"), ("S", "Ｓ")].map { right.replacingOccurrences(of: $0.0, with: $0.1) }
        // The same text, other bytes: é decomposed (Swift's String == calls these equal; SQLCipher does not).
        misses.append(right.decomposedStringWithCanonicalMapping)
        misses += [String(repeating: right, count: 50), right + String(repeating: "x", count: 10_000)]
        for index in stride(from: 1, to: characters.count - 1, by: 3) {
            var swapped = characters
            swapped.swapAt(index, index + 1)
            misses.append(String(swapped))
            misses.append(replacing(index, with: ""))
            misses.append(replacing(index, with: String(characters[index]) + String(characters[index])))
        }
        // Unique by bytes; never the right passphrase, with or without trailing NULs.
        var seen = Set<[UInt8]>()
        let rightBytes = Array(right.utf8)
        return misses.filter { miss in
            var bytes = Array(miss.utf8)
            guard !bytes.isEmpty, seen.insert(bytes).inserted else { return false }
            while bytes.last == 0 { bytes.removeLast() }
            return bytes != rightBytes
        }
    }
}

/// One wrong-key open, on whichever thread runs it.
struct WrongKeyAttempt: Sendable {
    let path: String
    let key: Key
    /// Texts the error must not show: the key's hex, the passphrase tried, the right passphrase.
    let secrets: [String]
    let mode: OpenMode
    let label: String

    /// Opens `path` with the key: what went wrong (empty when the open failed as it must).
    func run() -> [String] {
        let error: SQLCipherError
        do {
            let db = try Database(path: path, key: key, configuration: .init(mode: mode))
            db.close()
            return ["opened with a wrong key (\(mode))"]
        } catch let thrown {
            error = thrown
        }
        var problems: [String] = []
        if error.kind != .wrongKeyOrNotADatabase {
            problems.append("failed with \(error.kind), not wrongKeyOrNotADatabase: \(error)")
        }
        let texts = [error.description, error.message, String(reflecting: error)]
        for secret in secrets where texts.contains(where: { $0.localizedCaseInsensitiveContains(secret) }) {
            problems.append("the error shows the key (\(secret.count) characters): \(error)")
        }
        return problems
    }
}

/// The databases of a folder as they are on disk: bytes, SHA-256 (from `/usr/bin/sha256sum`), modification
/// time; and the folder's listing.
struct FolderSnapshot {
    struct File: Equatable {
        let bytes: Data
        let sha256: String
        let modified: Date?
    }

    let listing: [String]
    let files: [String: File]

    init(_ folder: TemporaryDirectory, files names: [String]) throws {
        listing = try folder.names()
        let hashes = try sha256(of: names.map(folder.file))
        var files: [String: File] = [:]
        for name in names {
            let path = folder.file(name)
            files[name] = File(bytes: try contents(of: path), sha256: hashes[path] ?? "",
                               modified: try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
        }
        self.files = files
    }

    /// What changed since `before`, one line each.
    func differences(from before: FolderSnapshot) -> [String] {
        var differences: [String] = []
        if listing != before.listing { differences.append("folder listing: \(before.listing) → \(listing)") }
        for (name, old) in before.files.sorted(by: { $0.key < $1.key }) {
            guard let new = files[name] else { differences.append("\(name): gone"); continue }
            if new.sha256 != old.sha256 { differences.append("\(name): SHA-256 \(old.sha256) → \(new.sha256)") }
            if new.bytes != old.bytes { differences.append("\(name): bytes differ") }
            if new.modified != old.modified {
                differences.append("\(name): modified \(String(describing: old.modified)) → \(String(describing: new.modified))")
            }
        }
        return differences
    }
}

/// The SHA-256 of each file, by path, as `/usr/bin/sha256sum` computes it.
func sha256(of paths: [String]) throws -> [String: String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = ["--"] + paths
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw SQLCipherError(kind: .ioError, message: "sha256sum exited with \(process.terminationStatus)")
    }
    var hashes: [String: String] = [:]
    for line in text.split(separator: "\n") {
        // "<64 hex digits>  <path>"
        let hash = line.prefix(64)
        hashes[String(line.dropFirst(66))] = String(hash)
    }
    return hashes
}
