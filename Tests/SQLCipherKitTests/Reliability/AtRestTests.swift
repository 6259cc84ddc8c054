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
            for (name, contents) in try files(under: folder.path, openIn: child.processIdentifier) {
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

    /// A file the scan listed and could not read: the scan fails, naming it.
    struct UnreadableFile: Error, CustomStringConvertible {
        let description: String
    }

    /// The contents of every regular file under `folder` and of every regular file process `pid` has open.
    ///
    /// A listed file that cannot be examined or read throws ``UnreadableFile`` with its name: a file left unread
    /// is a file left unscanned. The one race allowed is that of a scan of this process itself, where other tests
    /// run beside it: a descriptor closed between listing and reading is skipped (it is gone, and with it what
    /// could be read through it). Anything else that vanishes fails too: a paused child's descriptor table does not
    /// change, and nothing else writes in either caller's folder while it is scanned, so a file gone there means
    /// the scan did not see what it was meant to see.
    static func files(under folder: String, openIn pid: Int32) throws -> [(String, Data)] {
        var found: [(String, Data)] = []
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: folder])
        }
        for case let name as String in enumerator {
            let path = folder + "/" + name
            switch readRegularFile(path) {
            case .contents(let contents): found.append((path, contents))
            case .notRegular: continue
            case .failed(let operation, let code):
                throw UnreadableFile(description: "cannot \(operation) \(path): \(String(cString: strerror(code)))")
            }
        }
        let scanningItself = pid == getpid()
        let descriptors = "/proc/\(pid)/fd"
        // The child is paused, so its descriptor table must be readable: a failure here fails the test.
        for name in try FileManager.default.contentsOfDirectory(atPath: descriptors) {
            let link = descriptors + "/" + name
            // Reading /proc/PID/fd/N opens the file itself, even after it was unlinked.
            let contents: Data
            switch readRegularFile(link) {
            case .contents(let data): contents = data
            case .notRegular: continue
            case .failed(_, ENOENT) where scanningItself: continue  // closed meanwhile (see above)
            case .failed(let operation, let code):
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) ?? "(unknown)"
                throw UnreadableFile(description: "cannot \(operation) the open file \(target) (\(link)): "
                                     + String(cString: strerror(code)))
            }
            let target: String
            do {
                target = try FileManager.default.destinationOfSymbolicLink(atPath: link)
            } catch let error as CocoaError where error.code == .fileNoSuchFile || error.code == .fileReadNoSuchFile {
                // Closed since it was read: only a scan of this process itself sees that. Its contents were
                // read and are kept.
                guard scanningItself else { throw error }
                target = "(closed meanwhile) " + link
            }
            found.append(("open file \(target)", contents))
        }
        return found
    }

    enum FileRead {
        case contents(Data)
        /// A directory, socket, pipe, device or anonymous inode: nothing stored to scan.
        case notRegular
        /// `operation` ("examine", "open", "read") failed with errno `code`.
        case failed(operation: String, code: Int32)
    }

    /// The whole of `path` if it is a regular file (following symbolic links, /proc's descriptor links included).
    static func readRegularFile(_ path: String) -> FileRead {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failed(operation: "examine", code: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .notRegular }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failed(operation: "open", code: errno) }
        defer { close(descriptor) }
        var contents = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return .contents(contents) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failed(operation: "read", code: errno)
            }
            contents.append(contentsOf: buffer[0..<count])
        }
    }

    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }
}
