import Foundation
import ProcessTestSupport
import SQLCipherKit
import Testing

/// No plaintext at rest: a child writes rows holding a unique marker and walks through write-ahead log,
/// checkpoint, rollback journal, a large sort, an index build, a temporary table, VACUUM and an export. At
/// each pause the test reads every file the child could have written — the database and its side files, the
/// export, everything under TMPDIR/SQLITE_TMPDIR, and every regular file the child holds open, deleted or not
/// (SQLite unlinks its temporary files as soon as it opens them) — looking for the marker.
@Suite("Reliability: no plaintext at rest")
struct AtRestTests {
    static let steps = ["wal", "checkpoint", "journal", "commit", "fill", "sort", "index", "temporary-table",
                        "vacuum", "export", "closed"]

    @Test("The marker never reaches the disk, its temporary files or the export")
    func markerNeverAtRest() throws {
        let run = try Self.run()
        #expect(run.steps == Self.steps)
        #expect(run.findings.isEmpty, "\(run.findings)")
        print("RELIABILITY at rest: \(run.steps.count) steps, \(run.scans) files scanned, "
              + "\(run.findings.count) with the marker, \(String(format: "%.1f", run.seconds)) s")
    }

    @Test("Control: the scan finds the marker in an unencrypted database and its log")
    func scanFindsPlaintext() throws {
        let run = try Self.run(flags: ["--plaintext"])
        #expect(run.findings.contains { $0.hasPrefix("wal: ") && $0.hasSuffix("-wal") }, "\(run.findings)")
        #expect(run.findings.contains { $0.hasPrefix("checkpoint: ") && $0.hasSuffix("at-rest.db") }, "\(run.findings)")
    }

    @Test("The engine opens no temporary file even when asked for one (SQLITE_TEMP_STORE=3); the scan sees one")
    func noTemporaryFilesEvenOnRequest() throws {
        // Only an unencrypted connection may ask for temporary files (SQLGuardTests). With SQLITE_TEMP_STORE=2
        // the sort and the temporary table then went to deleted files under the child's TMPDIR, marker and
        // all; with 3 nothing may. The control: a decoy, a deleted file under the same TMPDIR that the child
        // holds open with the marker in it, must be found at every step, so the scan would see SQLite's.
        let run = try Self.run(flags: ["--plaintext", "--temp-store-file", "--decoy-temp-file"])
        #expect(run.steps == Self.steps)
        for step in Self.steps {
            let deleted = run.findings.filter { Self.isDeletedTemporaryFile($0, step: step, temporary: run.temporary) }
            #expect(deleted.contains { $0.contains("/decoy-") }, "the decoy was not found at step \(step): \(run.findings)")
            #expect(deleted.allSatisfy { $0.contains("/decoy-") },
                    "SQLite wrote the marker to a temporary file at step \(step): \(deleted)")
        }
    }

    /// Whether `finding` is step `step`'s marker in an open but deleted file in folder `temporary`.
    static func isDeletedTemporaryFile(_ finding: String, step: String, temporary: String) -> Bool {
        finding.hasPrefix("\(step): open file \(temporary)/") && finding.hasSuffix(" (deleted)")
    }

    // MARK: Running the child

    struct Run {
        var steps: [String] = []
        var findings: [String] = []
        var scans = 0
        var seconds = 0.0
        /// The child's TMPDIR and SQLITE_TMPDIR.
        var temporary = ""
    }

    static func run(flags: [String] = []) throws -> Run {
        let folder = try TemporaryDirectory()
        let temporary = folder.file("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let marker = "SQLCipherKit-at-rest-\(UUID().uuidString)"
        let started = Date()
        let child = try HelperProcess(["at-rest", folder.file("at-rest.db"), marker] + flags, environment: [
            "RELIABILITY_KEY_HEX": randomKeyHex(), "TMPDIR": temporary, "SQLITE_TMPDIR": temporary,
        ])
        // As /proc/PID/fd reports it: without symbolic links.
        var run = Run(temporary: URL(fileURLWithPath: temporary).resolvingSymlinksInPath().path)
        while let line = child.readLine(), line != "done" {
            guard line.hasPrefix("paused ") else { continue }
            let step = String(line.dropFirst("paused ".count))
            run.steps.append(step)
            for (name, contents) in try FileScan.files(under: folder.path, openIn: child.processIdentifier) {
                run.scans += 1
                if data(contents, contains: marker) { run.findings.append("\(step): \(name)") }
            }
            child.send("go")
        }
        child.finish()
        try #require(child.exitStatus == 0, "\(child.standardError)")
        run.seconds = Date().timeIntervalSince(started)
        return run
    }
}
