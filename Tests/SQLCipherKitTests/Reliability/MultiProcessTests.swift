import Foundation
import ProcessTestSupport
import SQLCipherKit
import Testing

/// Several processes, one encrypted database: four `ReliabilityHelper concurrent-writer` children writing through
/// the API and a loop of `sqlcipherkit query` processes writing through the CLI, all at once, on one WAL
/// database, each with a busy timeout. A fixed amount of work, not a deadline. The commits' order in the table
/// (rowid) shows that the writers overlapped: no writer's span of rows begins after all earlier ones ended.
@Suite("Reliability: several processes, one database")
struct MultiProcessTests {
    static let apiWriters = 4
    static let commitsPerWriter = 300
    static let cliCommits = 25
    /// The API writers' busy timeout; the CLI's is its default (5 s).
    static let busyTimeoutMilliseconds = 10_000

    /// What the CLI loop did: the sequences whose `query` exited 0, and every other outcome.
    final class CLIOutcome: @unchecked Sendable {
        // Written by the loop's thread before `done` is signalled, read only after waiting on it.
        var acknowledged: [Int] = []
        var failures: [String] = []
        let done = DispatchSemaphore(value: 0)
    }

    @Test("4 API processes and 1 CLI process write one WAL database at once: all acknowledged, clean, no busy",
          .hangGuard(.minutes(10),
                     hang: "a writer process that waits forever on a lock another process never releases"))
    func concurrentWriters() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("shared.db"), keyHex = randomKeyHex()
        let key = try Key.rawKey(hex: Array(keyHex.utf8))
        let setup = try Database(path: path, key: key)
        _ = try setup.setJournalMode(.wal)
        try setup.execute("CREATE TABLE commits(writer TEXT NOT NULL, sequence INTEGER NOT NULL, pid INTEGER NOT NULL, "
            + "payload BLOB, PRIMARY KEY (writer, sequence))")
        setup.close()
        let started = Date()

        var children: [(name: String, process: HelperProcess, pid: Int)] = []
        for index in 0..<Self.apiWriters {
            let name = "api\(index)"
            let child = try HelperProcess(["concurrent-writer", path, name, "\(Self.commitsPerWriter)",
                                           "\(Self.busyTimeoutMilliseconds)"],
                                          environment: ["RELIABILITY_KEY_HEX": keyHex])
            let ready = try #require(child.readLine(startingWith: "ready"), "\(child.finish()) \(child.standardError)")
            let pid = try #require(ready.split(separator: " ").last.flatMap { Int($0) }, "\(ready)")
            #expect(pid == Int(child.processIdentifier))
            children.append((name, child, pid))
        }

        // The CLI writer: one `sqlcipherkit query` process per commit, the raw key from the environment.
        let cli = CLIOutcome()
        let cliEnvironment = ProcessInfo.processInfo.environment.merging(["MULTI_PROCESS_KEY": keyHex]) { $1 }
        Thread.detachNewThread {
            for sequence in 1...Self.cliCommits {
                let sql = "INSERT INTO commits(writer, sequence, pid, payload) VALUES ('cli', \(sequence), 0, "
                    + "randomblob(100))"
                do {
                    let result = try runProcess(CLI.executable, ["query", path, sql, "--key-env",
                                                                     "MULTI_PROCESS_KEY", "--raw"],
                                                environment: cliEnvironment, timeout: 120)
                    if result.status == 0 {
                        cli.acknowledged.append(sequence)
                    } else {
                        cli.failures.append("cli \(sequence): exit \(result.status): \(result.stderr)")
                    }
                    if (result.stdout + result.stderr).localizedCaseInsensitiveContains(keyHex) {
                        cli.failures.append("cli \(sequence): the key appeared in the CLI's output")
                    }
                } catch {
                    cli.failures.append("cli \(sequence): \(error)")
                }
            }
            cli.done.signal()
        }
        for child in children { child.process.send("go") }

        var acknowledged = Set<String>(), errors: [String] = []
        for child in children {
            let lines = child.process.finish()
            #expect(child.process.exitStatus == 0, "\(child.name): \(child.process.standardError)")
            #expect(lines.last == "done \(child.name)", "\(child.name) did not finish: \(lines.suffix(3))")
            for line in lines {
                let fields = line.split(separator: " ").map(String.init)
                if fields.first == "commit", fields.count == 3 {
                    acknowledged.insert("\(fields[1]) \(fields[2])")
                } else if fields.first == "error" {
                    errors.append(line)
                }
            }
        }
        let apiElapsed = Date().timeIntervalSince(started)
        cli.done.wait()
        for sequence in cli.acknowledged { acknowledged.insert("cli \(sequence)") }
        errors += cli.failures
        let elapsed = Date().timeIntervalSince(started)

        let busy = errors.filter { $0.contains("busy") || $0.contains("locked") }
        #expect(busy.count == 0, "\(busy.count) busy errors surfaced within the busy timeout: \(busy.prefix(5))")
        #expect(errors.count == 0, "\(errors.count) failed commits: \(errors.prefix(5))")

        // Every acknowledged commit, and nothing else, is in the database; each API row carries its writer's pid.
        let reader = try Database(path: path, key: key, mode: .readOnly)
        var present = Set<String>()
        var wrongPIDs: [String] = []
        let pids = Dictionary(uniqueKeysWithValues: children.map { ($0.name, $0.pid) })
        // In commit order: SQLite gives each new row the next rowid.
        var order: [String] = []
        for row in try reader.fetchAll("SELECT writer, sequence, pid FROM commits ORDER BY rowid") {
            let writer = try row.get(0, as: String.self), sequence = try row.get(1, as: Int.self)
            let pid = try row.get(2, as: Int.self)
            present.insert("\(writer) \(sequence)")
            order.append(writer)
            if pid != (pids[writer] ?? 0) { wrongPIDs.append("\(writer) \(sequence) pid \(pid)") }
        }
        reader.close()
        // The writers overlapped: each one's span (its first to its last commit) runs into the spans of those that
        // began before it, so that no writer, and no group of writers, wrote alone; and the CLI's span meets the
        // API writers'. Serialized writers would each occupy a span of their own. (Not every pair: SQLite's busy
        // handler sleeps between retries, and under load a writer waited 431 others' commits for its first.)
        let spans = Self.spans(of: order)
        let writers = children.map(\.name), spanList = spans.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        let byStart = writers.compactMap { name in spans[name].map { (name, $0) } }
            .sorted { $0.1.lowerBound < $1.1.lowerBound }
        #expect(byStart.count == writers.count, "a writer committed nothing: \(spanList)")
        var reach = byStart.first?.1.upperBound ?? 0
        for (writer, span) in byStart.dropFirst() {
            #expect(span.lowerBound < reach,
                    "\(writer) began after every writer before it had finished: commit spans \(spanList)")
            reach = max(reach, span.upperBound)
        }
        let apiSpan = writers.compactMap { spans[$0] }.reduce(nil as ClosedRange<Int>?) { union, span in
            union.map { min($0.lowerBound, span.lowerBound)...max($0.upperBound, span.upperBound) } ?? span
        }
        #expect(Self.overlap(spans["cli"], apiSpan), "the CLI did not write while the API writers did: \(spanList)")
        let switches = zip(order, order.dropFirst()).filter { $0 != $1 }.count
        let missing = acknowledged.subtracting(present), unacknowledged = present.subtracting(acknowledged)
        #expect(missing.count == 0, "\(missing.count) acknowledged commits are missing: \(missing.sorted().prefix(5))")
        #expect(unacknowledged.count == 0,
                "\(unacknowledged.count) rows were never acknowledged: \(unacknowledged.sorted().prefix(5))")
        #expect(wrongPIDs.isEmpty, "\(wrongPIDs.prefix(5))")
        #expect(acknowledged.count == Self.apiWriters * Self.commitsPerWriter + Self.cliCommits - errors.count)

        let report = try Database.checkIntegrity(path: path, key: key)
        #expect(report.failures.isEmpty, "integrity_check / cipher_integrity_check: \(report.failures.prefix(5))")
        print("RELIABILITY several processes, one database: \(Self.apiWriters) API writers × \(Self.commitsPerWriter) "
              + "+ CLI × \(Self.cliCommits); \(acknowledged.count) acknowledged, \(missing.count) missing, "
              + "\(errors.count) errors (\(busy.count) busy); integrity ok: \(report.failures.isEmpty); "
              + "commits interleaved: \(switches) changes of writer in commit order (spans \(spanList)); "
              + "API writers done after \(String(format: "%.1f", apiElapsed)) s, all after "
              + "\(String(format: "%.1f", elapsed)) s")
    }

    /// Each writer's span in `order` (the writers of the rows in commit order): its first to its last row.
    static func spans(of order: [String]) -> [String: ClosedRange<Int>] {
        var spans: [String: ClosedRange<Int>] = [:]
        for (position, writer) in order.enumerated() {
            spans[writer] = spans[writer].map { $0.lowerBound...position } ?? position...position
        }
        return spans
    }

    /// Whether two spans share a stretch of the commit order (false when either is missing).
    static func overlap(_ first: ClosedRange<Int>?, _ second: ClosedRange<Int>?) -> Bool {
        guard let first, let second else { return false }
        return first.overlaps(second)
    }
}
