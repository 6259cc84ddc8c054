import Foundation
import ProcessTestSupport
@testable import SQLCipherKit
import ReliabilitySupport
import Testing
import Glibc

/// SQLRoutesTests' async test, in a suite of its own so that it runs in the async suites' `swift test` (issue 49:
/// beside the suites that wait synchronously on child processes, an async test waits for a cooperative thread).
@Suite("SQL routes: issue 33's reproductions, by the pool's async writer too")
struct SQLRoutesAsyncTests {
    /// The three reproductions of issue 33, by `Database`, `DatabasePool` and its async writer.
    @Test("Issue 33's reproductions: no plaintext file, no key from SQL text, the database opens")
    func issueReproductions() async throws {
        for kind in ["Database", "DatabasePool", "DatabasePool async"] {
            let folder = try TemporaryDirectory()
            let key = try Key.rawKey(hex: Array(randomKeyHex().utf8))
            let path = folder.file("main.db")
            do {
                let db = try Database(path: path, key: key)
                try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('secret-row-marker')")
            }
            let scripts = [
                "CREATE TABLE zz(x); CREATE TEMP TABLE zz(x); PRAGMA writable_schema=ON; "
                    + "UPDATE temp.sqlite_master SET sql='ATTACH ''\(folder.path)/plain.db'' AS p KEY ''''' WHERE name='zz'; "
                    + "CREATE TABLE d(a, b DEFAULT (sqlcipher_export('main','temp'))); INSERT INTO d(a) VALUES(1); "
                    + "CREATE TABLE p.leak AS SELECT * FROM t",
                "CREATE TEMP TABLE yy(x); PRAGMA writable_schema=ON; "
                    + "UPDATE temp.sqlite_master SET sql='ATTACH ''\(folder.path)/keyed.db'' AS k KEY ''some text''' "
                    + "WHERE name='yy'; CREATE TABLE e(a, b DEFAULT (sqlcipher_export('main','temp'))); "
                    + "INSERT INTO e(a) VALUES(1)",
                "PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql='CREATE TABLE t(' WHERE name='t'",
            ]
            // One connection (or pool) for all of them, as an attacker would have it: the temporary table and
            // writable_schema must live on into the next statement. Each statement on its own, so that a refusal of
            // one does not hide the effect of the next.
            let statements = scripts.flatMap { $0.split(separator: ";").map(String.init) }
            switch kind {
            case "Database":
                let db = try Database(path: path, key: key)
                for statement in statements { _ = try? db.execute(statement) }
                db.close()
            case "DatabasePool":
                try SQLRoutesTests.poolWrite(statements, path: path, key: key)
            default:
                let pool = try DatabasePool(path: path, key: key)
                for statement in statements { _ = try? await pool.write { try $0.execute(statement) } }
                pool.close()
            }
            let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix("main.db") }
            #expect(files.isEmpty, "\(kind): \(files)")
            let reopened = try Database(path: path, key: key, mode: .readOnly)
            #expect(try reopened.scalar(String.self, "SELECT x FROM t") == "secret-row-marker", "\(kind)")
        }
    }
}
