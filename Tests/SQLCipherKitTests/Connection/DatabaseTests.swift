import Foundation
import Testing
@testable import SQLCipherKit

@Suite("Database")
struct DatabaseTests {
    @Test("a read-only open of a missing path fails and creates nothing")
    func readOnlyMissingFile() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("missing.db")
        let error = thrownError { try Database(path: path, key: .passphrase("k"), mode: .readOnly) }
        #expect(error?.kind == .cannotOpen)
        #expect(error?.path == path)
        #expect(try folder.fileNames().isEmpty)
        #expect(throws: SQLCipherError.self) { try Database(path: path, key: .passphrase("k"), mode: .readWrite) }
        #expect(try folder.fileNames().isEmpty)
    }

    @Test("a missing folder is cannotOpen")
    func missingFolder() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("no/such/folder/x.db")
        #expect(thrownError { try Database(path: path, key: .passphrase("k")) }?.kind == .cannotOpen)
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
        let error = thrownError { try database.execute("SELECT * FROM nowhere") }
        #expect(error?.kind == .sqlite)
        #expect(error?.resultCode == 1)
        #expect(error?.message.contains("no such table: nowhere") == true)
        #expect(error?.sql == "SELECT * FROM nowhere")
        #expect(throws: SQLCipherError.self) { try database.textValue("   ") }
    }

    @Test("a closed connection throws misuse, and close is idempotent")
    func useAfterClose() throws {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        database.close()
        database.close()
        let error = thrownError { try database.execute("SELECT 1") }
        #expect(error?.kind == .misuse)
        #expect(error?.message == "the connection to ':memory:' is closed")
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
