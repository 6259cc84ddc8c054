import Testing
@testable import SQLCipherKit

@Suite("Transactions and savepoints")
struct DatabaseTransactionTests {
    struct Failure: Error {}

    private func database() throws -> Database {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        try database.execute("CREATE TABLE t(a)")
        return database
    }

    private func values(_ database: Database) throws -> [Int] {
        try database.fetchAll("SELECT a FROM t ORDER BY a").map { try $0.get(0) }
    }

    @Test("a transaction commits when its body returns", arguments: Database.TransactionKind.allCases)
    func commit(kind: Database.TransactionKind) throws {
        let database = try database()
        let result = try database.transaction(kind) {
            #expect(database.isInTransaction)
            try database.execute("INSERT INTO t VALUES (1)")
            return "done"
        }
        #expect(result == "done")
        #expect(!database.isInTransaction)
        #expect(try values(database) == [1])
    }

    @Test("a thrown error rolls the transaction back and is rethrown")
    func rollbackOnThrow() throws {
        let database = try database()
        #expect(throws: Failure.self) {
            try database.transaction {
                try database.execute("INSERT INTO t VALUES (1)")
                throw Failure()
            }
        }
        #expect(!database.isInTransaction)
        #expect(try values(database).isEmpty)
    }

    @Test("nested transactions are savepoints: an inner failure undoes only the inner work")
    func nestedSavepoints() throws {
        let database = try database()
        try database.transaction {
            try database.execute("INSERT INTO t VALUES (1)")
            #expect(throws: Failure.self) {
                try database.transaction {
                    try database.execute("INSERT INTO t VALUES (2)")
                    try database.savepoint {
                        try database.execute("INSERT INTO t VALUES (3)")
                    }
                    throw Failure()
                }
            }
            try database.savepoint {
                try database.execute("INSERT INTO t VALUES (4)")
                #expect(throws: Failure.self) {
                    try database.savepoint {
                        try database.execute("INSERT INTO t VALUES (5)")
                        throw Failure()
                    }
                }
            }
        }
        #expect(try values(database) == [1, 4])
    }

    @Test("an outer failure undoes released inner savepoints too")
    func outerFailureUndoesInner() throws {
        let database = try database()
        #expect(throws: Failure.self) {
            try database.transaction {
                try database.savepoint { try database.execute("INSERT INTO t VALUES (1)") }
                throw Failure()
            }
        }
        #expect(try values(database).isEmpty)
    }

    @Test("a savepoint outside a transaction commits on its own")
    func standaloneSavepoint() throws {
        let database = try database()
        try database.savepoint { try database.execute("INSERT INTO t VALUES (9)") }
        #expect(!database.isInTransaction)
        #expect(try values(database) == [9])
    }

    @Test("a failing COMMIT (deferred foreign key) rolls back and throws .constraint")
    func failingCommit() throws {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        try database.execute("""
            PRAGMA foreign_keys = ON;
            CREATE TABLE parent(id INTEGER PRIMARY KEY);
            CREATE TABLE child(parent REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
            """)
        let error = thrownError {
            try database.transaction { try database.execute("INSERT INTO child VALUES (42)") }
        }
        #expect(error?.kind == .constraint)
        #expect(!database.isInTransaction)
        #expect(try database.scalar(Int.self, "SELECT count(*) FROM child") == 0)
    }
}
