import Foundation
import ProcessTestSupport
import Testing
@testable import SQLCipherKit

@Suite("SQLCipherError")
struct SQLCipherErrorTests {
    @Test("kinds match in catch clauses, with typed and untyped throws")
    func catchByKind() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("x.db")
        let database = try Database(path: path, key: .passphrase("right"))
        try database.execute("CREATE TABLE t(a UNIQUE); INSERT INTO t VALUES (1)")
        database.close()

        var matchedTyped = false
        do {
            _ = try Database(path: path, key: .passphrase("wrong"))
        } catch SQLCipherError.wrongKeyOrNotADatabase {
            matchedTyped = true
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(matchedTyped)

        var matchedUntyped = false
        func untyped() throws { try Database(path: path, key: .passphrase("right")).execute("INSERT INTO t VALUES (1)") }
        do {
            try untyped()
        } catch SQLCipherError.constraint {
            matchedUntyped = true
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(matchedUntyped)
    }

    @Test("an error carries codes, message and SQL, and says what to do")
    func contents() throws {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        try database.execute("CREATE TABLE t(a NOT NULL)")
        let error = try #require(thrownError { try database.execute("INSERT INTO t VALUES (NULL)", []) })
        #expect(error.kind == .constraint)
        #expect(error.resultCode == 19)
        #expect(error.extendedResultCode == 1299)  // SQLITE_CONSTRAINT_NOTNULL
        #expect(error.message.contains("NOT NULL constraint failed: t.a"))
        #expect(error.sql == "INSERT INTO t VALUES (NULL)")
        #expect(error.description.hasPrefix("A constraint rejected the change"))
        #expect(error.localizedDescription == error.description)
        #expect((error as any LocalizedError).errorDescription == error.description)
    }

    @Test("read-only databases refuse writes with .readOnly")
    func readOnly() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("ro.db")
        try Database(path: path, key: .passphrase("k")).execute("CREATE TABLE t(a)")
        let reader = try Database(path: path, key: .passphrase("k"), mode: .readOnly)
        #expect(thrownError { try reader.execute("INSERT INTO t VALUES (1)") }?.kind == .readOnly)
    }

    @Test("every kind has advice of its own")
    func advice() throws {
        let descriptions = SQLCipherError.Kind.allCases.map { SQLCipherError(kind: $0, message: "").description }
        #expect(Set(descriptions).count == SQLCipherError.Kind.allCases.count)
    }
}

/// A key written into SQL text that does not parse never reaches the guard, and SQLite's message quotes the token it
/// stopped at: such an error must carry neither the SQL nor that token.
@Suite("SQLCipherError: a key in SQL that does not parse")
struct SQLCipherErrorUnparsedKeyTests {
    static let secret = "UNPARSED-KEY-SECRET-7f3a"

    /// Spellings that fail to parse, each with the secret in it.
    static let statements = [
        "PRAGMA key='\(secret)",
        "PRAGMA/**/rekey = '\(secret)",
        "pragma main.\"hexkey\" = \"x'\(secret)",
        "PRAGMA textkey = '\(secret)' garbage(",
        "ATTACH 'other.db' AS other KEY '\(secret)' junk(",
        "SELECT 1; PRAGMA key = '\(secret)",
        "PRAGMA KEY = \(secret) (",
    ]

    @Test("under every cipher configuration: the error of each spelling holds neither the SQL nor the key; control: a parse error without a key word keeps its SQL",
          arguments: CipherConfiguration.all)
    func noKeyInParseErrors(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.file("e.db"), key: try configuration.makeKey(),
                              configuration: configuration.database())
        defer { db.close() }
        for statement in Self.statements {
            do {
                try db.execute(statement)
                Issue.record("\(statement) ran")
            } catch {
                #expect(error.sql == nil, "\(statement)")
                #expect(!"\(error)".contains(Self.secret) && !error.message.contains(Self.secret), "\(error)")
            }
        }
        // Control: the same kind of failure without a key word keeps its SQL and SQLite's message (the check above
        // would pass on an error that never carried them).
        let marker = "unterminated-literal-7f3a"
        let plain = "SELECT '\(marker)"
        do {
            try db.execute(plain)
            Issue.record("\(plain) ran")
        } catch {
            #expect(error.sql == plain && "\(error)".contains(marker), "\(error)")
        }
    }
}
