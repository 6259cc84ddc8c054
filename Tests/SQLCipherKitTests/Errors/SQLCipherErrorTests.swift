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
