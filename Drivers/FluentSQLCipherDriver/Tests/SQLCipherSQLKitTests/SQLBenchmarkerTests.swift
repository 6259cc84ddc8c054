import Foundation
import NIOPosix
import SQLCipherKit
import SQLCipherSQLKit
import SQLKit
import SQLKitBenchmark
import XCTest

// XCTest, not Swift Testing: sql-kit's SQLBenchmarker reports with XCTAssert, which only an XCTest run records.
final class SQLBenchmarkerTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("sqlcipher-sqlkit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func database(_ name: String, key: Key) throws -> (DatabasePool, SQLCipherSQLDatabase) {
        let pool = try DatabasePool(path: folder.appendingPathComponent(name).path, key: key)
        return (pool, SQLCipherSQLDatabase(pool: pool, eventLoop: MultiThreadedEventLoopGroup.singleton.any()))
    }

    func testSQLBenchmarkerOnAnEncryptedDatabase() async throws {
        let (pool, db) = try database("sqlkit.db", key: .passphrase("sql benchmark"))
        try await SQLBenchmarker(on: db).runAllTests()
        let marker = "sqlkit-marker-\(UUID().uuidString)"
        try await db.create(table: "marker").column("text", type: .text).run()
        try await db.insert(into: "marker").columns("text").values(SQLBind(marker)).run()
        let rows = try await db.select().column("text").from("marker").all()
        XCTAssertEqual(try rows.first?.decode(column: "text", as: String.self), marker)
        pool.close()
        try assertEncrypted(folder.appendingPathComponent("sqlkit.db"), without: marker)
    }

    func testDialectIsSQLiteWithTheEngineVersion() throws {
        let (pool, db) = try database("dialect.db", key: .passphrase("dialect"))
        XCTAssertEqual(db.dialect.name, "sqlite")
        XCTAssertEqual(db.version?.stringValue, SQLCipherDatabaseVersion(parsing: Engine.sqliteVersion).stringValue)
        XCTAssertTrue(db.dialect.supportsReturning)
        pool.close()
    }

    /// fluent-sqlite-driver's data rules: Bool as an integer, Date as REAL seconds since 1970, structured values
    /// as JSON text; and back.
    func testDataRules() async throws {
        struct Point: Codable, Equatable { var x: Int; var y: Int }
        let json = JSONEncoder()
        json.outputFormatting = .sortedKeys
        let encoder = SQLCipherDataEncoder(json: json)
        XCTAssertEqual(try encoder.encode(true), .integer(1))
        XCTAssertEqual(try encoder.encode(false), .integer(0))
        XCTAssertEqual(try encoder.encode(Date(timeIntervalSince1970: 1_700_000_000.5)), .real(1_700_000_000.5))
        XCTAssertEqual(try encoder.encode(Point(x: 1, y: 2)), .text(#"{"x":1,"y":2}"#))
        let id = UUID()
        XCTAssertEqual(try encoder.encode(id), .text(id.uuidString))
        XCTAssertEqual(try encoder.encode(Data([1, 2])), .blob([1, 2]))
        XCTAssertEqual(try encoder.encode(Optional<Int>.none), .null)
        XCTAssertEqual(try encoder.encode([String]()), .text("[]"), "an empty array is JSON, not an empty blob")
        XCTAssertEqual(try encoder.encode([UInt8]([7])), .blob([7]))

        let decoder = SQLCipherDataDecoder()
        XCTAssertEqual(try decoder.decode(Bool.self, from: .integer(1)), true)
        XCTAssertThrowsError(try decoder.decode(Bool.self, from: .integer(2)))
        XCTAssertEqual(try decoder.decode(Date.self, from: .real(1_700_000_000.5)), Date(timeIntervalSince1970: 1_700_000_000.5))
        XCTAssertEqual(try decoder.decode(Date.self, from: .text("2023-11-14T22:13:20Z")), Date(timeIntervalSince1970: 1_700_000_000))
        XCTAssertEqual(try decoder.decode(Point.self, from: .text(#"{"x":1,"y":2}"#)), Point(x: 1, y: 2))
        XCTAssertEqual(try decoder.decode(UUID.self, from: .text(id.uuidString)), id)
        XCTAssertEqual(try decoder.decode(String.self, from: .integer(42)), "42")
        XCTAssertThrowsError(try decoder.decode(Int.self, from: .text("42")))
        XCTAssertEqual(try decoder.decode(Int?.self, from: .null), nil)
    }

    func testReadsRunOnReadersAndWritesOnTheWriter() async throws {
        let (pool, db) = try database("routing.db", key: .passphrase("routing"))
        try await db.raw("CREATE TABLE t(v INTEGER)").run()
        try await db.raw("INSERT INTO t VALUES (1)").run()
        // A read inside a writer session of the pool would fail with misuse if it were sent to the writer.
        try await pool.writeSession { session in
            let rows = try await db.raw("SELECT v FROM t").all()
            XCTAssertEqual(try rows.first?.decode(column: "v", as: Int.self), 1)
            _ = session
        }
        pool.close()
    }
}

/// Fails unless the file at `url` starts with no SQLite header and holds no copy of `marker`.
func assertEncrypted(_ url: URL, without marker: String, file: StaticString = #filePath, line: UInt = #line) throws {
    let bytes = try Data(contentsOf: url)
    XCTAssertFalse(bytes.starts(with: Data("SQLite format 3".utf8)), "\(url.path) has a plaintext header",
                   file: file, line: line)
    XCTAssertNil(bytes.range(of: Data(marker.utf8)), "\(url.path) holds the marker in plaintext", file: file, line: line)
    for side in ["-wal", "-journal"] {
        if let sideBytes = try? Data(contentsOf: URL(fileURLWithPath: url.path + side)) {
            XCTAssertNil(sideBytes.range(of: Data(marker.utf8)), "\(url.path)\(side) holds the marker", file: file, line: line)
        }
    }
}
