import Foundation
import ProcessTestSupport
import Testing

/// `sqlcipherkit` on files that are not ordinary databases, and the SQL guard through `query` (issue 15).
@Suite("sqlcipherkit on odd files", .timeLimit(.minutes(2)))
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
        #expect(try contents(path).isEmpty)
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
}
