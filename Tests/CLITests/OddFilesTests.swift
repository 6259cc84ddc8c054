import Foundation
import ProcessTestSupport
import SQLCipherKit
import Testing

/// `sqlcipherkit` on files that are not ordinary databases, and the SQL guard through `query` (issue 15).
@Suite("sqlcipherkit on odd files",
       .hangGuard(.minutes(10), hang: "a command that blocks on an odd file (a FIFO, a device) instead of refusing it"))
struct OddFilesTests {
    static let environment = ["K": "odd-files-\(UUID().uuidString)"]

    @Test("check on a 0-byte file says it is empty and exits 4; info does not call it plain")
    func emptyFile() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("empty.db")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let check = try CLI.run(["check", path, "--key-env", "K"], environment: Self.environment)
        #expect(check.status == 4, "\(check)")
        #expect(!check.stdout.contains("ok"), "\(check)")
        #expect(check.stderr.contains("is empty (0 bytes)"), "\(check)")
        let info = try CLI.run(["info", path], environment: Self.environment)
        #expect(info.status == 4, "\(info)")
        #expect(!info.stdout.contains("plain"), "\(info)")
        #expect(info.stderr.contains("is empty (0 bytes)"), "\(info)")
        // Nothing was written: still 0 bytes, no side files.
        #expect(try folder.names() == ["empty.db"])
        #expect(try contents(of: path).isEmpty)
    }

    @Test("A directory given as the database is named as such, not as a disk I/O error")
    func directory() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("dir.db")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        for command in [["check", path], ["query", path, "SELECT 1"], ["info", path]] {
            let result = try CLI.run(command + ["--key-env", "K"], environment: Self.environment)
            #expect(result.status != 0, "\(result)")
            #expect(result.stderr.contains("is a directory"), "\(command): \(result)")
            #expect(!result.stderr.contains("disk I/O error"), "\(command): \(result)")
        }
    }

    @Test("query follows the library: ATTACH with a key and cipher pragmas are refused (exit 1, no key echoed)")
    func queryRefusals() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("app.db")
        let create = try CLI.run(["query", path, "CREATE TABLE t(x); INSERT INTO t VALUES ('cli-marker')", "--create",
                                  "--key-env", "K"], environment: Self.environment)
        #expect(create.status == 0, "\(create)")
        let statements = ["ATTACH '\(folder.file("copy.db"))' AS c KEY ''; CREATE TABLE c.t AS SELECT * FROM t",
                          "ATTACH '\(folder.file("k.db"))' AS k KEY 'cli-secret-in-sql'",
                          "PRAGMA cipher_use_hmac = OFF", "SELECT sqlcipher_export('temp')"]
        for sql in statements {
            let result = try CLI.run(["query", path, sql, "--key-env", "K"], environment: Self.environment)
            #expect(result.status == 1, "\(sql): \(result)")
            #expect(result.stderr.contains("refused"), "\(sql): \(result)")
            #expect(!result.stderr.contains("cli-secret-in-sql") && !result.stderr.contains("corrupt"), "\(result)")
        }
        #expect(try folder.names() == ["app.db"])
        let check = try CLI.run(["check", path, "--key-env", "K"], environment: Self.environment)
        #expect(check.status == 0 && check.stdout.contains("ok"), "\(check)")
    }

    /// Each file in `folder` with its size: what "the folder as it was found" means below.
    static func listing(_ folder: TemporaryDirectory) throws -> [String: Int] {
        var sizes: [String: Int] = [:]
        for name in try folder.names() {
            let attributes = try FileManager.default.attributesOfItem(atPath: folder.file(name))
            sizes[name] = (attributes[.size] as? NSNumber)?.intValue ?? -1
        }
        return sizes
    }

    /// Creates an encrypted WAL-mode database of about 60 pages at `path` through the CLI; its last close
    /// removes the -wal and -shm, so the folder then holds the database alone.
    static func makeWALDatabase(_ path: String) throws {
        let sql = "PRAGMA journal_mode = WAL; CREATE TABLE t(x); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL "
            + "SELECT i + 1 FROM c WHERE i < 2000) INSERT INTO t SELECT randomblob(100) FROM c"
        let create = try CLI.run(["query", path, sql, "--create", "--key-env", "K"], environment: environment)
        try #require(create.status == 0, "\(create)")
    }

    @Test("check and info on a truncated WAL-mode file: exit 4, 'corrupt', and the folder as it was found",
          arguments: ["4096 bytes", "half"])
    func truncatedWALFile(truncation: String) throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("wal.db")
        try Self.makeWALDatabase(path)
        let size = try #require(try Self.listing(folder)["wal.db"])
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(truncation == "half" ? size / 2 : 4096))
        try handle.close()
        let before = try Self.listing(folder)
        try #require(before.keys.sorted() == ["wal.db"], "side files before the check: \(before)")
        let check = try CLI.run(["check", path, "--key-env", "K"], environment: Self.environment)
        #expect(check.status == 4, "\(check)")
        #expect(!check.stdout.contains("ok"), "\(check)")
        #expect(check.stderr.contains("is corrupt"), "\(check)")
        let afterCheck = try Self.listing(folder)
        #expect(afterCheck == before, "check changed the folder: \(before) → \(afterCheck)")
        let info = try CLI.run(["info", path, "--key-env", "K"], environment: Self.environment)
        #expect(info.status == 4, "\(info)")
        #expect(info.stderr.contains("is corrupt") && !info.stderr.contains("does not open"), "\(info)")
        let afterInfo = try Self.listing(folder)
        #expect(afterInfo == before, "info changed the folder: \(before) → \(afterInfo)")
    }

    @Test("check and info on a sound WAL-mode database with no side files: ok, file unchanged, no -wal or -shm")
    func soundWALFile() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("wal.db")
        try Self.makeWALDatabase(path)
        let before = try Self.listing(folder), bytes = try contents(of: path)
        try #require(before.keys.sorted() == ["wal.db"], "side files before the check: \(before)")
        let check = try CLI.run(["check", path, "--key-env", "K"], environment: Self.environment)
        #expect(check.status == 0 && check.stdout == "ok\n", "\(check)")
        let afterCheck = try Self.listing(folder)
        #expect(afterCheck == before, "check changed the folder: \(before) → \(afterCheck)")
        let info = try CLI.run(["info", path, "--key-env", "K"], environment: Self.environment)
        #expect(info.status == 0 && info.stdout.contains("format: 4"), "\(info)")
        let afterInfo = try Self.listing(folder)
        #expect(afterInfo == before, "info changed the folder: \(before) → \(afterInfo)")
        #expect(try contents(of: path) == bytes, "the database file was written")
    }

    @Test("check leaves another connection's -wal and -shm alone, and that connection's commits stay")
    func anotherConnectionsSideFiles() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("live.db")
        let key = try Key.passphrase(try #require(Self.environment["K"]))
        let writer = try Database(path: path, key: key)
        defer { writer.close() }
        _ = try writer.setJournalMode(.wal)
        try writer.execute("PRAGMA wal_autocheckpoint = 0; CREATE TABLE t(x)")
        for row in 0..<50 { try writer.execute("INSERT INTO t VALUES (?)", [row]) }
        let before = try Self.listing(folder)
        try #require(before.keys.sorted() == ["live.db", "live.db-shm", "live.db-wal"], "\(before)")
        try #require((before["live.db-wal"] ?? 0) > 0)
        for command in ["check", "info"] {
            let result = try CLI.run([command, path, "--key-env", "K"], environment: Self.environment)
            #expect(result.status == 0, "\(command): \(result)")
            let after = try Self.listing(folder)
            #expect(after == before, "\(command) changed another connection's side files: \(before) → \(after)")
        }
        try writer.execute("INSERT INTO t VALUES (50)")
        #expect(try writer.fetchAll("SELECT count(*) FROM t").first?.get(0, as: Int.self) == 51)
        writer.close()
        let reader = try Database(path: path, key: key, mode: .readOnly)
        #expect(try reader.fetchAll("SELECT count(*) FROM t").first?.get(0, as: Int.self) == 51)
        #expect(try reader.integrityCheck().isEmpty)
    }
}
