import Foundation
import ProcessTestSupport
import Testing
@testable import SQLCipherKit

/// The fast path: values bound straight from their storage (``Statement/execute(_:_:_:_:)`` and the variadic
/// form), typed and borrowed column reads, and the statement cache.
@Suite("Fast path: typed binds, borrowed reads, statement cache")
struct StatementFastPathTests {
    private func memory() throws -> Database {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        try database.execute("CREATE TABLE t(a, b, c, d)")
        return database
    }

    private static let blob: [UInt8] = [0, 1, 2, 0xfe, 0xff]
    private static let date = Date(timeIntervalSince1970: 1_700_000_000.123)

    @Test("values passed one by one bind with their own type, NUL bytes and empty values included")
    func typedBinds() throws {
        let database = try memory()
        let insert = try database.prepare("INSERT INTO t(a, b, c, d) VALUES (?, ?, ?, ?)")
        let missing: String? = nil
        try insert.execute(Int64.max, "nul\0inside ✓", 2.5, Self.blob)
        try insert.execute(Int32.min, "", Data(Self.blob), missing)
        try insert.execute(true, [UInt8](), Self.date, 7)
        let rows = try database.fetchAll("SELECT typeof(a), typeof(b), typeof(c), typeof(d) FROM t ORDER BY rowid")
        #expect(rows.map { $0.values.map(\.description) } == [
            ["'integer'", "'text'", "'real'", "'blob'"],
            ["'integer'", "'text'", "'blob'", "'null'"],
            ["'integer'", "'blob'", "'text'", "'integer'"],
        ])
        let select = try database.prepare("SELECT a, b, c, d FROM t ORDER BY rowid")
        #expect(try select.step())
        #expect(try select.column(0, as: Int64.self) == Int64.max)
        #expect(try select.column(1, as: String.self) == "nul\0inside ✓")
        #expect(try select.column(2, as: Double.self) == 2.5)
        #expect(try select.column(3, as: [UInt8].self) == Self.blob)
        #expect(try select.step())
        #expect(try select.column(0, as: Int32.self) == Int32.min)
        #expect(try select.column(1, as: String.self) == "")
        #expect(try select.column(2, as: Data.self) == Data(Self.blob))
        #expect(try select.column(3, as: String?.self) == nil)
        #expect(try select.step())
        #expect(try select.column(0, as: Bool.self) == true)
        #expect(try select.column(1, as: [UInt8].self) == [])
        #expect(try select.column(2, as: Date.self) == Self.date)
        #expect(try select.column(3, as: Int.self) == 7)
    }

    @Test("the variadic form binds any number of values; fewer values leave the rest NULL, more are an error")
    func variadicBinds() throws {
        let database = try memory()
        let nine = try database.prepare("SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9")
        try nine.bind(1, 2, 3, 4, 5, 6, 7, 8, "nine")
        #expect(try nine.step())
        #expect(try nine.column(0, as: Int.self) == 1 && nine.column(8, as: String.self) == "nine")
        let insert = try database.prepare("INSERT INTO t(a, b, c, d) VALUES (?, ?, ?, ?)")
        try insert.execute(1, "x", 1.5, Self.blob)
        try insert.execute(2)
        #expect(try database.fetchAll("SELECT b FROM t WHERE a = 2").first?[0] == .null,
                "a shorter list left an old value in place")
        #expect(thrownError { try insert.execute(1, 2, 3, 4, 5) }?.kind == .invalidArgument)
        #expect(thrownError { try insert.bind("x", at: 5) }?.kind == .invalidArgument)
        #expect(thrownError { try database.prepare("SELECT 1").bind(1, at: 1) }?.kind == .invalidArgument)
    }

    @Test("an array literal stays an argument list, never one [UInt8] blob")
    func arrayLiteralsAreArguments() throws {
        let database = try memory()
        try database.prepare("INSERT INTO t(a, b) VALUES (?, ?)").execute([4, 5])
        try database.execute("INSERT INTO t(a, b) VALUES (?, ?)", [6, 7])
        let select = try database.prepare("SELECT a FROM t WHERE a >= ? ORDER BY a")
        try select.bind([4])
        var seen: [Int] = []
        while try select.step() { seen.append(try select.column(0, as: Int.self)) }
        #expect(seen == [4, 6])
        #expect(try database.scalar(String.self, "SELECT group_concat(typeof(a)) FROM t") == "integer,integer")
    }

    @Test("withUnsafeBytes reads text and blobs in place; numbers and NULL are typed errors")
    func borrowedReads() throws {
        let database = try memory()
        try database.execute("INSERT INTO t VALUES (?, ?, ?, ?)", "héllo", Self.blob, 3, nil as String?)
        let select = try database.prepare("SELECT a, b, c, d FROM t")
        #expect(try select.step())
        #expect(try select.withUnsafeBytes(at: 0) { Array($0) } == Array("héllo".utf8))
        #expect(try select.withUnsafeBytes(at: 1) { Array($0) } == Self.blob)
        #expect(thrownError { try select.withUnsafeBytes(at: 2) { $0.count } }?.kind == .typeMismatch)
        #expect(thrownError { try select.withUnsafeBytes(at: 3) { $0.count } }?.kind == .typeMismatch)
        #expect(thrownError { try select.withUnsafeBytes(at: 4) { $0.count } }?.kind == .invalidArgument)
        #expect(thrownError { try select.column(2, as: String.self) }?.kind == .typeMismatch)
        #expect(thrownError { try select.column(0, as: Double.self) }?.kind == .typeMismatch)
        #expect(thrownError { try select.column(3, as: Int.self) }?.kind == .typeMismatch)
        #expect(try select.column(3, as: Int?.self) == nil)
    }

    @Test("cachedStatement prepares repeated SQL once, stays bounded, and lets its connection go")
    func statementCache() throws {
        let database = try memory()
        let sql = "INSERT INTO t(a) VALUES (?)"
        let first = try database.cachedStatement(sql)
        #expect(try database.cachedStatement(sql) === first, "the same SQL was prepared again")
        for value in 0..<3 { try database.execute(sql, value) }
        #expect(try database.scalar(Int.self, "SELECT count(*) FROM t") == 3)
        for index in 0..<(StatementCache.capacity + 10) {
            _ = try database.cachedStatement("SELECT \(index)")
        }
        #expect(database.statementCache.count <= StatementCache.capacity)
        #expect(try database.cachedStatement(sql) === first, "a statement still held was evicted")

        // The connection does not stay alive through its cache (no reference cycle), and a cached statement
        // held after the connection closed throws instead of touching it.
        weak var released: Database?
        var held: Statement?
        do {
            let other = try memory()
            held = try other.cachedStatement("SELECT count(*) FROM t")
            released = other
        }
        #expect(released == nil, "the statement cache kept its connection alive")
        #expect(thrownError { try held?.step() }?.kind == .misuse)
        #expect(thrownError { try held?.execute(1) }?.kind != nil)
        database.close()
        #expect(thrownError { try first.execute(1) }?.kind == .misuse)
        #expect(thrownError { try database.cachedStatement(sql) }?.kind == .misuse)
    }

    @Test("the page cache: 16 MiB by default for encrypted connections, SQLite's 2,000 KiB for plain, or as configured")
    func pageCacheSize() throws {
        let folder = try TemporaryDirectory()
        let encrypted = try Database(path: folder.file("e.db"), key: .passphrase("k"))
        #expect(try encrypted.textValue("PRAGMA cache_size") == "-16384")
        let plain = try Database(unencryptedPath: folder.file("p.db"))
        #expect(try plain.textValue("PRAGMA cache_size") == "-2000")
        let configured = try Database(path: folder.file("c.db"), key: .passphrase("k"),
                                      configuration: .init(pageCacheSize: 64 << 20))
        #expect(try configured.textValue("PRAGMA cache_size") == "-65536")
        #expect(CipherSettings.sha256.pragmas(schema: "main") == [
            "PRAGMA \"main\".cipher_hmac_algorithm = HMAC_SHA256", "PRAGMA \"main\".cipher_kdf_algorithm = PBKDF2_HMAC_SHA256",
        ])
    }
}
