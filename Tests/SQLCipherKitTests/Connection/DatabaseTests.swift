import Foundation
import ProcessTestSupport
import Testing
@testable import SQLCipherKit

@Suite("Database")
struct DatabaseTests {
    @Test("a read-only open of a missing path fails and creates nothing")
    func readOnlyMissingFile() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("missing.db")
        let error = thrownError { try Database(path: path, key: .passphrase("k"), mode: .readOnly) }
        #expect(error?.kind == .cannotOpen)
        #expect(error?.path == path)
        #expect(try folder.names().isEmpty)
        #expect(throws: SQLCipherError.self) { try Database(path: path, key: .passphrase("k"), mode: .readWrite) }
        #expect(try folder.names().isEmpty)
    }

    @Test("a missing folder is cannotOpen")
    func missingFolder() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("no/such/folder/x.db")
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

    @Test("temporary storage is always in memory (SQLITE_TEMP_STORE=3)")
    func tempStoreInMemory() throws {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        #expect(try database.textValue("PRAGMA temp_store") == "0")
        #expect(try database.textValue("SELECT sqlite_compileoption_used('TEMP_STORE=3')") == "1")
        #expect(try database.textValue("SELECT sqlite_compileoption_used('HAS_CODEC')") == "1")
    }

    @Test("user_version reads and writes")
    func userVersion() throws {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        try database.execute("CREATE TABLE t(a, b, c)")
        #expect(try database.userVersion() == 0)
        try database.setUserVersion(7)
        #expect(try database.userVersion() == 7)
    }

    @Test("WAL can be switched on for a file database")
    func walSwitch() throws {
        let folder = try TemporaryDirectory()
        let database = try Database(path: folder.file("wal.db"), key: .passphrase("k"))
        #expect(try database.journalMode() == .delete)
        #expect(try database.setJournalMode(.wal) == .wal)
        try database.execute("CREATE TABLE t(a); INSERT INTO t VALUES ('wal-marker')")
        #expect(FileManager.default.fileExists(atPath: folder.file("wal.db-wal")))
        #expect(try !data(contents(of: folder.file("wal.db-wal")), contains: "wal-marker"), "the WAL is encrypted too")
        #expect(try database.journalMode() == .wal)
        let memory = try Database(path: ":memory:", key: .passphrase("k"))
        #expect(thrownError { try memory.setJournalMode(.wal) } != nil, "in-memory databases have no WAL")
    }

    @Test("a busy database fails with .busy when the timeout is zero")
    func busy() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("busy.db")
        let key = try Key.passphrase("k")
        let first = try Database(path: path, key: key)
        try first.execute("CREATE TABLE t(a)")
        let second = try Database(path: path, key: key, configuration: .init(busyTimeout: .zero))
        try first.execute("BEGIN EXCLUSIVE; INSERT INTO t VALUES (1)")
        #expect(thrownError { try second.execute("INSERT INTO t VALUES (2)") }?.kind == .busy)
        try first.execute("COMMIT")
        try second.execute("INSERT INTO t VALUES (2)")
        #expect(try second.scalar(Int.self, "SELECT count(*) FROM t") == 2)
    }

    @Test("interrupt stops a running statement from another thread")
    func interrupt() throws {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        let handle = database.interruptHandle
        // A plain thread, not a task: this test blocks its own thread in the query, and a task might wait for
        // that very thread to be free.
        Thread.detachNewThread {
            usleep(200_000)
            handle.interrupt()
        }
        // An endless query; only the interrupt ends it.
        let error = thrownError {
            try database.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c")
        }
        #expect(error?.kind == .interrupted)
        #expect(try database.scalar(Int.self, "SELECT 1") == 1, "the connection stays usable")
        database.close()
        handle.interrupt() // after close: nothing happens
    }
}
