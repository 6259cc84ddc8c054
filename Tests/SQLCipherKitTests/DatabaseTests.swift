import Foundation
import Testing
@testable import SQLCipherKit

@Suite("Database")
struct DatabaseTests {
    @Test("a read-only open of a missing path fails and creates nothing")
    func readOnlyMissingFile() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("missing.db")
        #expect {
            try Database(path: path, key: .passphrase("k"), mode: .readOnly)
        } throws: { error in
            guard case .cannotOpen(let failedPath, _) = error as? SQLCipherError else { return false }
            return failedPath == path
        }
        #expect(try folder.fileNames().isEmpty)
        #expect(throws: SQLCipherError.self) { try Database(path: path, key: .passphrase("k"), mode: .readWrite) }
        #expect(try folder.fileNames().isEmpty)
    }

    @Test("a missing folder is cannotOpen")
    func missingFolder() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("no/such/folder/x.db")
        #expect {
            try Database(path: path, key: .passphrase("k"))
        } throws: { error in
            if case .cannotOpen = error as? SQLCipherError { return true }
            return false
        }
    }

    @Test("execute runs a script; textValue reads the first column of the first row")
    func executeAndRead() throws {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        try database.execute("""
            CREATE TABLE t(a INTEGER, b TEXT);
            INSERT INTO t VALUES (1, 'one'), (2, NULL);
            """)
        #expect(try database.textValue("SELECT b FROM t WHERE a = 1") == "one")
        #expect(try database.textValue("SELECT b FROM t WHERE a = 2") == nil)
        #expect(try database.textValue("SELECT b FROM t WHERE a = 3") == nil)
        #expect(try database.textValue("SELECT count(*) FROM t") == "2")
    }

    @Test("SQL errors are typed and carry SQLite's message")
    func sqlError() throws {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        #expect {
            try database.execute("SELECT * FROM nowhere")
        } throws: { error in
            guard case .sqlite(let code, _, let message) = error as? SQLCipherError else { return false }
            return code == 1 && message.contains("no such table: nowhere")
        }
        #expect(throws: SQLCipherError.self) { try database.textValue("   ") }
    }

    @Test("a closed connection throws misuse, and close is idempotent")
    func useAfterClose() throws {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        database.close()
        database.close()
        #expect(throws: SQLCipherError.misuse(message: "the connection to ':memory:' is closed")) {
            try database.execute("SELECT 1")
        }
    }

    @Test("FTS5 is compiled in")
    func fts5() throws {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        try database.execute("""
            CREATE VIRTUAL TABLE doc USING fts5(body);
            INSERT INTO doc VALUES ('encrypted full text search');
            """)
        #expect(try database.textValue("SELECT body FROM doc WHERE doc MATCH 'search'") == "encrypted full text search")
    }

    @Test("temporary storage is in memory (SQLITE_TEMP_STORE=2)")
    func tempStoreInMemory() throws {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        #expect(try database.textValue("PRAGMA temp_store") == "0")
        #expect(try database.textValue("SELECT sqlite_compileoption_used('TEMP_STORE=2')") == "1")
        #expect(try database.textValue("SELECT sqlite_compileoption_used('HAS_CODEC')") == "1")
    }
}
