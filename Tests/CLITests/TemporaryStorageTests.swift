import Foundation
import ProcessTestSupport
import Testing

/// The case issue 23 measured through `sqlcipherkit query`: `PRAGMA temp_store = 10` (SQLite reads the first
/// character: FILE) and its siblings, then a temporary table and a sort that spills, on an encrypted database of
/// 20,000 rows. Every spelling SQLite reads as FILE is refused; the ones it reads otherwise run; and under
/// `strace` neither opens a single file under TMPDIR (the engine keeps temporary data in memory whatever the
/// pragma says: SQLITE_TEMP_STORE=3). The trace is shown able to see such a file first: a decoy written under
/// TMPDIR by `VACUUM INTO`, and each run's log holds the database's own open.
@Suite("CLI: temporary storage never reaches TMPDIR")
struct TemporaryStorageTests {
    static let fileSpellings = ["10", "'1x'", "1.5", "11", "19", "'1 '", "'10'", "1e0", "1", "'1'", "+1", "FILE",
                                "file", "\"file\""]
    static let otherSpellings = ["2", "MEMORY", "0", "DEFAULT", "'2x'", "-1", "3"]

    @Test("Refused when SQLite would read FILE, run otherwise; no file opened under TMPDIR either way")
    func noTemporaryFiles() throws {
        let strace = ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let tracer = try #require(strace, "strace is missing: ./build-sqlcipher.sh --test-tools installs it")
        let folder = try TemporaryDirectory()
        let temporary = folder.file("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let db = folder.file("big.db")
        let environment = ["K": "temporary storage test", "TMPDIR": temporary, "SQLITE_TMPDIR": temporary]
        let setup = "CREATE TABLE t(x); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) "
            + "INSERT INTO t SELECT 'row-' || i || '-' || hex(randomblob(40)) FROM n"
        let created = try CLI.run(["query", db, setup, "--create", "--key-env", "K"], environment: environment)
        try #require(created.status == 0, "\(created)")

        let log = folder.file("strace.log")
        // The query under strace; the lines of its log that open a file under TMPDIR or named like SQLite's
        // temporary files, and whether the log shows the database's own open.
        func traced(_ sql: String) throws -> (result: ProcessResult, opened: [Substring], openedDatabase: Bool) {
            let result = try runProcess(tracer, ["-f", "-qq", "-e", "trace=open,openat,creat", "-o", log, CLI.executable,
                                                 "query", db, sql, "--key-env", "K", "--format", "csv"],
                                        environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
            let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            return (result, lines.filter { $0.contains(temporary) || $0.contains("etilqs_") },
                    lines.contains { $0.contains("\"\(db)\"") })
        }

        // The control: the check sees a file opened under TMPDIR (a copy written there by VACUUM INTO, a decoy),
        // since with SQLITE_TEMP_STORE=3 no spill can ever show it one.
        let decoy = temporary + "/decoy.db"
        let control = try traced("VACUUM INTO '\(decoy)'")
        #expect(control.result.status == 0, "\(control.result)")
        #expect(control.opened.contains { $0.contains(decoy) }, "the decoy's open is not in the trace: \(control.opened)")
        #expect(control.openedDatabase, "the database's own open is not in the trace")
        try FileManager.default.removeItem(atPath: decoy)

        for (value, fileRequested) in Self.fileSpellings.map({ ($0, true) }) + Self.otherSpellings.map({ ($0, false) }) {
            let sql = "PRAGMA temp_store = \(value); PRAGMA cache_size = 10; CREATE TEMP TABLE tt AS SELECT * FROM t; "
                + "SELECT count(*) FROM (SELECT x FROM tt ORDER BY x DESC)"
            let (result, opened, openedDatabase) = try traced(sql)
            if fileRequested {
                #expect(result.status != 0 && result.stderr.contains("temp_store"), "temp_store = \(value): \(result)")
            } else {
                #expect(result.status == 0 && result.stdout.contains("20000"), "temp_store = \(value): \(result)")
            }
            #expect(opened.isEmpty, "temp_store = \(value) opened: \(opened)")
            #expect(openedDatabase, "temp_store = \(value): the database's own open is not in the trace")
            #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).isEmpty)
        }
    }
}
