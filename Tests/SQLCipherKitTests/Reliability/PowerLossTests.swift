import Foundation
import ProcessTestSupport
import ReliabilitySupport
import SQLCipherKit
import Testing

/// Power cuts (issue 36): a child (`ReliabilityHelper power-loss`) runs a workload through the power-cut simulator
/// (Tests/Support/PowerLossVFS), which at a random I/O event puts every file back to what its last sync made
/// durable plus some of the writes since (whole, dropped, or torn in 512-byte sectors) and the folder to its
/// last sync plus a prefix of the changes since, then exits. The database must then open with its key (the old
/// or the new one, if a rekey was under way), pass `integrity_check` and `cipher_integrity_check`, and hold every
/// transaction the child acknowledged, none half; every acknowledged backup the same, as of its moment.
///
/// `POWERLOSS_CUTS=10000 swift test --filter PowerLossTests` is the campaign (the number spread over the six
/// workloads); `RELIABILITY_SEED` replays a run, and every failure names the seed, the cut and the policy.
@Suite("Reliability: power cuts", .serialized)
struct PowerLossTests {
    static let kinds = ["database-delete", "database-wal", "queue-delete", "queue-wal", "pool", "pool-groups"]
    /// Cuts per workload: 100 in the test command (800 in all), POWERLOSS_CUTS / 8 in a campaign; three times as many
    /// for `pool-groups` (issue 46: the group commit, on by default, is the newest write path: 300 cuts).
    static func cuts(for kind: String) -> Int {
        let base = max(1, (ProcessInfo.processInfo.environment["POWERLOSS_CUTS"].flatMap { Int($0) } ?? 800) / 8)
        return kind == "pool-groups" ? 3 * base : base
    }
    /// The writer tasks of the helper's `pool-groups` workload (ReliabilityHelper's PowerLoss.groupWriters): each may
    /// have one transaction committed but not yet reported when the power goes.
    static let groupWriters = 8

    /// The least a workload's cuts must show, per 20 cuts (issue 45): a cut that tore a write, and acknowledged
    /// transactions before the cuts. A simulator that never tears, or a workload cut before it commits anything,
    /// would pass every check while proving nothing. Measured in four fresh-clone runs of the test command (100 cuts
    /// a workload): 27 to 60 cuts with a torn write and 1,533 to 2,316 acknowledged transactions per workload; the
    /// floors, 1 and 100 per 20 cuts (5 and 500 per 100), leave a margin of more than five to one. Below 20 cuts
    /// a workload (a narrowed run, POWERLOSS_CUTS under 100) they are 0, and the summary line says so.
    static let tornFloorPer20Cuts = 1, acknowledgedFloorPer20Cuts = 100

    /// What one cut left: the child's lines, the verdict on the files.
    struct Outcome {
        var lines: [String] = []
        var problems: [String] = []
        var acknowledged = 0
        var cutLine: String?

        /// What the problems come to, for the controls: only lost commits and half transactions are losses; a
        /// child that did not reach its cut is a control that did not run, and damage (a failed integrity check,
        /// a database that no key opens) is neither.
        enum Verdict: Hashable { case clean, lost, half, damaged, didNotRun }

        var verdict: Verdict {
            if cutLine == nil || problems.contains(where: { $0.hasPrefix(PowerLossTests.didNotRun) }) { return .didNotRun }
            if problems.isEmpty { return .clean }
            if problems.contains(where: { $0.contains(" was reported but the last is ") || $0.hasPrefix("transactions 1...") }) {
                return .lost
            }
            if problems.contains(where: { $0.contains(" transactions are partly present") || $0.hasPrefix("the tally says") }) {
                return .half
            }
            return .damaged
        }
    }

    static let didNotRun = "the child did not reach its cut"

    /// Runs one child with the cut at `cut` (0: at the end of the workload) and checks what it left.
    static func cut(kind: String, seed: UInt64, cut: Int64, policy: Int, keys: [String],
                    extra: [String: String] = [:]) throws -> Outcome {
        // tmpfs when there is one: the simulator decides what survives, so real syncs only cost time.
        let folder = access("/dev/shm", W_OK) == 0 ? try TemporaryDirectory(in: "/dev/shm") : try TemporaryDirectory()
        let child = try HelperProcess(["power-loss", kind, folder.path], environment: [
            "RELIABILITY_KEY_HEX": keys[0], "RELIABILITY_NEW_KEY_HEX": keys[1], "RELIABILITY_SEED": "\(seed)",
            "POWERLOSS_CUT": "\(cut)", "POWERLOSS_POLICY": "\(policy)",
        ].merging(extra) { $1 })
        var outcome = Outcome()
        outcome.lines = child.readAll()
        outcome.cutLine = outcome.lines.last { $0.hasPrefix("power cut at event ") }
        guard child.exitStatus == 0, outcome.cutLine != nil else {
            outcome.problems = ["\(didNotRun) (exit \(child.exitStatus)): \(child.standardError)"]
            return outcome
        }
        let rawKeys = try keys.map { try Key.rawKey(hex: Array($0.utf8)) }
        outcome.problems = verify(folder: folder.path, lines: outcome.lines, keys: rawKeys, acknowledged: &outcome.acknowledged,
                                  unreported: kind == "pool-groups" ? groupWriters : 1)
        return outcome
    }

    /// The problems in what the child left in `folder`, given its `lines`.
    /// `unreported`: how many transactions may have committed without being reported (one, a writer's last; a
    /// writer task's each, when several write at once).
    static func verify(folder: String, lines: [String], keys: [Key], acknowledged: inout Int, unreported: Int = 1)
        -> [String] {
        var lastCommit = 0, keyIndex = 0, pendingKey: Int?, backups: [(name: String, lastTx: Int, key: Int)] = []
        for line in lines {
            let words = line.split(separator: " ")
            switch words.first {
            case "ready": lastCommit = (Int(words[1]) ?? 1) - 1
            // Several writers report in the order their writes return: the highest number reported counts.
            case "commit": lastCommit = max(lastCommit, Int(words[1]) ?? lastCommit); acknowledged += 1
            case "rekeying": pendingKey = Int(words[1])
            case "rekeyed": keyIndex = Int(words[1]) ?? keyIndex; pendingKey = nil
            case "backup": backups.append(("backup-\(words[1]).db", Int(words[2]) ?? 0, Int(words[3]) ?? 0))
            default: break
            }
        }
        let path = folder + "/power.db"
        // The acknowledged key first; a rekey under way may have finished, or not: exactly one of them opens.
        var candidates = [keyIndex]
        if let pendingKey { candidates.append(pendingKey) }
        var opened: Int?
        var errors: [String] = []
        for index in candidates {
            do {
                try Database(path: path, key: keys[index], mode: .readWrite).close()
                opened = index
                break
            } catch {
                errors.append("key \(index): \(error)")
            }
        }
        guard let opened else { return ["the database opens with no key it may have: \(errors)"] }
        var problems = WorkloadVerifier.problems(path: path, key: keys[opened], lastReported: lastCommit,
                                                 unreported: unreported)
        for backup in backups {
            problems += WorkloadVerifier.problems(path: folder + "/" + backup.name, key: keys[backup.key],
                                                  lastReported: backup.lastTx, unreported: 0)
                .map { "\(backup.name): \($0)" }
        }
        return problems
    }

    /// The number of I/O events of the whole workload, from a run cut at its end. For `pool-groups`, that run must
    /// have formed groups (more writes than commits), or the workload tests no group commit.
    static func calibrate(kind: String, seed: UInt64, keys: [String], extra: [String: String] = [:]) throws -> Int64 {
        let outcome = try cut(kind: kind, seed: seed, cut: 0, policy: 2, keys: keys, extra: extra)
        try #require(outcome.problems.isEmpty, "\(kind), uncut (seed \(seed)): \(outcome.problems)")
        if kind == "pool-groups" {
            let line = outcome.lines.last { $0.hasPrefix("groups ") } ?? "no groups line"
            let numbers = line.split(separator: " ").compactMap { Int($0) }
            try #require(numbers.count == 2 && numbers[1] > numbers[0] && numbers[0] > 0,
                         "\(kind) (seed \(seed)): the workload formed no groups (\(line)): its cuts test no group commit")
            print("RELIABILITY power cuts (\(kind)): the uncut run committed \(numbers[1]) writes in \(numbers[0]) groups")
        }
        let events = outcome.lines.last { $0.hasPrefix("events ") }.flatMap { Int64($0.dropFirst("events ".count)) }
        return try #require(events, "\(kind): no events line in \(outcome.lines.suffix(3))")
    }

    @Test("every acknowledged commit survives a power cut with the library's defaults", arguments: kinds)
    func powerCuts(kind: String) throws {
        let seed = reliabilitySeed()
        var generator = SplitMix64(seed: seed)
        let keys = [randomKeyHex(), randomKeyHex()]
        let events = try Self.calibrate(kind: kind, seed: seed, keys: keys)
        var acknowledged = 0, torn = 0, started = Date()
        var counts = [0, 0, 0]
        started = Date()
        let cutsPerKind = Self.cuts(for: kind)
        for index in 0..<cutsPerKind {
            let at = Int64.random(in: 1...events, using: &generator)
            // Mostly random cuts; a tenth drop every unsynced write (the harshest), a tenth keep them all.
            let policy = [0, 0, 0, 0, 0, 0, 0, 0, 1, 2][Int.random(in: 0..<10, using: &generator)]
            counts[policy] += 1
            let childSeed = seed &+ UInt64(index)
            let outcome = try Self.cut(kind: kind, seed: childSeed, cut: at, policy: policy, keys: keys)
            acknowledged += outcome.acknowledged
            if outcome.cutLine?.contains("torn 0,") == false { torn += 1 }
            try #require(outcome.problems.isEmpty, """
                \(kind), cut \(index) at event \(at) of \(events), policy \(policy): \(outcome.problems.prefix(5)); \
                replay: RELIABILITY_SEED=\(seed) (child seed \(childSeed), POWERLOSS_CUT=\(at) POWERLOSS_POLICY=\(policy)); \
                \(outcome.cutLine ?? "")
                """)
        }
        let tornFloor = cutsPerKind / 20 * Self.tornFloorPer20Cuts
        let acknowledgedFloor = cutsPerKind / 20 * Self.acknowledgedFloorPer20Cuts
        print("RELIABILITY power cuts (\(kind)): \(cutsPerKind) cuts over \(events) I/O events "
              + "(\(counts[0]) random, \(torn) of them with torn writes; \(counts[1]) dropping every unsynced write; "
              + "\(counts[2]) keeping all), \(acknowledged) acknowledged transactions, 0 lost, 0 partial, 0 unreadable; "
              + "floors: \(tornFloor) cuts with a torn write, \(acknowledgedFloor) acknowledged"
              + (cutsPerKind < 20 ? " (fewer than 20 cuts: none applied)" : "")
              + "; seed \(seed), \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        #expect(torn >= tornFloor, """
            \(kind): \(torn) of \(cutsPerKind) cuts tore a write, fewer than the floor of \(tornFloor) \
            (seed \(seed)): the simulator does not tear, and the run proves nothing about torn writes
            """)
        #expect(acknowledged >= acknowledgedFloor, """
            \(kind): \(acknowledged) transactions acknowledged before \(cutsPerKind) cuts, fewer than the floor \
            of \(acknowledgedFloor) (seed \(seed)): the cuts come before the workload commits, and prove nothing
            """)
    }

    /// NORMAL in WAL mode, the documented trade: a commit is synced at checkpoints only, so a cut may lose the last
    /// commits (a suffix), and nothing else: the database opens, passes both checks, holds no transaction half.
    @Test("synchronous=NORMAL in WAL mode loses at most a suffix of the acknowledged commits")
    func normalInWALLosesASuffixOnly() throws {
        let seed = reliabilitySeed()
        var generator = SplitMix64(seed: seed)
        let keys = [randomKeyHex(), randomKeyHex()]
        let extra = ["POWERLOSS_SYNCHRONOUS": "normal"]
        let events = try Self.calibrate(kind: "database-wal", seed: seed, keys: keys, extra: extra)
        var suffixLost = 0, lostCommits = 0
        let cuts = 60
        for index in 0..<cuts {
            let at = Int64.random(in: 1...events, using: &generator)
            let policy = [0, 1][Int.random(in: 0..<2, using: &generator)]
            let outcome = try Self.cut(kind: "database-wal", seed: seed &+ UInt64(index), cut: at, policy: policy,
                                       keys: keys, extra: extra)
            // "commit N was reported but the last is M": a suffix lost; anything else is damage, and a child that
            // did not reach its cut is a cut that did not happen.
            #expect(outcome.verdict != .didNotRun, "cut \(index) at \(at), policy \(policy) (seed \(seed)): \(outcome.problems)")
            let damage = outcome.problems.filter { !$0.contains(" was reported but the last is ") }
            #expect(damage.isEmpty, "cut \(index) at \(at), policy \(policy) (seed \(seed)): \(damage)")
            if let lost = outcome.problems.first(where: { $0.contains(" was reported but the last is ") }) {
                suffixLost += 1
                let numbers = lost.split(separator: " ").compactMap { Int($0) }
                if numbers.count == 2 { lostCommits += numbers[0] - numbers[1] }
            }
        }
        print("RELIABILITY power cuts (database-wal, synchronous=NORMAL): \(suffixLost) of \(cuts) cuts lost the last "
              + "\(lostCommits) acknowledged commits in all (a suffix each time), 0 damaged; seed \(seed)")
        #expect(suffixLost > 0, "NORMAL lost nothing in \(cuts) cuts (seed \(seed)): the control does not bite")
    }

    /// The controls: the simulator catches what it is there to catch. SQLite's own default, FULL, in rollback-journal
    /// mode loses the last commit when the cut keeps the journal's deletion out (the default before issue 36);
    /// OFF loses commits in WAL mode; and with every write kept (a crash, not a power cut) even OFF loses nothing.
    /// Only a lost commit or a half transaction counts as the loss a control looks for (issue 45): damage is
    /// reported apart, and a child that did not reach its cut is a control that did not run. The bound on those:
    /// none (a child that fails before its cut fails the main test too), so one fails the control.
    @Test("controls: FULL with a rollback journal and OFF with a WAL lose commits; keeping every write loses none")
    func controls() throws {
        let seed = reliabilitySeed()
        var generator = SplitMix64(seed: seed)
        let keys = [randomKeyHex(), randomKeyHex()]
        for (kind, level, policy, expectLoss) in [("queue-delete", "full", 1, true), ("database-wal", "off", 1, true),
                                                  ("pool-groups", "off", 1, true), ("queue-delete", "off", 2, false)] {
            let extra = ["POWERLOSS_SYNCHRONOUS": level]
            let events = try Self.calibrate(kind: kind, seed: seed, keys: keys, extra: extra)
            var verdicts: [Outcome.Verdict: Int] = [:]
            var notRun: [String] = []
            let cuts = 30
            for index in 0..<cuts {
                let at = Int64.random(in: 1...events, using: &generator)
                let outcome = try Self.cut(kind: kind, seed: seed &+ UInt64(index), cut: at, policy: policy, keys: keys,
                                           extra: extra)
                verdicts[outcome.verdict, default: 0] += 1
                if outcome.verdict == .didNotRun { notRun.append("cut \(index) at \(at): \(outcome.problems)") }
            }
            let losses = verdicts[.lost, default: 0] + verdicts[.half, default: 0]
            print("RELIABILITY power-cut control (\(kind), synchronous=\(level), policy \(policy)): "
                  + "\(losses) of \(cuts) cuts lost commits (\(verdicts[.lost, default: 0]) lost, "
                  + "\(verdicts[.half, default: 0]) half), \(verdicts[.damaged, default: 0]) damaged, "
                  + "\(verdicts[.didNotRun, default: 0]) did not reach their cut; seed \(seed)")
            #expect(notRun.isEmpty, """
                \(kind), synchronous=\(level): \(notRun.count) of \(cuts) children did not reach their cut (seed \(seed)): \
                a control that did not run, not a loss: \(notRun.prefix(3))
                """)
            if expectLoss {
                #expect(losses > 0, """
                    \(kind) with synchronous=\(level) lost no commit in \(cuts) cuts (seed \(seed)): \
                    the simulator does not see what it should
                    """)
            } else {
                #expect(verdicts[.clean, default: 0] == cuts,
                        "\(kind), synchronous=\(level), every write kept: \(verdicts) (seed \(seed))")
            }
        }
    }
}
