import Foundation
import ProcessTestSupport
import Testing
@testable import SQLCipherKit

@Suite("Foreign keys")
struct ForeignKeyTests {
    private let schema = """
        CREATE TABLE parent(id INTEGER PRIMARY KEY);
        CREATE TABLE child(id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parent(id));
        """

    @Test("Configuration.foreignKeys enforces REFERENCES; the default, like SQLite's, does not")
    func connection() throws {
        let folder = try TemporaryDirectory()
        let key = try Key.rawKey([UInt8](repeating: 8, count: 32))
        let enforcing = try Database(path: folder.file("fk.db"), key: key, configuration: .init(foreignKeys: true))
        try enforcing.execute(schema)
        #expect(try enforcing.scalar(Int.self, "PRAGMA foreign_keys") == 1)
        #expect(thrownError { try enforcing.execute("INSERT INTO child VALUES (1, 42)") }?.kind == .constraint)
        try enforcing.execute("INSERT INTO parent VALUES (42); INSERT INTO child VALUES (1, 42)")
        #expect(thrownError { try enforcing.execute("DELETE FROM parent") }?.kind == .constraint)
        enforcing.close()

        let lax = try Database(path: folder.file("fk.db"), key: key)
        #expect(try lax.scalar(Int.self, "PRAGMA foreign_keys") == 0)
        try lax.execute("INSERT INTO child VALUES (2, 7)")
    }

    @Test("a pool with foreignKeys enforces them on its writer, and its readers report them on")
    func pool() async throws {
        let folder = try TemporaryDirectory()
        let pool = try DatabasePool(path: folder.file("fk-pool.db"), key: .rawKey([UInt8](repeating: 9, count: 32)),
                                    configuration: .init(readerCount: 2, database: .init(foreignKeys: true)))
        let schema = self.schema
        try await pool.write { db in try db.execute(schema) }
        let refused = await outcome { try await pool.write { db in try db.execute("INSERT INTO child VALUES (1, 42)") } }
        #expect((refused.error as? SQLCipherError)?.kind == .constraint)
        #expect(try await pool.read { try $0.scalar(Int.self, "PRAGMA foreign_keys") } == 1)
        pool.close()
    }
}
