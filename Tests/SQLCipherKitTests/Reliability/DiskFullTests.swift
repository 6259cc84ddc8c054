import Foundation
import ProcessTestSupport
import ReliabilitySupport
import SQLCipherKit
import Testing

/// Full disks: a child writes under a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored — the same failed
/// write(2) a full disk gives, without root) until a write fails.
@Suite("Reliability: disk full")
struct DiskFullTests {
    static let runs = 20

    @Test("A write past the file-size limit fails typed, rolls back, and loses nothing", arguments: ["wal", "delete"])
    func writeUnderFileSizeLimit(mode: String) throws {
        let folder = try TemporaryDirectory()
        let keyHex = randomKeyHex(), key = try Key.rawKey(hex: Array(keyHex.utf8))
        var kinds: [String: Int] = [:]
        var commits = 0
        let started = Date()
        let seed = UInt64.random(in: 1...UInt64.max >> 1)
        var generator = SplitMix64(seed: seed)
        for run in 0..<Self.runs {
            let path = folder.file("full-\(run).db")
            let db = try Database(path: path, key: key)
            _ = try db.setJournalMode(mode == "wal" ? .wal : .delete)
            db.close()
            // From a few pages to half a megabyte: the failure lands in the journal, the log, the database
            // file or a checkpoint, at different points of a transaction.
            let limit = Int.random(in: 16_384...524_288, using: &generator)
            let child = try HelperProcess(["disk-full", path, mode, "\(limit)"],
                                          environment: ["RELIABILITY_KEY_HEX": keyHex, "RELIABILITY_SEED": "\(seed &+ UInt64(run))"])
            var lastReported = 0
            var report: [String: String] = [:]
            while let line = child.readLine() {
                if let tx = CrashTests.committedTransaction(line) { lastReported = tx; continue }
                let fields = line.split(separator: " ", maxSplits: 1).map(String.init)
                report[fields[0]] = fields.count > 1 ? fields[1] : ""
            }
            child.finish()
            let context = "run \(run) (seed \(seed), limit \(limit)): \(report) \(child.standardError)"
            try #require(child.exitStatus == 0, "\(context)")
            let kind = try #require(report["error"]?.split(separator: " ").first.map(String.init), "\(context)")
            #expect(kind == SQLCipherError.Kind.full.rawValue, "\(context)")
            #expect(report["in-transaction"] == "no", "\(context)")
            #expect(report["integrity"] == "ok", "\(context)")
            #expect(report["tally"] == "ok", "\(context)")
            kinds[kind, default: 0] += 1
            commits += lastReported

            // Without the limit: every commit made before the failure is there, the failed one is not, and
            // the database takes writes again.
            let problems = WorkloadVerifier.problems(path: path, key: key, lastReported: lastReported, unreported: 0)
            try #require(problems.isEmpty, "\(context): \(problems)")
            let reopened = try Database(path: path, key: key, mode: .readWrite)
            try reopened.execute("UPDATE tally SET rows = rows")
            reopened.close()
        }
        print("RELIABILITY disk full (\(mode)): \(Self.runs) runs, \(commits) commits kept, failures \(kinds.sorted { $0.key < $1.key }), "
              + "0 lost, \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    @Test("A group commit whose commit fails on a full disk acknowledges none of its writes, and the pool goes on")
    func groupCommitFailsWhole() throws {
        let folder = try TemporaryDirectory()
        let keyHex = randomKeyHex()
        let path = folder.file("group.db"), writes = 40
        let child = try HelperProcess(["group-commit-full", path, "\(writes)"], environment: ["RELIABILITY_KEY_HEX": keyHex])
        var lines: [String] = []
        while let line = child.readLine() { lines.append(line) }
        child.finish()
        let context = "\(lines) \(child.standardError)"
        try #require(child.exitStatus == 0, "\(context)")
        #expect(lines.first == "queued \(writes)", "\(context)")
        let outcomes = lines.filter { $0.hasPrefix("write ") }
        #expect(outcomes == (0..<writes).map { "write \($0) error full" }, "every write fails with the commit's error: \(context)")
        #expect(lines.contains("rows 0"), "no write of the failed group is in the database: \(context)")
        #expect(lines.last == "after ok", "the pool takes writes again: \(context)")
        let db = try Database(path: path, key: try Key.rawKey(hex: Array(keyHex.utf8)), mode: .readOnly)
        defer { db.close() }
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM item") == 1)
        #expect(try db.integrityCheck().isEmpty)
    }
}
