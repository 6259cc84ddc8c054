import ProcessTestSupport
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

    // MARK: The library's transactions stay the library's (issue 43, 5; the review of its fix)

    @Test("After SQLite itself ends the library's transaction (INSERT OR ROLLBACK, RAISE(ROLLBACK)), nothing commits on its own")
    func autoRollbackCommitsNothingAfterIt() throws {
        for ending in ["INSERT OR ROLLBACK INTO u VALUES (1)", "INSERT INTO w VALUES (1)"] {
            let database = try database()
            try database.execute("CREATE TABLE u(id INTEGER PRIMARY KEY); INSERT INTO u VALUES (1); CREATE TABLE w(x); "
                + "CREATE TRIGGER w_rollback BEFORE INSERT ON w BEGIN SELECT RAISE(ROLLBACK, 'rolled back'); END")
            var after: SQLCipherError?
            #expect(throws: Failure.self) {
                try database.transaction {
                    try database.execute("INSERT INTO t VALUES (1)")
                    _ = try? database.execute(ending)
                    #expect(!database.isInTransaction, "\(ending): SQLite did not end the transaction")
                    after = thrownError { try database.execute("INSERT INTO t VALUES (2)") }
                    throw Failure()
                }
            }
            #expect(after?.kind == .misuse && after?.message.contains("was rolled back") == true,
                    "\(ending): \(String(describing: after))")
            #expect(try values(database) == [], "\(ending): a statement after the rollback committed on its own")
            // And when the closure returns instead: its commit says the transaction had ended.
            let returned = thrownError {
                try database.transaction { _ = try? database.execute(ending) }
            }
            #expect(returned?.kind == .misuse && returned?.message.contains("already ended") == true,
                    "\(String(describing: returned))")
            // The connection is usable afterwards, outside any scope of the library's.
            try database.execute("INSERT INTO t VALUES (3)")
            #expect(try values(database) == [3])
        }
    }

    @Test("SQL text cannot end a savepoint-started transaction, nor release a savepoint around the library's")
    func savepointScopesHold() throws {
        let database = try database()
        // The outermost scope is the library's savepoint: COMMIT, END and ROLLBACK are refused.
        for sql in ["COMMIT", "END", "ROLLBACK", "BEGIN"] {
            let error = thrownError {
                try database.savepoint {
                    try database.execute("INSERT INTO t VALUES (1)")
                    try database.execute(sql)
                }
            }
            #expect(error?.kind == .misuse, "\(sql): \(String(describing: error))")
        }
        #expect(try values(database) == [])
        // Inside the caller's own BEGIN or SAVEPOINT, the library's transaction is a savepoint: the caller's
        // COMMIT, END, RELEASE or ROLLBACK TO would end it too, so they wait until it is over.
        for (outer, escape, close) in [("BEGIN", "COMMIT", "COMMIT"), ("BEGIN", "END", "COMMIT"),
                                       ("SAVEPOINT s", "RELEASE s", "RELEASE s"),
                                       ("SAVEPOINT s", "ROLLBACK TO s", "RELEASE s")] {
            try database.execute(outer)
            try database.execute("INSERT INTO t VALUES (10)")
            let error = thrownError {
                try database.transaction {
                    try database.execute("INSERT INTO t VALUES (20)")
                    try database.execute(escape)
                }
            }
            #expect(error?.kind == .misuse, "\(outer) … \(escape): \(String(describing: error))")
            // The inner work was rolled back; the caller's own transaction is intact and theirs to end.
            #expect(database.isInTransaction, "\(outer) … \(escape)")
            #expect(try values(database) == [10], "\(outer) … \(escape)")
            try database.execute(close)
            try database.execute("DELETE FROM t")
        }
        // Savepoints the caller begins inside the library's transaction are theirs.
        try database.transaction {
            try database.execute("SAVEPOINT mine; INSERT INTO t VALUES (1); ROLLBACK TO mine; INSERT INTO t VALUES (2); "
                + "RELEASE mine")
        }
        #expect(try values(database) == [2])
    }

    @Test("a statement prepared before the library's scope opened meets the rules at its step, not at its compile (found by an attacker), and a savepoint counts once it ran: RELEASE, ROLLBACK and COMMIT prepared outside, and RELEASE of a savepoint never run or already released, are refused inside; control: the same statements run outside", arguments: CipherConfiguration.all)
    func rulesHoldAtTheStep(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        let database = try configuration.open(folder.file("rules.db"))
        try database.execute("CREATE TABLE t(a)")
        let release = try database.prepare("RELEASE u")
        let rollback = try database.prepare("ROLLBACK")
        let commit = try database.cachedStatement("COMMIT")
        struct Planned: Error {}
        // `RELEASE u` would release the library's savepoint with the caller's `u`, and the insert it should roll
        // back would be committed.
        try database.transaction {
            try database.execute("SAVEPOINT u")
            let error = thrownError {
                try database.savepoint {
                    try release.execute()
                    try database.execute("INSERT INTO t VALUES (1)")
                    throw Planned()
                }
            }
            #expect(error?.kind == .misuse, "\(String(describing: error))")
        }
        #expect(try values(database) == [])
        // A savepoint counts as begun once it ran (found by a reviewer): `u` prepared and never run, `u` explained,
        // or `u` begun and released, inside the library's savepoint, does not let `RELEASE u` reach the caller's `u`
        // around it, and the library's savepoint with it.
        for begin in [{ _ = try database.prepare("SAVEPOINT u") },
                      { _ = try database.fetchAll("EXPLAIN SAVEPOINT u") },
                      { try database.execute("SAVEPOINT u"); try database.execute("RELEASE u") }] as [() throws -> Void] {
            try database.transaction {
                try database.execute("SAVEPOINT u")
                let error = thrownError {
                    try database.savepoint {
                        try begin()
                        try database.execute("RELEASE u")
                        try database.execute("INSERT INTO t VALUES (1)")
                        throw Planned()
                    }
                }
                #expect(error?.kind == .misuse, "\(String(describing: error))")
            }
            #expect(try values(database) == [])
        }
        for statement in [rollback, commit] {
            let error = thrownError {
                try database.transaction {
                    try database.execute("INSERT INTO t VALUES (2)")
                    try statement.execute()
                    throw Planned()
                }
            }
            #expect(error?.kind == .misuse, "\(statement.sql): \(String(describing: error))")
            #expect(try values(database) == [], "\(statement.sql)")
        }
        // Control: outside the library's scopes, the same statements run.
        try database.execute("BEGIN")
        try database.execute("SAVEPOINT u")
        try release.execute()
        try commit.execute()
        try database.execute("BEGIN")
        try rollback.execute()
        #expect(!database.isInTransaction)
        // By effect, on disk: the file opens with its key and holds none of the refused scopes' rows.
        database.close()
        #expect(try values(configuration.open(folder.file("rules.db"))) == [])
    }

    @Test("after SQLite ends the library's transaction (INSERT OR ROLLBACK, caught), a transaction begun again inside its scope (SAVEPOINT of SQL text, the library's cached BEGIN) is rolled back, not committed as if whole (found by an attacker); control: without the restart the same closure fails as before", arguments: CipherConfiguration.all)
    func transactionBegunAgain(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        let database = try configuration.open(folder.file("again.db"))
        try database.execute("CREATE TABLE t(a UNIQUE); INSERT INTO t VALUES (0)")
        try database.transaction(.immediate) {}  // the library's BEGIN IMMEDIATE, now in the cache
        struct Planned: Error {}
        // The library's scopes, the innermost one where the transaction ends: its own, a savepoint of its own, and a
        // savepoint inside its transaction (with work after it in the outer closure).
        let scopes: [(String, (() throws -> Void) throws -> Void)] = [
            ("transaction", { body in try database.transaction(.immediate) { try body() } }),
            ("savepoint", { body in try database.savepoint { try body() } }),
            ("nested", { body in
                try database.transaction(.immediate) {
                    _ = try? database.savepoint { try body() }
                    try database.execute("INSERT INTO t VALUES (3)")
                    // Inside a scope whose transaction ended, a new scope is refused before its body runs.
                    #expect(thrownError { try database.savepoint { Issue.record("the body ran") } }?.kind == .misuse)
                }
            }),
        ]
        for (scope, run) in scopes {
            for restart in ["SAVEPOINT y", "BEGIN IMMEDIATE TRANSACTION", nil] as [String?] {
                for throwing in [false, true] {
                    let label = "\(scope), \(restart ?? "no restart"), \(throwing ? "throwing" : "returning")"
                    let error = Result {
                        try run {
                            try database.execute("INSERT INTO t VALUES (1)")
                            _ = thrownError { try database.execute("INSERT OR ROLLBACK INTO t VALUES (0)") }
                            if let restart {
                                if restart.hasPrefix("BEGIN") {
                                    try database.cachedStatement(restart).execute()
                                } else {
                                    try database.execute(restart)
                                }
                                try database.execute("INSERT INTO t VALUES (2)")
                            }
                            if throwing { throw Planned() }
                        }
                    }.error
                    // The closure's own error when it threw (at the outermost scope), misuse when it returned.
                    if throwing && scope != "nested" {
                        #expect(error is Planned, "\(label): \(String(describing: error))")
                    } else {
                        #expect((error as? SQLCipherError)?.kind == .misuse, "\(label): \(String(describing: error))")
                    }
                    #expect(!database.isInTransaction, "\(label): a transaction was left open")
                    #expect(try values(database) == [0], "\(label)")
                }
            }
        }
        database.close()
        #expect(try values(configuration.open(folder.file("again.db"))) == [0])
    }

    @Test("a connection released inside a transaction while a statement of its outlives it: the engine's last rollback, when that statement goes, reads none of the freed connection's memory (found by a reviewer; the sanitized suites run this on the ASan+UBSan engine, where it failed with the hooks left installed)",
          arguments: CipherConfiguration.all)
    func statementOutlivesItsConnection(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        var statement: Statement?
        do {
            let database = try configuration.open(folder.file("z.db"))
            try database.execute("CREATE TABLE t(a)")
            try database.execute("BEGIN")
            statement = try database.cachedStatement("INSERT INTO t VALUES (1)")
            try statement?.execute()
        }
        // Released with its transaction open: SQLite keeps it as a zombie for the statement.
        #expect(thrownError { try statement?.execute() }?.kind == .misuse)
        statement = nil
        #expect(try values(configuration.open(folder.file("z.db"))) == [], "the open transaction was committed")
    }

    @Test("a connection closed inside the library's transaction after SQLite ended it, with a statement of its left mid-way: that statement, halted later, commits nothing (found by a reviewer: the commit hook was removed at close)",
          arguments: CipherConfiguration.all)
    func closedConnectionCommitsNothing(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        let database = try configuration.open(folder.file("halt.db"))
        try database.execute("CREATE TABLE t(a UNIQUE); INSERT INTO t VALUES (0)")
        var held: Statement?
        let error = thrownError {
            try database.transaction(.immediate) {
                _ = thrownError { try database.execute("INSERT OR ROLLBACK INTO t VALUES (0)") }
                held = try database.prepare("INSERT INTO t VALUES (2), (3) RETURNING a")
                #expect(try held?.step() == true)
                database.close()
            }
        }
        #expect(error?.kind == .misuse, "\(String(describing: error))")
        held = nil  // halted now: in autocommit mode it would commit
        #expect(try values(configuration.open(folder.file("halt.db"))) == [0])
    }

    @Test("The library's ATTACH works right after a VACUUM INTO (the limit VACUUM raised is not taken for it)")
    func attachAfterVacuumInto() throws {
        let folder = try TemporaryDirectory()
        let database = try Database(path: folder.file("main.db"), key: .rawKey(Array(repeating: 3, count: 32)))
        try database.execute("CREATE TABLE t(a); INSERT INTO t VALUES (1)")
        try database.execute("VACUUM INTO '\(folder.file("copy.db"))'")
        try database.attach(folder.file("other.db"), as: "other", key: .rawKey(Array(repeating: 4, count: 32)))
        try database.detach("other")
        try database.execute("VACUUM INTO '\(folder.file("copy2.db"))'")
        try database.attachUnencrypted(folder.file("plain.db"), as: "plain")
    }
}
