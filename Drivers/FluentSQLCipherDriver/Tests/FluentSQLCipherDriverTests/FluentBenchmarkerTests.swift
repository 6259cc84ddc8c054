import FluentBenchmark
import FluentKit
import FluentSQL
import FluentSQLCipherDriver
import Foundation
import Logging
import NIOPosix
import SQLCipherKit
import SQLKit
import XCTest

// XCTest, not Swift Testing: fluent-kit's FluentBenchmarker reports with XCTAssert, which only an XCTest run
// records. Each group of FluentBenchmarker.testAll() is a test of its own, on two encrypted databases (the
// benchmarker needs two: it moves models between them).
final class FluentBenchmarkerTests: XCTestCase {
    private var folder: URL!
    private var databases: Databases!
    private var benchmarker: FluentBenchmarker { FluentBenchmarker(databases: databases) }
    private static let marker = "fluent-marker-\(UUID().uuidString)"

    private var firstPath: String { folder.appendingPathComponent("first.db").path }
    private var secondPath: String { folder.appendingPathComponent("second.db").path }

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("fluent-sqlcipher-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
        databases.use(try .sqlcipher(path: firstPath, key: .passphrase("first fluent key"), sqlLogLevel: nil),
                      as: .sqlcipher)
        databases.use(try .sqlcipher(path: secondPath, key: .rawKey([UInt8](repeating: 0x5a, count: 32)),
                                     sqlLogLevel: nil), as: DatabaseID(string: "second"))
    }

    override func tearDownWithError() throws {
        // A setUp that threw (its error is the test's failure) registered no database: FluentKit would stop the
        // whole process on a lookup of an unregistered one, and the other groups' results with it.
        guard let databases, databases.ids().contains(.sqlcipher) else {
            self.databases?.shutdown()
            try? FileManager.default.removeItem(at: folder)
            return try super.tearDownWithError()
        }
        // Both files, after whatever the group did: encrypted, with no plaintext marker (written into each, so
        // that a plaintext file would show it).
        for id in [DatabaseID.sqlcipher, DatabaseID(string: "second")] {
            let db = try XCTUnwrap(databases.database(id, logger: Logger(label: "test"),
                                                      on: MultiThreadedEventLoopGroup.singleton.any()))
            let sql = try XCTUnwrap(db as? any SQLDatabase)
            try sql.raw("CREATE TABLE IF NOT EXISTS sqlcipher_marker(text TEXT)").run().wait()
            try sql.raw("INSERT INTO sqlcipher_marker VALUES (\(bind: Self.marker))").run().wait()
        }
        databases.shutdown()
        self.databases = nil
        try assertEncrypted(firstPath)
        try assertEncrypted(secondPath)
        try? FileManager.default.removeItem(at: folder)
        try super.tearDownWithError()
    }

    private func assertEncrypted(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        // The database itself must be there (the marker was just written into it); its WAL may be gone.
        XCTAssertNotNil(FileManager.default.contents(atPath: path), "\(path) is missing", file: file, line: line)
        for candidate in [path, path + "-wal"] {
            guard let bytes = FileManager.default.contents(atPath: candidate) else { continue }
            XCTAssertFalse(bytes.starts(with: Data("SQLite format 3".utf8)), "\(candidate) has a plaintext header",
                           file: file, line: line)
            XCTAssertNil(bytes.range(of: Data(Self.marker.utf8)), "\(candidate) holds the marker in plaintext",
                         file: file, line: line)
        }
    }

    func testAggregate() throws { try benchmarker.testAggregate() }
    func testArray() throws { try benchmarker.testArray() }
    func testBatch() throws { try benchmarker.testBatch() }
    func testChild() throws { try benchmarker.testChild() }
    func testChildren() throws { try benchmarker.testChildren() }
    func testCodable() throws { try benchmarker.testCodable() }
    func testChunk() throws { try benchmarker.testChunk() }
    func testCompositeID() throws { try benchmarker.testCompositeID() }
    func testCRUD() throws { try benchmarker.testCRUD() }
    func testEagerLoad() throws { try benchmarker.testEagerLoad() }
    func testEnum() throws { try benchmarker.testEnum() }
    func testFilter() throws { try benchmarker.testFilter() }
    func testGroup() throws { try benchmarker.testGroup() }
    func testID() throws { try benchmarker.testID() }
    func testJoin() throws { try benchmarker.testJoin() }
    func testMiddleware() throws { try benchmarker.testMiddleware() }
    func testMigrator() throws { try benchmarker.testMigrator() }
    func testModel() throws { try benchmarker.testModel() }
    func testOptionalParent() throws { try benchmarker.testOptionalParent() }
    func testPagination() throws { try benchmarker.testPagination() }
    func testParent() throws { try benchmarker.testParent() }
    func testPerformance() throws { try benchmarker.testPerformance() }
    func testRange() throws { try benchmarker.testRange() }
    func testSchema() throws { try benchmarker.testSchema() }
    func testSet() throws { try benchmarker.testSet() }
    func testSiblings() throws { try benchmarker.testSiblings() }
    func testSoftDelete() throws { try benchmarker.testSoftDelete() }
    func testSort() throws { try benchmarker.testSort() }
    func testSQL() throws { try benchmarker.testSQL() }
    func testTimestamp() throws { try benchmarker.testTimestamp() }
    func testTransaction() throws { try benchmarker.testTransaction() }
    func testUnique() throws { try benchmarker.testUnique() }
}
