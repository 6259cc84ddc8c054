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

/// SQL text that holds a key and fails before (or without) the guard's refusal: it does not parse (SQLite's message
/// quotes the token it stopped at), an earlier statement of the script fails, the key pragma names a schema that does
/// not exist, an ATTACH's KEY expression does not resolve, a URI's `key` is percent-escaped, `VACUUM INTO` a keyed URI
/// fails as it runs. Such an error must carry neither the SQL nor the key, by every route; nor may the statement's
/// event. (Found by an attacker's read of the first fix, which covered the first kind alone.)
@Suite("SQLCipherError: a key in SQL that fails")
struct SQLCipherErrorUnparsedKeyTests {
    /// No "key" in it: the statements below must name the key word themselves.
    static let secret = "SECRET_7f3a_HIDDEN"

    /// Spellings that fail, each with the secret in it.
    static let statements = [
        // Does not parse.
        "PRAGMA key='\(secret)",
        "PRAGMA/**/rekey = '\(secret)",
        "pragma main.\"hexkey\" = \"x'\(secret)",
        "PRAGMA textkey = '\(secret)' garbage(",
        "ATTACH 'other.db' AS other KEY '\(secret)' junk(",
        "SELECT 1; PRAGMA key = '\(secret)",
        "PRAGMA KEY = \(secret) (",
        // An earlier statement of the script fails for an ordinary reason.
        "SELECT * FROM nope; PRAGMA key = '\(secret)'",
        "SELECT nocol FROM sqlite_schema; PRAGMA rekey = '\(secret)'",
        "SELECT nofunc(); ATTACH 'o.db' AS o KEY '\(secret)'",
        "SELECT 1; SELECT * FROM nope; PRAGMA key='\(secret)'",
        // Fails before the guard sees it: an unknown schema, an ATTACH or VACUUM expression that does not resolve
        // (SQLite's message may quote the key itself, written as an identifier).
        "PRAGMA nosuch.key = '\(secret)'",
        "PRAGMA nosuch.rekey('\(secret)')",
        "ATTACH 'o.db' AS o KEY '\(secret)' || nofunc()",
        "ATTACH 'o.db' AS o KEY \(secret).x",
        "ATTACH 'o.db' AS o KEY +\(secret)",
        "ATTACH 'o.db' AS o KEY \(secret)()",
        "ATTACH 'file:o.db?key=\(secret)' || nofunc() AS o",
        "VACUUM nosuch INTO 'file:v.db?key=\(secret)'",
        "VACUUM INTO 'file:v.db?key=\(secret)' || nofunc()",
        // A URI's key parameter percent-escaped (SQLite decodes it), failing to parse.
        "ATTACH 'file:o.db?%6Bey=\(secret)",
        "ATTACH 'file:o.db?%6Bey=\(secret)' AS",
        "VACUUM INTO 'file:v.db?%6b%65%79=\(secret)",
        "VACUUM INTO 'file:v.db?%256Bey=\(secret)",
        // A URI key built by an expression: no spelling of the text shows it (a second attacker's read).
        "VACUUM INTO 'file:v.db?k'||'ey=\(secret)",
        "VACUUM INTO 'file:v.db?k'||'ey='||\(secret)",
        "ATTACH 'file:o.db?k'||'ey='||\(secret) AS a",
        "SELECT 1; VACUUM INTO 'file:v.db?k'||'ey=\(secret)",
    ]

    /// The routes a statement takes: a script, a prepared statement, a cached one, a query.
    static let routes: [(name: String, run: @Sendable (Database, String) throws(SQLCipherError) -> Void)] = [
        ("execute(script)", { db, sql throws(SQLCipherError) in try db.execute(sql) }),
        ("execute(sql, arguments)", { db, sql throws(SQLCipherError) in try db.execute(sql, StatementArguments.none) }),
        ("fetchAll", { db, sql throws(SQLCipherError) in _ = try db.fetchAll(sql) }),
        ("cachedStatement", { db, sql throws(SQLCipherError) in _ = try db.cachedStatement(sql) }),
    ]

    @Test("under every cipher configuration, by every route: the error of each spelling holds neither the SQL nor the key; control: a failure without a key word keeps its SQL and message",
          arguments: CipherConfiguration.all)
    func noKeyInErrors(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.file("e.db"), key: try configuration.makeKey(),
                              configuration: configuration.database())
        defer { db.close() }
        for statement in Self.statements {
            for route in Self.routes {
                do {
                    try route.run(db, statement)
                    Issue.record("\(route.name): \(statement) ran")
                } catch {
                    #expect(error.sql == nil, "\(route.name): \(statement)")
                    #expect(!"\(error)".contains(Self.secret) && !error.message.contains(Self.secret),
                            "\(route.name): \(error)")
                }
            }
        }
        // A comment alone holds no statement: a script runs nothing, a prepared statement fails without the text.
        let comment = "-- PRAGMA key='\(Self.secret)'"
        let error = thrownError { _ = try db.prepare(comment) }
        #expect(error?.kind == .invalidArgument && error?.sql == nil && !"\(String(describing: error))".contains(Self.secret))
        // Control: the same failures without a key word keep their SQL and SQLite's message (the checks above would
        // pass on errors that never carried them).
        let marker = "marker_7f3a"
        for (plain, inMessage) in [("SELECT '\(marker)", true), ("SELECT * FROM nope; SELECT '\(marker)'", false),
                                   ("SELECT \(marker)()", true)] {
            for route in Self.routes.prefix(1) {
                do {
                    try route.run(db, plain)
                    Issue.record("\(plain) ran")
                } catch {
                    #expect(error.sql == plain && "\(error)".contains(marker)
                            && (!inMessage || error.message.contains(marker)), "\(plain): \(error) sql=\(String(describing: error.sql))")
                }
            }
        }
    }

    @Test("under every cipher configuration: VACUUM INTO a keyed URI (written, escaped, or built by an expression) that fails as it runs (inside a transaction, a pool's write) keeps its text out of the error and of the statement's event; control: another failed statement's event keeps its text",
          arguments: CipherConfiguration.all)
    func noKeyInFailedStatementEvents(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        let recorder = FailedStatementRecorder()
        var settings = configuration.database()
        settings.observer = recorder
        let db = try Database(path: folder.file("v.db"), key: try configuration.makeKey(), configuration: settings)
        defer { db.close() }
        try db.execute("CREATE TABLE t(x UNIQUE); INSERT INTO t VALUES (1)")
        let copy = folder.file("copy.db")
        let uri = Array("file:\(copy)?key=\(Self.secret)".utf8).map { String(format: "%02x", $0) }.joined()
        let statements = ["VACUUM INTO 'file:\(copy)?key=\(Self.secret)'",
                          "VACUUM INTO 'file:\(copy)?%6Bey=\(Self.secret)'",
                          "VACUUM INTO 'file:\(copy)?k'||'ey=\(Self.secret)'",
                          "VACUUM INTO cast(x'\(uri)' AS TEXT)"]
        for statement in statements {
            let error = thrownError {
                try db.transaction { try db.execute(statement) }
            }
            #expect(error != nil && error?.sql == nil && !"\(String(describing: error))".contains(Self.secret),
                    "\(String(describing: error))")
        }
        // A pool's write is a transaction: the same, from its writer (the synchronous call: this suite waits
        // synchronously, so it holds no async test; see ASYNC_SUITES in Tests/run-all.sh).
        let pool = try DatabasePool(path: folder.file("p.db"), key: try configuration.makeKey(),
                                    configuration: .init(readerCount: 1, database: settings))
        for statement in statements {
            let error = thrownError { try pool.write { db in try db.execute(statement) } }
            #expect(error != nil && error?.sql == nil && !"\(String(describing: error))".contains(Self.secret),
                    "\(String(describing: error))")
        }
        pool.close()
        #expect(!FileManager.default.fileExists(atPath: copy))
        // Control: a failed statement without a key word keeps its text in its event.
        #expect(thrownError { try db.execute("INSERT INTO t VALUES (1)") }?.kind == .constraint)
        let failed = recorder.failed
        #expect(failed.filter { $0.contains("VACUUM") }.isEmpty && failed.filter(\.isEmpty).count >= 8, "\(failed)")
        #expect(!failed.contains { $0.contains(Self.secret) }, "\(failed)")
        #expect(failed.contains("INSERT INTO t VALUES (1)"), "\(failed)")
    }

    @Test("the library's own ATTACH (its key bound, never in the text) keeps SQLite's message and its SQL; a user's failing statement that names attach does not")
    func librarysOwnSQLKeepsItsMessage() throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.file("own.db"), key: .passphrase("own-passphrase"))
        defer { db.close() }
        try db.attach(folder.file("a.db"), as: "other", key: .passphrase("other-passphrase"))
        let error = thrownError { try db.attach(folder.file("b.db"), as: "other", key: .passphrase("other-passphrase")) }
        #expect(error?.message.contains("already in use") == true && error?.sql?.hasPrefix("ATTACH") == true,
                "\(String(describing: error))")
        // A key in the attached path's URI is refused before anything runs, and is in no error (nor is the path).
        let keyed = thrownError {
            try db.attach("file:\(folder.file("missing/x.db"))?key=\(Self.secret)", as: "x",
                          key: .passphrase("other-passphrase"))
        }
        #expect(keyed?.kind == .invalidArgument && !"\(String(describing: keyed))".contains(Self.secret),
                "\(String(describing: keyed))")
        // Control: the same failure in a user's SQL (refused by the guard before it could fail so) names no message.
        let user = thrownError { try db.execute("SELECT nosuch FROM other.sqlite_schema WHERE 'attach' = ''") }
        #expect(user?.sql == nil && user?.message.contains("nosuch") == false, "\(String(describing: user))")
    }

    @Test("the key word is found in any case, inside comments and quotes, and behind percent-escapes; not in text without it")
    func mayHoldKey() {
        for text in ["PRAGMA key", "x KEY y", "/*kEy*/", "'file:a?%6Bey=1'", "%6b%65%79", "%256Bey", "monkey",
                     "VACUUM INTO 'file:a?k'||'ey=1'", "attach x", "Vacuum"] {
            #expect(SQLCipherError.mayHoldKey(text), "\(text)")
        }
        for text in ["", "ke", "SELECT 1", "file:a?%6Bex=1", "k e y", "%6", "%zz", "detach x", "vacuu m"] {
            #expect(!SQLCipherError.mayHoldKey(text), "\(text)")
        }
    }
}

/// The SQL text of every failed statement's event.
final class FailedStatementRecorder: DatabaseObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var texts: [String] = []

    var failed: [String] { lock.withLock { texts } }

    func statementFinished(_ event: StatementEvent) {
        guard event.resultCode != 0 else { return }
        lock.withLock { texts.append(event.sql) }
    }
}
