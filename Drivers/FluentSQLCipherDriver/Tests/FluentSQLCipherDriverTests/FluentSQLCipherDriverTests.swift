import FluentKit
import FluentSQLCipherDriver
import Foundation
import Logging
import NIOPosix
import SQLCipherKit
import SQLKit
import Testing

/// A parent and a child with a foreign key, an integer key the database assigns.
private final class Author: Model, @unchecked Sendable {
    static let schema = "authors"
    @ID(custom: .id, generatedBy: .database) var id: Int?
    @Field(key: "name") var name: String
    init() {}
    init(name: String) { self.name = name }
}

private final class Book: Model, @unchecked Sendable {
    static let schema = "books"
    @ID(custom: .id, generatedBy: .database) var id: Int?
    @Field(key: "title") var title: String
    @Parent(key: "author_id") var author: Author
    init() {}
    init(title: String, authorID: Int) {
        self.title = title
        self.$author.id = authorID
    }
}

/// Two databases on one encrypted file in a temporary folder.
private final class Fixture: @unchecked Sendable {
    let folder: URL
    let databases: Databases
    let path: String

    /// - Parameter unencrypted: Open the file with `.sqlcipher(unencryptedPath:)` instead of a key.
    /// - Parameter configuration: The pool's configuration (an observer, for example).
    init(key: Key? = nil, unencrypted: Bool = false, configuration: DatabasePool.Configuration = .init()) throws {
        let key = try key ?? Key.passphrase("driver tests")
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("fluent-sqlcipher-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        path = folder.appendingPathComponent("app.db").path
        databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
        databases.use(unencrypted ? try .sqlcipher(unencryptedPath: path, configuration: configuration, sqlLogLevel: nil)
                                  : try .sqlcipher(path: path, key: key, configuration: configuration, sqlLogLevel: nil),
                      as: .sqlcipher)
    }

    var db: any FluentKit.Database { db(logger: Logger(label: "test")) }

    /// The database as a request's handler gets it: with the request's logger.
    func db(logger: Logger) -> any FluentKit.Database {
        databases.database(.sqlcipher, logger: logger, on: MultiThreadedEventLoopGroup.singleton.any())!
    }

    func migrate() async throws {
        try await db.schema("authors").field(.id, .int, .identifier(auto: true)).field("name", .string, .required)
            .unique(on: "name").create()
        try await db.schema("books").field(.id, .int, .identifier(auto: true)).field("title", .string, .required)
            .field("author_id", .int, .required, .references("authors", .id)).create()
    }

    deinit {
        databases.shutdown()
        try? FileManager.default.removeItem(at: folder)
    }
}

// The limit guards an event-loop future or pool checkout that is never completed. Every Swift Testing test of this
// package is async and awaits (its XCTest benchmarker runs in a phase of its own, before them), so no test waits for a
// thread behind another's synchronous work: the clock measures the test itself (issue 49).
@Suite("FluentSQLCipherDriver", .timeLimit(.minutes(2)))
struct FluentSQLCipherDriverTests {
    @Test("a wrong key fails the configuration (at boot) with wrongKeyOrNotADatabase, and leaves the file unchanged")
    func wrongKeyFailsAtConfiguration() async throws {
        let fixture = try Fixture(key: .passphrase("right"))
        try await fixture.migrate()
        await fixture.databases.shutdownAsync()
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.path))
        #expect {
            _ = try DatabaseConfigurationFactory.sqlcipher(path: fixture.path, key: .passphrase("wrong"))
        } throws: { ($0 as? SQLCipherError)?.kind == .wrongKeyOrNotADatabase }
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.path)) == before)
    }

    @Test("an unencrypted database, asked for by name: a plain SQLite file, the same models and constraints")
    func unencryptedByName() async throws {
        let fixture = try Fixture(unencrypted: true)
        try await fixture.migrate()
        let author = Author(name: "plaintext-author-marker")
        try await author.create(on: fixture.db)
        try await Book(title: "a book", authorID: try author.requireID()).create(on: fixture.db)
        await #expect(throws: (any Error).self, "foreign keys are enforced as on an encrypted file") {
            try await Book(title: "orphan", authorID: 999).create(on: fixture.db)
        }
        #expect(try await Book.query(on: fixture.db).count() == 1)
        await fixture.databases.shutdownAsync()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: fixture.path))
        #expect(bytes.starts(with: Array("SQLite format 3\0".utf8)))
        #expect(bytes.range(of: Data("plaintext-author-marker".utf8)) != nil)
        #expect(try SQLCipherKit.Database(unencryptedPath: fixture.path)
            .scalar(Int.self, "SELECT count(*) FROM authors") == 1)
        // An encrypted file is refused by the plaintext configuration, and a plaintext file by a key.
        let encrypted = try Fixture()
        try await encrypted.migrate()
        await encrypted.databases.shutdownAsync()
        #expect {
            _ = try DatabaseConfigurationFactory.sqlcipher(unencryptedPath: encrypted.path)
        } throws: { ($0 as? SQLCipherError)?.kind == .wrongKeyOrNotADatabase }
        #expect {
            _ = try DatabaseConfigurationFactory.sqlcipher(path: fixture.path, key: .passphrase("k"))
        } throws: { ($0 as? SQLCipherError)?.kind == .wrongKeyOrNotADatabase }
    }

    @Test("a create returns the new identifier (RETURNING); a unique violation is a constraint failure")
    func createAndConstraints() async throws {
        let fixture = try Fixture()
        try await fixture.migrate()
        let author = Author(name: "Le Guin")
        try await author.create(on: fixture.db)
        #expect(author.id != nil)
        let again = Author(name: "Le Guin")
        let error = await #expect(throws: (any Error).self) { try await again.create(on: fixture.db) }
        #expect((error as? any DatabaseError)?.isConstraintFailure == true, "\(String(describing: error))")
    }

    @Test("an observer in the pool's configuration sees Fluent's statements, each with the awaiting task's context")
    func observed() async throws {
        let recorder = StatementRecorder()
        let fixture = try Fixture(configuration: .init(database: .init(observer: recorder)))
        try await fixture.migrate()
        try await RequestContext.$id.withValue("request-1") {
            try await Author(name: "Jemisin").create(on: fixture.db)
            _ = try await Author.query(on: fixture.db).filter(\.$name == "Jemisin").all()
        }
        let events = recorder.events.filter { ($0.context as? String) == "request-1" }
        let insert = try #require(events.first { $0.operation == "INSERT" && $0.sql.contains("\"authors\"") })
        #expect(insert.changes == 1 && insert.resultCode == 0)
        #expect(!insert.sql.contains("Jemisin"), "a bound value in the statement's text: \(insert.sql)")
        let select = try #require(events.first { $0.operation == "SELECT" && $0.sql.contains("\"authors\"") })
        #expect(select.rows == 1)
    }

    @Test("the database's logger's metadata (a request's) is in swift-log's task-local logger while its statements run, a transaction's BEGIN and COMMIT too, for the pool's observer")
    func loggerBoundForTheObserver() async throws {
        let recorder = BoundLoggerRecorder()
        let fixture = try Fixture(configuration: .init(database: .init(observer: recorder)))
        try await fixture.migrate()
        func requestLogger(_ id: String) -> Logger {
            var logger = Logger(label: "request")
            logger[metadataKey: "request-id"] = "\(id)"
            return logger
        }
        try await Author(name: "Butler").create(on: fixture.db(logger: requestLogger("r-7f3a")))
        _ = try await Author.query(on: fixture.db(logger: requestLogger("r-7f3a"))).all()
        for operation in ["INSERT", "SELECT"] {
            #expect(recorder.seen.contains { $0.operation == operation && $0.requestID == "r-7f3a" },
                    "\(operation): \(recorder.seen)")
        }
        // A transaction: its BEGIN and COMMIT run on the writer session, outside the statement calls.
        try await fixture.db(logger: requestLogger("r-tx")).transaction { db in
            try await Author(name: "Le Guin").create(on: db)
        }
        for operation in ["BEGIN", "INSERT", "COMMIT"] {
            #expect(recorder.seen.contains { $0.operation == operation && $0.requestID == "r-tx" },
                    "\(operation): \(recorder.seen)")
        }
        // Control: another request's database carries its own id, not the one before.
        try await Author(name: "Delany").create(on: fixture.db(logger: requestLogger("r-other")))
        #expect(recorder.seen.last { $0.operation == "INSERT" }?.requestID == "r-other", "\(recorder.seen)")
    }

    @Test("foreign keys are enforced: a child of a missing parent is a constraint failure")
    func foreignKeysEnforced() async throws {
        let fixture = try Fixture()
        try await fixture.migrate()
        let orphan = Book(title: "Orphan", authorID: 4242)
        let error = await #expect(throws: (any Error).self) { try await orphan.create(on: fixture.db) }
        #expect((error as? any DatabaseError)?.isConstraintFailure == true, "\(String(describing: error))")
        let sql = fixture.db as! any SQLDatabase
        let syntax = await #expect(throws: (any Error).self) { try await sql.raw("SELEC nothing").run() }
        #expect((syntax as? any DatabaseError)?.isSyntaxError == true)
    }

    @Test("issue 33's reproductions through raw SQL: no plaintext file, no key from SQL text, the database opens")
    func smuggledRawSQL() async throws {
        let fixture = try Fixture()
        try await fixture.migrate()
        try await Author(name: "Marker").create(on: fixture.db)
        let sql = fixture.db as! any SQLDatabase
        let folder = fixture.folder.path
        let statements = [
            "CREATE TABLE zz(x)", "CREATE TEMP TABLE zz(x)", "PRAGMA writable_schema=ON",
            "UPDATE temp.sqlite_master SET sql='ATTACH ''\(folder)/plain.db'' AS p KEY ''''' WHERE name='zz'",
            "CREATE TABLE d(a, b DEFAULT (sqlcipher_export('main','temp')))", "INSERT INTO d(a) VALUES(1)",
            "CREATE TABLE p.leak AS SELECT * FROM authors",
            "UPDATE temp.sqlite_master SET sql='ATTACH ''\(folder)/keyed.db'' AS k KEY ''some text''' WHERE name='zz'",
            "INSERT INTO d(a) VALUES(2)",
            "UPDATE sqlite_master SET sql='CREATE TABLE authors(' WHERE name='authors'",
        ]
        for statement in statements {
            // Each on its own: a refusal of one must not hide what the next would do.
            _ = try? await sql.raw(SQLQueryString(statement)).run()
        }
        await fixture.databases.shutdownAsync()
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { !$0.hasPrefix("app.db") }
        #expect(files.isEmpty, "\(files)")
        let reopened = try SQLCipherKit.Database(path: fixture.path, key: .passphrase("driver tests"), mode: .readOnly)
        #expect(try reopened.scalar(String.self, "SELECT name FROM authors") == "Marker")
    }

    @Test("issue 43's reproductions through raw SQL under SQLCipher 3's settings: no crash, no escape, process intact")
    func issue43RawSQL() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fluent-sqlcipher-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("c3.db").path
        let key = try Key.passphrase("driver tests")
        let settings = CipherSettings(compatibility: 3)
        let databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
        databases.use(try .sqlcipher(path: path, key: key, configuration: .init(database: .init(cipher: settings)),
                                     sqlLogLevel: nil), as: .sqlcipher)
        let db = databases.database(.sqlcipher, logger: Logger(label: "test"),
                                    on: MultiThreadedEventLoopGroup.singleton.any())!
        let sql = db as! any SQLDatabase
        try await sql.raw("CREATE TABLE t(x)").run()
        try await sql.raw("INSERT INTO t SELECT randomblob(300) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) SELECT i FROM n)").run()
        let copy = folder.appendingPathComponent("copy.db").path
        for statement in ["COMMIT", "ROLLBACK", "PRAGMA cache_size = 3", "VACUUM INTO '\(copy)'",
                          "PRAGMA hard_heap_limit = 300000", "PRAGMA soft_heap_limit = 300000",
                          "PRAGMA temp_store_directory = '\(folder.path)'", "PRAGMA query_only = OFF"] {
            // Each on its own; before issue 43, VACUUM INTO under these settings was a heap overflow.
            _ = try? await sql.raw(SQLQueryString(statement)).run()
        }
        #expect(Engine.heapLimits == Engine.HeapLimits(), "SQL text changed the process's heap limits")
        #expect(try await sql.raw("SELECT count(*) AS n FROM t").first(decodingColumn: "n", as: Int.self) == 2000)
        await databases.shutdownAsync()
        // VACUUM INTO runs nowhere here (the pool's writer is inside its transaction, its readers are read-only);
        // had it run, its copy would open with the key and settings.
        if FileManager.default.fileExists(atPath: copy) {
            let reopened = try SQLCipherKit.Database(path: copy, key: key, configuration: .init(mode: .readOnly, cipher: settings))
            #expect(try reopened.scalar(Int.self, "SELECT count(*) FROM t") == 2000)
        }
        let reopened = try SQLCipherKit.Database(path: path, key: key, configuration: .init(mode: .readOnly, cipher: settings))
        #expect(try reopened.scalar(Int.self, "SELECT count(*) FROM t") == 2000)
        #expect(try reopened.textValue("PRAGMA integrity_check") == "ok")
    }

    @Test("a transaction holds the writer across its awaits; one inside it joins it; a throw rolls both back")
    func transactions() async throws {
        let fixture = try Fixture()
        try await fixture.migrate()
        let db = fixture.db
        let other = Shared<Task<Void, any Error>?>(nil)
        try await db.transaction { tx in
            try await Author(name: "first").create(on: tx)
            other.set(Task.detached { try await Author(name: "other").create(on: fixture.db) })
            // Suspended, the transaction still holds the writer: the other create waits for it.
            try await Task.sleep(for: .milliseconds(300))
            try await tx.transaction { inner in
                #expect(inner.inTransaction)
                try await Author(name: "second").create(on: inner)
            }
        }
        try await other.get()?.value
        let names = try await Author.query(on: db).sort(\.$id).all().map(\.name)
        #expect(names == ["first", "second", "other"])

        struct Planned: Error {}
        await #expect(throws: Planned.self) {
            try await db.transaction { tx in
                try await Author(name: "rolled back").create(on: tx)
                try await tx.transaction { inner in try await Author(name: "inner, rolled back").create(on: inner) }
                throw Planned()
            }
        }
        #expect(try await Author.query(on: db).count() == 3)
    }

    @Test("an ALTER that SQLite cannot make is refused with a clear error")
    func unsupportedAlter() async throws {
        let fixture = try Fixture()
        try await fixture.migrate()
        let error = await #expect(throws: FluentSQLCipherUnsupportedAlter.self) {
            try await fixture.db.schema("authors").updateField("name", .int).update()
        }
        #expect(error?.description.contains("change a column's type") == true)
        // Adding a column is supported.
        try await fixture.db.schema("authors").field("born", .int).update()
    }

    /// The command-line tool the build wrote (dist/), next to this package in the repository.
    static let commandLineTool = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../../dist/SQLCipherKit/bin/sqlcipherkit").standardizedFileURL.path

    @Test("a fluent-sqlite-driver file, encrypted with sqlcipherkit encrypt, reads back the same")
    func fluentSQLiteFileReadsBack() async throws {
        // The fixture: a database fluent-sqlite-driver wrote, as SQL text, and what its models read back as there
        // (Tests/FluentDriver/FluentSQLiteFixture/make-fixture.sh writes both).
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        let dump = try String(contentsOf: fixtures.appendingPathComponent("fluent-sqlite-driver.sql"), encoding: .utf8)
        let expected = try String(contentsOf: fixtures.appendingPathComponent("fluent-sqlite-driver.json"),
                                  encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(FileManager.default.isExecutableFile(atPath: Self.commandLineTool),
                     "no \(Self.commandLineTool): run ./build-sqlcipher.sh first")

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fluent-compat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let plain = folder.appendingPathComponent("app.sqlite").path
        let encrypted = folder.appendingPathComponent("app.db").path
        let plainDatabase = try SQLCipherKit.Database(unencryptedPath: plain)
        try plainDatabase.execute(dump)
        plainDatabase.close()

        // Encrypted as a user moving an app would: the command-line tool, the key from the environment.
        let secret = "compat \(UUID().uuidString)"
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: Self.commandLineTool)
        tool.arguments = ["encrypt", plain, encrypted, "--key-env", "COMPAT_KEY"]
        tool.environment = ProcessInfo.processInfo.environment.merging(["COMPAT_KEY": secret]) { $1 }
        try tool.run()
        tool.waitUntilExit()
        try #require(tool.terminationStatus == 0, "sqlcipherkit encrypt exited \(tool.terminationStatus)")
        let header = try FileHandle(forReadingFrom: URL(fileURLWithPath: encrypted)).read(upToCount: 16)
        #expect(header != Data("SQLite format 3\0".utf8))

        let databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
        databases.use(try .sqlcipher(path: encrypted, key: .passphrase(secret), sqlLogLevel: nil), as: .sqlcipher)
        let db = databases.database(.sqlcipher, logger: Logger(label: "test"),
                                    on: MultiThreadedEventLoopGroup.singleton.any())!
        let read = try await CompatibilityFixture.read(on: db)
        // The constraints came along: a second planet named Earth is refused.
        let duplicate = CompatibilityFixture.Planet()
        duplicate.name = "Earth"
        duplicate.mass = 1
        duplicate.habitable = false
        duplicate.discovered = Date()
        duplicate.kind = .rocky
        duplicate.tags = []
        duplicate.signature = Data()
        duplicate.$star.id = UUID(uuidString: "5A3F1B9E-7C2D-4E8A-9B1F-0D6C2E4A8B10")!
        let error = await #expect(throws: (any Error).self) { try await duplicate.create(on: db) }
        #expect((error as? any DatabaseError)?.isConstraintFailure == true, "\(String(describing: error))")
        await databases.shutdownAsync()
        #expect(read == expected)
    }
}

/// A value shared between test tasks.
private final class Shared<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
}

/// The context the observed test's tasks carry.
private enum RequestContext {
    @TaskLocal static var id: String?
}

/// Records every statement event.
private final class StatementRecorder: DatabaseObserver, @unchecked Sendable {
    // Invariant: `recorded` is only touched with `lock` held.
    private let lock = NSLock()
    private var recorded: [StatementEvent] = []
    var events: [StatementEvent] { lock.withLock { recorded } }
    func currentContext() -> (any Sendable)? { RequestContext.id }
    func statementFinished(_ event: StatementEvent) { lock.withLock { recorded.append(event) } }
}

/// Records each statement's operation with the `request-id` of the task-local logger its caller had bound.
private final class BoundLoggerRecorder: DatabaseObserver, @unchecked Sendable {
    // Invariant: `recorded` is only touched with `lock` held.
    private let lock = NSLock()
    private var recorded: [(operation: String, requestID: String?)] = []
    var seen: [(operation: String, requestID: String?)] { lock.withLock { recorded } }
    func currentContext() -> (any Sendable)? { Logger.current[metadataKey: "request-id"].map { "\($0)" } }
    func statementFinished(_ event: StatementEvent) {
        lock.withLock { recorded.append((event.operation, event.context as? String)) }
    }
}
