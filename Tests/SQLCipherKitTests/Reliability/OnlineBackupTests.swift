import Foundation
import ProcessTestSupport
import SQLCipherKit
import Synchronization
import Testing

/// Online backup of a live, encrypted database: two `ReliabilityHelper counter-writer` processes advance a
/// monotonic counter (a `ledger` row and `head.n`, one transaction) while `DatabasePool.backup` and then
/// `sqlcipherkit backup` copy the database. Each copy must open with its key, pass integrity_check and
/// cipher_integrity_check, and hold a committed prefix of the counter (rows 1...n and head n, no torn
/// transaction) from between the backup's start and end, while the writers went on past it; no file may hold
/// the rows' marker in plaintext.
@Suite("Reliability: online backup while writers commit")
struct OnlineBackupTests {
    static let writers = 2
    /// Rows of filler, so that the copy takes several steps of ``Database`` backup (256 pages each).
    static let fillerRows = 3_000

    /// What a copy's counter must be: at least the committed count before its backup began, at most the count
    /// after it returned.
    struct Window {
        var before: Int
        var after: Int
    }

    @Test("a pool backup and a CLI backup taken while 2 processes commit: consistent encrypted prefixes",
          .hangGuard(.minutes(5), hang: "a backup that restarts forever while the writers commit"))
    func backupWhileWriting() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("live.db"), keyHex = randomKeyHex(), copyKeyHex = randomKeyHex()
        let key = try Key.rawKey(hex: Array(keyHex.utf8)), copyKey = try Key.rawKey(hex: Array(copyKeyHex.utf8))
        let marker = "online-backup-marker-\(UUID().uuidString)"
        let setup = try Database(path: path, key: key)
        _ = try setup.setJournalMode(.wal)
        try setup.execute("""
            CREATE TABLE head(n INTEGER NOT NULL); INSERT INTO head VALUES (0);
            CREATE TABLE ledger(n INTEGER PRIMARY KEY, writer TEXT NOT NULL, payload TEXT NOT NULL);
            CREATE TABLE filler(id INTEGER PRIMARY KEY, body TEXT NOT NULL)
            """)
        try setup.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) "
            + "INSERT INTO filler(body) SELECT ? || hex(randomblob(1000)) FROM c", [Self.fillerRows, marker])
        setup.close()

        var children: [HelperProcess] = []
        defer { for child in children { child.send("stop"); child.finish() } }
        for index in 0..<Self.writers {
            let child = try HelperProcess(["counter-writer", path, "w\(index)", "10000", "60"],
                                          environment: ["RELIABILITY_KEY_HEX": keyHex, "RELIABILITY_MARKER": marker])
            children.append(child)
            _ = try #require(child.readLine(startingWith: "ready"), "\(child.finish()) \(child.standardError)")
        }
        for child in children { child.send("go") }

        let pool = try DatabasePool(path: path, key: key, configuration: .init(readerCount: 2))
        defer { pool.close() }
        func committed() throws -> Int { try pool.read { try $0.scalar(Int.self, "SELECT n FROM head") ?? 0 } }
        // Let the writers get going before the first backup.
        while try committed() < 20 { usleep(5_000) }

        // 1. The library: DatabasePool.backup, to a new key.
        let poolCopy = folder.file("pool-copy.db")
        let fractions = Mutex<[Double]>([])
        var window = Window(before: try committed(), after: 0)
        try pool.backup(to: poolCopy, key: copyKey) { fraction in fractions.withLock { $0.append(fraction) } }
        window.after = try committed()
        let reported = fractions.withLock { $0 }
        #expect(reported.count >= 3, "a backup in several steps reports progress after each: \(reported)")
        #expect(zip(reported, reported.dropFirst()).allSatisfy { $0 <= $1 },
                "progress went back: the copy restarted (no snapshot): \(reported)")
        #expect(reported.last == 1)
        let poolWindow = window

        // 2. The command line: sqlcipherkit backup, same key.
        let cliCopy = folder.file("cli-copy.db")
        window = Window(before: try committed(), after: 0)
        let result = try CLI.run(["backup", path, cliCopy, "--key-env", "LIVE_KEY", "--raw"],
                                 environment: ["LIVE_KEY": keyHex], timeout: 120)
        window.after = try committed()
        #expect(result.status == 0, "\(result)")
        #expect(!result.output.localizedCaseInsensitiveContains(keyHex), "the key was printed")
        let cliWindow = window

        for child in children { child.send("stop") }
        var commits = 0
        for (index, child) in children.enumerated() {
            let lines = child.finish()
            #expect(child.exitStatus == 0, "w\(index): \(child.standardError)")
            let errors = lines.filter { $0.hasPrefix("error") }
            #expect(errors.isEmpty, "w\(index): \(errors.prefix(5))")
            commits += lines.last.flatMap { $0.split(separator: " ").last.flatMap { Int($0) } } ?? 0
        }
        children = []
        let final = try committed()
        #expect(final == commits, "every acknowledged commit is in the live database")

        var seen: [Int] = []
        for (name, copy, copyKey, window) in [("pool", poolCopy, copyKey, poolWindow), ("cli", cliCopy, key, cliWindow)] {
            let n = try checkCopy(copy, key: copyKey, name: name)
            seen.append(n)
            #expect(n >= window.before && n <= window.after,
                    "\(name): the copy's counter \(n) is outside its backup's window \(window)")
            #expect(n < final, """
                \(name): the writers committed nothing after the copy's snapshot (\(n) of \(final)): the backup \
                completed only once they had stopped
                """)
        }
        // The pool's copy has the new key: the live key does not open it.
        #expect(throws: SQLCipherError.self) { try Database(path: poolCopy, key: key, mode: .readOnly) }

        pool.close()
        let names = try folder.names()
        #expect(!names.contains { $0.contains(".sqlcipherkit-") }, "a temporary file was left: \(names)")
        for name in names {
            let bytes = try contents(of: folder.file(name))
            #expect(!data(bytes, contains: marker), "\(name) holds the marker in plaintext")
            #expect(!data(bytes, contains: "SQLite format 3"), "\(name) has a plaintext header")
        }
        print("RELIABILITY online backup: \(Self.writers) writers, \(final) commits; pool copy at \(seen[0]) "
              + "(window \(poolWindow.before)...\(poolWindow.after), \(reported.count) progress reports), CLI copy at "
              + "\(seen[1]) (window \(cliWindow.before)...\(cliWindow.after)); files \(names)")
    }

    /// Opens a copy with its key and checks it: both integrity checks clean, the filler whole, the ledger rows
    /// 1...n exactly, with `head.n` = n. Returns n.
    func checkCopy(_ path: String, key: Key, name: String) throws -> Int {
        let report = try Database.checkIntegrity(path: path, key: key)
        #expect(report.failures.isEmpty, "\(name): integrity_check / cipher_integrity_check: \(report.failures.prefix(5))")
        let db = try Database(path: path, key: key, mode: .readOnly)
        defer { db.close() }
        let head = try #require(try db.scalar(Int.self, "SELECT n FROM head"))
        let rows = try #require(try db.scalar(Int.self, "SELECT count(*) FROM ledger"))
        let highest = try db.scalar(Int.self, "SELECT max(n) FROM ledger") ?? 0
        #expect(rows == head && highest == head, "\(name): a torn copy: head \(head), \(rows) ledger rows up to \(highest)")
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM filler") == Self.fillerRows)
        return head
    }
}
