@testable import SQLCipherSQLKit
import Testing

@Suite("SQLCipherSQLDatabase: which statements go to the writer without asking a reader")
struct StatementRoutingTests {
    @Test("a statement whose first word is INSERT, UPDATE, DELETE, REPLACE, CREATE, DROP or ALTER; no other")
    func writeKeywords() {
        for sql in ["INSERT INTO t VALUES (1)", "  update t SET a = 1", "\n\tDelete FROM t WHERE a = 1",
                    "REPLACE INTO t VALUES (1)", "CREATE TABLE t (a)", "drop table t", "ALTER TABLE t ADD b"] {
            #expect(SQLCipherSQLDatabase.startsAsWrite(sql), "\(sql)")
        }
        for sql in ["SELECT 1", "WITH x AS (SELECT 1) SELECT * FROM x", "PRAGMA user_version",
                    "-- a comment\nINSERT INTO t VALUES (1)", "INSERTED", "UPDATES", "", "BEGIN",
                    "EXPLAIN INSERT INTO t VALUES (1)", "VACUUM"] {
            #expect(!SQLCipherSQLDatabase.startsAsWrite(sql), "\(sql)")
        }
    }
}
