#if canImport(Glibc)
import Glibc
#endif
import ReliabilitySupport
import SQLCipherKit

/// `at-rest DATABASE MARKER [--plaintext] [--temp-store-file] [--decoy-temp-file]`: writes rows holding MARKER and walks through
/// the ways SQLite puts bytes on disk — write-ahead log, checkpoint, rollback journal, a large sort, an index
/// build, a temporary table, VACUUM, an export — pausing after each (`paused STEP`, then one line on standard
/// input) so that the parent can scan every file, including open temporary files, while they exist.
///
/// `--plaintext` (no key) and `--temp-store-file` (`PRAGMA temp_store = FILE`) switch a protection off: the
/// tests' negative controls, which prove the scan finds the marker when it is there. The engine keeps
/// temporary data in memory whatever temp_store says (SQLITE_TEMP_STORE=3), so `--decoy-temp-file` stands in
/// for the temporary file SQLite would write: a file under TMPDIR named `decoy-…`, unlinked at once and held
/// open through every step with the marker in it, as SQLite holds its `etilqs_…` files.
enum AtRest {
    static func run(_ arguments: [String]) {
        guard arguments.count >= 2 else {
            fail(usage: "at-rest DATABASE MARKER [--plaintext] [--temp-store-file] [--decoy-temp-file]")
        }
        let path = arguments[0], marker = arguments[1]
        let plaintext = arguments.contains("--plaintext")
        let key = plaintext ? nil : environmentKey("RELIABILITY_KEY_HEX")
        var generator = SplitMix64(seed: environmentSeed())
        func filler(_ count: Int) -> String {
            String((0..<count).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement(using: &generator)! })
        }

        let decoy = arguments.contains("--decoy-temp-file") ? openDecoy(marker: marker) : nil
        defer { decoy.map { _ = close($0) } }
        let db = orFail("open") {
            if let key { return try Database(path: path, key: key) }
            return try Database(unencryptedPath: path)
        }
        orFail("setup") {
            if arguments.contains("--temp-store-file") {
                try db.execute("PRAGMA temp_store = FILE")
            }
            // A small page cache makes SQLite spill sorts, journals and temporary tables to files early.
            try db.execute("PRAGMA cache_size = 16")
        }

        step("wal") {
            _ = try db.setJournalMode(.wal)
            try db.execute("PRAGMA wal_autocheckpoint = 0")
            try db.execute("CREATE TABLE secret(id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
            try db.transaction {
                for index in 0..<200 {
                    try db.execute("INSERT INTO secret(note) VALUES (?)", ["\(marker) \(index) \(filler(40))"])
                }
            }
        }
        step("checkpoint") { try db.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        // Paused inside the transaction: the rollback journal holds the marker rows' pages as they were.
        step("journal") {
            _ = try db.setJournalMode(.delete)
            try db.execute("BEGIN")
            try db.execute("UPDATE secret SET note = note || '!'")
        }
        step("commit") { try db.execute("COMMIT") }
        step("fill") {
            try db.transaction {
                for index in 0..<20_000 {
                    try db.execute("INSERT INTO secret(note) VALUES (?)", ["\(filler(60)) \(marker) \(index)"])
                }
            }
        }
        // The first step of an ORDER BY on an unindexed expression runs the whole sort; its temporary files,
        // if any, stay open while the statement is.
        var sort: Statement?
        step("sort") {
            sort = try db.prepare("SELECT note FROM secret ORDER BY substr(note, 7) DESC")
            _ = try sort?.step()
        }
        sort = nil
        step("index") { try db.execute("CREATE INDEX secret_note ON secret(note)") }
        step("temporary-table") {
            try db.execute("CREATE TEMP TABLE scratch AS SELECT * FROM secret ORDER BY note")
        }
        step("vacuum") {
            try db.execute("DROP TABLE temp.scratch")
            try db.execute("VACUUM")
        }
        step("export") { try db.export(to: path + ".export", key: key) }
        db.close()
        step("closed") {}
        report("done")
    }

    /// A deleted file under TMPDIR holding `marker`, open until the run ends (the descriptor).
    private static func openDecoy(marker: String) -> Int32 {
        let folder = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((folder + "/decoy-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { $0.baseAddress.map { mkstemp($0) } ?? -1 }
        guard descriptor >= 0 else { fail("decoy: mkstemp failed (errno \(errno))") }
        _ = template.withUnsafeBufferPointer { $0.baseAddress.map { unlink($0) } }
        guard StandardError.write(marker + "\n", toDescriptor: descriptor) else { fail("decoy: write failed") }
        return descriptor
    }

    /// Runs `body`, reports `paused NAME` and waits for the parent.
    private static func step(_ name: String, _ body: () throws -> Void) {
        orFail(name, body)
        report("paused \(name)")
        awaitParent()
    }
}
