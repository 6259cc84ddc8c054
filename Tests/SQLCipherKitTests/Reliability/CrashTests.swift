import Foundation
import ProcessTestSupport
import ReliabilitySupport
import SQLCipherKit
import Testing

/// Process crashes: a child writing (or rekeying) is killed with SIGKILL at random moments, and what it
/// reported before dying must hold afterwards.
@Suite("Reliability: crashes")
struct CrashTests {
    static let kills = 60
    static let rekeyKills = 50

    @Test("SIGKILL during writes loses no reported commit", arguments: ["wal", "delete"])
    func killDuringWrites(mode: String) throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("crash.db"), keyHex = randomKeyHex()
        let key = try Key.rawKey(hex: Array(keyHex.utf8))
        var lastReported = 0, commits = 0
        let seed = UInt64.random(in: 1...UInt64.max >> 1)
        var generator = SplitMix64(seed: seed)
        let started = Date()
        for kill in 0..<Self.kills {
            let child = try HelperProcess(["write", path, mode],
                                          environment: ["RELIABILITY_KEY_HEX": keyHex, "RELIABILITY_SEED": "\(seed &+ UInt64(kill))"])
            // Wait for a random number of commits, then let the child run on for up to 3 ms: the kill lands
            // inside a transaction, a commit or a checkpoint.
            let wanted = Int.random(in: 1...12, using: &generator)
            var seen = 0
            while seen < wanted, let line = child.readLine() {
                if let tx = Self.committedTransaction(line) { lastReported = tx; seen += 1 }
            }
            try #require(seen == wanted, "the writer stopped early: \(child.finish()) \(child.standardError)")
            usleep(UInt32.random(in: 0..<3000, using: &generator))
            for line in child.kill() {
                if let tx = Self.committedTransaction(line) { lastReported = tx; seen += 1 }
            }
            #expect(child.wasKilled, "\(child.standardError)")
            commits += seen
            let problems = WorkloadVerifier.problems(path: path, key: key, lastReported: lastReported)
            try #require(problems.isEmpty, "kill \(kill) (seed \(seed), \(mode)): \(problems.prefix(5))")
        }
        print("RELIABILITY crash during writes (\(mode)): \(Self.kills) kills, \(commits) reported commits, "
              + "0 lost, 0 partial, \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    @Test("SIGKILL during rekey leaves the file under exactly one key, intact", arguments: ["delete", "wal"])
    func killDuringRekey(mode: String) throws {
        let folder = try TemporaryDirectory()
        let original = folder.file("original.db"), path = folder.file("rekey.db")
        let oldHex = randomKeyHex(), newHex = randomKeyHex()
        let oldKey = try Key.rawKey(hex: Array(oldHex.utf8)), newKey = try Key.rawKey(hex: Array(newHex.utf8))
        try Self.makeRekeySource(original, key: oldKey, mode: mode)
        let environment = ["RELIABILITY_KEY_HEX": oldHex, "RELIABILITY_NEW_KEY_HEX": newHex]

        // Calibrate: how long an undisturbed rekey takes here, so that kills spread over all of it.
        try Self.replace(path, with: original)
        let calibration = try HelperProcess(["rekey", path], environment: environment)
        _ = calibration.readLine(startingWith: "rekeying")
        let clock = Date()
        #expect(calibration.readLine(startingWith: "rekeyed") != nil, "\(calibration.standardError)")
        let duration = Date().timeIntervalSince(clock)
        calibration.finish()

        var outcomes = (old: 0, new: 0)
        let started = Date()
        let seed = UInt64.random(in: 1...UInt64.max >> 1)
        var generator = SplitMix64(seed: seed)
        for kill in 0..<Self.rekeyKills {
            try Self.replace(path, with: original)
            let child = try HelperProcess(["rekey", path], environment: environment)
            try #require(child.readLine(startingWith: "rekeying") != nil, "\(child.finish()) \(child.standardError)")
            usleep(UInt32(Double.random(in: 0..<(duration * 1.1), using: &generator) * 1_000_000))
            let finished = (child.kill() + [""]).contains("rekeyed")

            // Try the keys in a random order: a wrong first try must not damage the file either.
            let keys = Bool.random(using: &generator) ? [("old", oldKey), ("new", newKey)] : [("new", newKey), ("old", oldKey)]
            var opened: [String] = []
            for (name, key) in keys {
                // The other key's side of the rekey: refused as a wrong key, and any other error fails the test.
                guard let db = try Self.openUnlessWrongKey(path, key: key) else { continue }
                opened.append(name)
                let problems = try Self.rekeyProblems(db)
                db.close()
                try #require(problems.isEmpty, "kill \(kill) (seed \(seed)), opened with the \(name) key: \(problems.prefix(5))")
            }
            try #require(opened.count == 1, "kill \(kill) (seed \(seed)): opened with \(opened) keys")
            if finished { #expect(opened == ["new"], "the rekey was reported done but the new key fails") }
            if opened == ["old"] { outcomes.old += 1 } else { outcomes.new += 1 }
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: original)
        let size = try #require(attributes[.size] as? Int)
        // Kills spread over the whole rekey land on both sides of its commit: the test has seen both outcomes.
        let (oldOutcomes, newOutcomes) = outcomes
        #expect(oldOutcomes > 0 && newOutcomes > 0,
                "kills landed on one side of the rekey only (\(oldOutcomes) old key, \(newOutcomes) new key)")
        print("RELIABILITY crash during rekey (\(mode), \(size / 1_000_000) MB, rekey \(Int(duration * 1000)) ms): "
              + "\(Self.rekeyKills) kills, \(outcomes.old) old key, \(outcomes.new) new key, 0 damaged, "
              + "\(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    @Test("The crash checker reports lost, partial and unbalanced commits")
    func checkerCatchesDamage() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("damaged.db"), keyHex = randomKeyHex()
        let key = try Key.rawKey(hex: Array(keyHex.utf8))
        let child = try HelperProcess(["write", path, "delete"], environment: ["RELIABILITY_KEY_HEX": keyHex])
        var lastReported = 0
        while lastReported < 5, let line = child.readLine() { lastReported = Self.committedTransaction(line) ?? lastReported }
        for line in child.kill() { lastReported = Self.committedTransaction(line) ?? lastReported }
        #expect(WorkloadVerifier.problems(path: path, key: key, lastReported: lastReported).isEmpty)
        #expect(!WorkloadVerifier.problems(path: path, key: key, lastReported: lastReported + 2).isEmpty)

        let copy = folder.file("copy.db")
        for damage in ["DELETE FROM item WHERE tx = 2 AND seq = 0",
                       "DELETE FROM item WHERE tx = 3; UPDATE tally SET rows = (SELECT count(*) FROM item)",
                       "UPDATE tally SET rows = rows + 1"] {
            try Self.replace(copy, with: path)
            let db = try Database(path: copy, key: key, mode: .readWrite)
            try db.execute(damage)
            db.close()
            #expect(!WorkloadVerifier.problems(path: copy, key: key, lastReported: lastReported).isEmpty, "\(damage)")
        }
    }

    // MARK: Helpers

    /// Opens `path` with `key`, or returns nil when the key is refused with `.wrongKeyOrNotADatabase`; any
    /// other error is thrown.
    static func openUnlessWrongKey(_ path: String, key: Key) throws -> Database? {
        do {
            return try Database(path: path, key: key, mode: .readWrite)
        } catch where error.kind == .wrongKeyOrNotADatabase {
            return nil
        }
    }

    /// The transaction number in a `commit TX ROWS` line.
    static func committedTransaction(_ line: String) -> Int? {
        let fields = line.split(separator: " ")
        guard fields.count == 3, fields[0] == "commit" else { return nil }
        return Int(fields[1])
    }

    static let rekeyRows = 1_500

    /// A database of about 5 MB whose every row can be checked: row `id` holds `id` zero-padded to 3,000 digits.
    static func makeRekeySource(_ path: String, key: Key, mode: String) throws {
        let db = try Database(path: path, key: key)
        _ = try db.setJournalMode(mode == "wal" ? .wal : .delete)
        try db.execute("""
            CREATE TABLE filler(id INTEGER PRIMARY KEY, payload TEXT NOT NULL);
            WITH RECURSIVE n(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM n WHERE id < \(rekeyRows))
            INSERT INTO filler SELECT id, printf('%03000d', id) FROM n;
            """)
        db.close()
    }

    static func rekeyProblems(_ db: Database) throws -> [String] {
        var problems = try db.integrityCheck()
        problems += try db.cipherIntegrityCheck().filter(\.isFailure).map(\.message)
        let rows = try db.scalar(Int.self, "SELECT count(*) FROM filler") ?? 0
        let wrong = try db.scalar(Int.self, "SELECT count(*) FROM filler WHERE payload != printf('%03000d', id)") ?? 0
        if rows != rekeyRows { problems.append("\(rows) rows instead of \(rekeyRows)") }
        if wrong != 0 { problems.append("\(wrong) rows changed") }
        return problems
    }

    /// Replaces `path` (and any side files) with a copy of `source`.
    static func replace(_ path: String, with source: String) throws {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try FileManager.default.copyItem(atPath: source, toPath: path)
    }
}
