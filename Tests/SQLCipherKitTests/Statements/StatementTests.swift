import Foundation
import ProcessTestSupport
import Testing
@testable import SQLCipherKit

@Suite("Statements, binding and columns")
struct StatementTests {
    private func memory() throws -> Database {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        try database.execute("CREATE TABLE t(a, b, c)")
        return database
    }

    /// One value of every bindable type, and how it reads back.
    private static let date = Date(timeIntervalSince1970: 1_700_000_000.123)
    private static let blob: [UInt8] = [0, 1, 2, 0xfe, 0xff]

    @Test("every bindable type round-trips, bound by index")
    func roundTripByIndex() throws {
        let database = try memory()
        let insert = try database.prepare("INSERT INTO t(a) VALUES (?)")
        let values: [(any DatabaseValueConvertible)?] = [
            42, Int64.max, Int32.min, 3.25, true, false, "héllo 'quoted' \"twice\" 🚀", Data(Self.blob), Self.blob,
            nil, Self.date,
        ]
        for value in values {
            try insert.bind(value, at: 1)
            try insert.execute()
        }
        let rows = try database.fetchAll("SELECT a FROM t ORDER BY rowid")
        #expect(rows.count == values.count)
        #expect(try rows[0].get(0, as: Int.self) == 42)
        #expect(try rows[1].get(0, as: Int64.self) == Int64.max)
        #expect(try rows[2].get(0, as: Int32.self) == Int32.min)
        #expect(try rows[3].get(0, as: Double.self) == 3.25)
        #expect(try rows[4].get(0, as: Bool.self) == true)
        #expect(try rows[5].get(0, as: Bool.self) == false)
        #expect(try rows[6].get(0, as: String.self) == "héllo 'quoted' \"twice\" 🚀")
        #expect(try rows[7].get(0, as: Data.self) == Data(Self.blob))
        #expect(try rows[8].get(0, as: [UInt8].self) == Self.blob)
        #expect(rows[9][0] == .null)
        #expect(try rows[9].get(0, as: String?.self) == nil)
        #expect(try rows[10].get(0, as: Date.self) == Self.date)
        #expect(rows[10][0] == .text("2023-11-14 22:13:20.123"), "dates are stored as UTC text with milliseconds")
        // Storage classes are what SQLite would store.
        #expect(try database.fetchAll("SELECT typeof(a) FROM t ORDER BY rowid").map { try $0.get(0, as: String.self) }
            == ["integer", "integer", "integer", "real", "integer", "integer", "text", "blob", "blob", "null", "text"])
    }

    @Test("isReadOnly: SELECT and reading pragmas are read-only; writes and schema changes are not")
    func readOnly() throws {
        let db = try memory()
        #expect(try db.prepare("SELECT a FROM t").isReadOnly)
        #expect(try db.prepare("PRAGMA user_version").isReadOnly)
        #expect(try !db.prepare("INSERT INTO t VALUES (1, 2, 3)").isReadOnly)
        #expect(try !db.prepare("UPDATE t SET a = 1").isReadOnly)
        #expect(try !db.prepare("CREATE TABLE u(x)").isReadOnly)
        #expect(try !db.prepare("WITH n(x) AS (SELECT 1) INSERT INTO t(a) SELECT x FROM n").isReadOnly)
    }

    @Test("named parameters bind with :, @ and $ prefixes, or none")
    func namedParameters() throws {
        let database = try memory()
        try database.execute("INSERT INTO t VALUES (:a, @b, $c)", ["a": 1, "@b": "two", "$c": nil])
        let row = try #require(try database.fetchOne("SELECT a, b, c FROM t"))
        #expect(row.values == [.integer(1), .text("two"), .null])

        let statement = try database.prepare("SELECT :x + :y")
        try statement.bind(40, named: "x")
        try statement.bind(2, named: ":y")
        #expect(try statement.step())
        #expect(try statement.column(0, as: Int.self) == 42)
    }

    @Test("prepare takes one statement: more is an error, trailing blanks and comments are fine")
    func oneStatement() throws {
        let database = try memory()
        #expect(thrownError { try database.prepare("SELECT 1; SELECT 2") }?.kind == .invalidArgument)
        #expect(thrownError { try database.execute("INSERT INTO t(a) VALUES (?); DELETE FROM t", [1]) }?.kind
            == .invalidArgument)
        #expect(try database.scalar(Int.self, "SELECT count(*) FROM t") == 0, "nothing ran")
        _ = try database.prepare("SELECT 1;  -- a comment\n ; ")
        #expect(thrownError { try database.prepare("  -- only a comment") }?.kind == .invalidArgument)
    }

    @Test("binding errors are typed: unknown names, too many values")
    func bindingErrors() throws {
        let database = try memory()
        let statement = try database.prepare("INSERT INTO t(a) VALUES (?)")
        #expect(thrownError { try statement.bind(["nope": 1]) }?.kind == .invalidArgument)
        #expect(thrownError { try statement.bind([1, 2]) }?.kind == .invalidArgument)
        #expect(thrownError { try statement.bind(1, at: 2) }?.kind == .invalidArgument)
    }

    @Test("a statement steps, resets and is reused with new bindings")
    func stepResetReuse() throws {
        let database = try memory()
        let insert = try database.prepare("INSERT INTO t(a, b) VALUES (?, ?)")
        for index in 1...5 {
            try insert.execute([index, "row \(index)"])
        }
        #expect(database.lastInsertRowID == 5)
        #expect(database.changes == 1)
        #expect(database.totalChanges == 5)

        let select = try database.prepare("SELECT a, b FROM t WHERE a >= ? ORDER BY a")
        try select.bind([4])
        var seen: [Int] = []
        while try select.step() {
            seen.append(try select.column("a"))
            #expect(try select.column("B", as: String.self) == "row \(seen.last!)", "names are case-insensitive")
        }
        #expect(seen == [4, 5])
        select.reset()
        #expect(try select.step(), "reset keeps the bindings and rewinds")
        #expect(try select.column(0, as: Int.self) == 4)
        try select.bind([2])
        select.reset()
        #expect(try select.rows([3]).all().count == 3)
        #expect(select.columnNames == ["a", "b"])
        #expect(select.parameterCount == 1)
    }

    @Test("reading NULL or the wrong type as a non-optional is a typed error")
    func typeMismatch() throws {
        let database = try memory()
        try database.execute("INSERT INTO t VALUES (NULL, 'text', 1.5)")
        let row = try #require(try database.fetchOne("SELECT a, b, c FROM t"))
        #expect(thrownError { try row.get(0, as: Int.self) }?.kind == .typeMismatch)
        #expect(thrownError { try row.get("b", as: Int.self) }?.kind == .typeMismatch)
        #expect(thrownError { try row.get("c", as: Int.self) }?.kind == .typeMismatch, "1.5 is not an Int")
        #expect(thrownError { try row.get("missing", as: Int.self) }?.kind == .invalidArgument)
        #expect(try row.get(0, as: Int?.self) == nil)
        #expect(row["b"] == .text("text"))
        #expect(row["nope"] == nil)
    }

    @Test("a cursor reads rows one at a time, without loading them all",
          .hangGuard(.minutes(2), hang: "a cursor that loads its whole (endless) result before the first row"))
    func cursorIsLazy() throws {
        let database = try memory()
        // An endless result: a cursor that loaded its rows up front would never return the first one.
        let cursor = try database.fetchCursor(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c")
        var seen: [Int] = []
        while seen.count < 3, let row = try cursor.next() {
            seen.append(try row.get(0))
        }
        #expect(seen == [1, 2, 3])

        try database.execute("INSERT INTO t(a) VALUES (1), (2)")
        let finite = try database.fetchCursor("SELECT a FROM t")
        #expect(try finite.all().count == 2)
        #expect(try finite.next() == nil, "an exhausted cursor stays exhausted")
    }

    @Test("scalar, fetchOne and textValue")
    func scalars() throws {
        let database = try memory()
        #expect(try database.scalar(Int.self, "SELECT 6 * 7") == 42)
        #expect(try database.scalar(Int.self, "SELECT NULL") == nil)
        #expect(try database.scalar(String.self, "SELECT a FROM t") == nil)
        #expect(try database.textValue("SELECT 1.5") == "1.5")
        #expect(try database.fetchOne("SELECT a FROM t") == nil)
    }
}
