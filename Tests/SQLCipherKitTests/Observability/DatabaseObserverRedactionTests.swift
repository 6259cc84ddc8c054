import Foundation
import ProcessTestSupport
import SQLCipherKit
import Testing

/// Nothing secret reaches an observer: keys, passphrases and bound values are in no event of any route, SQLCipher's
/// own SQL (export, attach, rekey) included. The scan's control runs in the same test: a secret planted as SQL text
/// must be found.
@Suite("DatabaseObserver: no key, passphrase or bound value in any event")
struct DatabaseObserverRedactionTests {
    @Test("a keyed database's statements, failures, rekey, attach, backup, export and a pool: no secret in any event; a planted one is found")
    func noSecrets() throws {
        let folder = try TemporaryDirectory()
        let recorder = Recorder()
        let configuration = Database.Configuration(observer: recorder)
        let passphrase = "correct horse \(UUID().uuidString)"
        let rawHex = randomKeyHex(), newHex = randomKeyHex(), backupHex = randomKeyHex(), attachHex = randomKeyHex()
        let exportPassphrase = "export \(UUID().uuidString)"
        let bound = ["bound-secret-\(UUID().uuidString)", "bound-blob-\(UUID().uuidString)", "failing-\(UUID().uuidString)"]
        let planted = "planted-\(UUID().uuidString)"
        let uriSecret = "urisecret\(UUID().uuidString.prefix(8))"

        let db = try Database(path: folder.file("a.db"), key: try .passphrase(passphrase), configuration: configuration)
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, x UNIQUE, y BLOB)")
        try db.execute("INSERT INTO t(x, y) VALUES (?, ?)", [bound[0], Data(bound[1].utf8)])
        _ = try db.fetchAll("SELECT * FROM t WHERE x = ?", [bound[0]])
        #expect(thrownError { try db.execute("INSERT INTO t(x) VALUES (?)", [bound[0]]) }?.kind == .constraint)
        #expect(thrownError { try db.execute("INSERT INTO missing VALUES (?)", [bound[2]]) } != nil)
        // Key SQL is refused before it runs; it would be the leak.
        #expect(thrownError { try db.execute("PRAGMA rekey = '\(passphrase)'") } != nil)
        // VACUUM INTO a keyed URI is refused as it runs (found by an attacker: its text, key and all, was in the
        // statement's event): the event keeps the operation and leaves the text out, as the error does.
        for parameter in ["key", "hexkey", "textkey"] {
            let error = thrownError {
                try db.execute("VACUUM INTO 'file:\(folder.file("copy-\(parameter).db"))?\(parameter)=\(uriSecret)'")
            }
            #expect(error?.kind == .misuse, "\(parameter): \(String(describing: error))")
        }
        let vacuums = recorder.statements.filter { $0.operation == "VACUUM" }
        #expect(vacuums.count == 3 && vacuums.allSatisfy { $0.sql.isEmpty && $0.resultCode != 0 })
        // A key in the path's URI is refused at open (found by the same attacker: SQLCipher keyed the file from it,
        // and the path is in every event); the error names the path without its query.
        for open in [{ _ = try Database(path: "file:\(folder.file("u.db"))?key=\(uriSecret)", key: .passphrase(passphrase),
                                          configuration: configuration) },
                     { _ = try Database(unencryptedPath: "file:\(folder.file("v.db"))?hexkey=\(uriSecret)",
                                        configuration: configuration) },
                     { _ = try DatabasePool(path: "file:\(folder.file("w.db"))?textkey=\(uriSecret)",
                                            key: .passphrase(passphrase), configuration: .init(database: configuration)) }]
            as [() throws -> Void] {
            let error = thrownError { try open() }
            #expect(error?.kind == .invalidArgument, "\(String(describing: error))")
            #expect(error.map { !"\($0)".contains(uriSecret) } == true, "the error holds the URI's key")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file("u.db")))
        try db.attach(folder.file("attached.db"), as: "other", key: try .rawKey(hex: Array(attachHex.utf8)))
        try db.execute("CREATE TABLE other.u(x)")
        try db.execute("INSERT INTO other.u VALUES (?)", [bound[0]])
        try db.detach("other")
        try db.backup(to: folder.file("backup.db"), key: try .rawKey(hex: Array(backupHex.utf8)))
        try db.export(to: folder.file("export.db"), key: try .passphrase(exportPassphrase))
        try db.rekey(to: try .rawKey(hex: Array(newHex.utf8)))
        try db.execute("INSERT INTO t(x) VALUES (?)", [bound[2]])
        // The control: a secret in SQL text (as a literal, not bound) is in the event, and the scan finds it.
        _ = try db.fetchAll("SELECT '\(planted)'")
        db.close()

        let pool = try DatabasePool(path: folder.file("pool.db"), key: try .rawKey(hex: Array(rawHex.utf8)),
                                    configuration: .init(database: configuration))
        try pool.write { db in try db.execute("CREATE TABLE p(x)") }
        try pool.write { db in try db.execute("INSERT INTO p VALUES (?)", [bound[1]]) }
        _ = try pool.read { db in try db.fetchAll("SELECT * FROM p WHERE x = ?", [bound[1]]) }
        try pool.rekey(to: try .passphrase(passphrase + "-pool"))
        pool.close()

        let texts = recorder.allEventTexts()
        // The library's own statements of each route were seen (SQLite turns tracing off inside the export itself).
        for sql in ["ATTACH DATABASE ?1 AS \"other\" KEY ?2", "SELECT sqlcipher_export(?1)", "PRAGMA cipher_version"] {
            #expect(recorder.statements.contains { $0.sql == sql }, "\(sql) was not seen")
        }
        let secrets = [passphrase, passphrase + "-pool", exportPassphrase, rawHex, newHex, backupHex, attachHex, uriSecret]
            + bound
        let hexOfPassphrases = [passphrase, exportPassphrase].map { Data($0.utf8).map { String(format: "%02x", $0) }.joined() }
        let found = Self.occurrences(of: secrets + hexOfPassphrases, in: texts)
        #expect(found.isEmpty, "secrets in events: \(found)")
        // The control, in the same run: the planted literal is found, so the scan reads the events' SQL.
        #expect(Self.occurrences(of: [planted], in: texts).count == 1)
        print("OBSERVER REDACTION: \(texts.count) events scanned for \(secrets.count + hexOfPassphrases.count) secrets: "
              + "\(found.count) found; the planted literal found \(Self.occurrences(of: [planted], in: texts).count) time(s)")
    }

    @Test("under every cipher configuration: bound values, a failure, VACUUM INTO (keyed URI refused, plain copy), a backup: no secret in any event", arguments: CipherConfiguration.all)
    func noSecretsUnderEveryConfiguration(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        let recorder = Recorder()
        var settings = configuration.database()
        settings.observer = recorder
        let secrets = ["bound-\(UUID().uuidString)", "failing-\(UUID().uuidString)", "uri\(UUID().uuidString.prefix(8))"]
        let planted = "planted-\(UUID().uuidString)"
        let db = try Database(path: folder.file("c.db"), key: try configuration.makeKey(), configuration: settings)
        try db.execute("CREATE TABLE t(x UNIQUE)")
        try db.execute("INSERT INTO t VALUES (?)", [secrets[0]])
        _ = try db.fetchAll("SELECT * FROM t WHERE x = ?", [secrets[0]])
        #expect(thrownError { try db.execute("INSERT INTO t VALUES (?)", [secrets[0]]) }?.kind == .constraint)
        #expect(thrownError { try db.execute("INSERT INTO nowhere VALUES (?)", [secrets[1]]) } != nil)
        #expect(thrownError { try db.execute("VACUUM INTO 'file:\(folder.file("k.db"))?key=\(secrets[2])'") }?.kind == .misuse)
        try db.execute("VACUUM INTO ?", [folder.file("copy.db")])
        try db.backup(to: folder.file("backup.db"), key: try configuration.makeKey(0x22))
        _ = try db.fetchAll("SELECT '\(planted)'")
        db.close()
        let texts = recorder.allEventTexts()
        // The keys' own bytes as the matrix makes them (hex), and the matrix's passphrases.
        let keyBytes = [UInt8(0x11), 0x22].map { seed in
            (0..<32).map { String(format: "%02x", UInt8(truncatingIfNeeded: Int($0) * 7 + Int(seed))) }.joined()
        }
        let found = Self.occurrences(of: secrets + keyBytes + ["matrix passphrase"], in: texts)
        #expect(found.isEmpty, "secrets in events under \(configuration.name): \(found)")
        #expect(Self.occurrences(of: [planted], in: texts).count == 1, "the control: the planted literal, found once")
        #expect(recorder.statements.contains { $0.operation == "VACUUM" && $0.sql.isEmpty })
        #expect(recorder.statements.contains { $0.sql == "VACUUM INTO ?" && $0.resultCode == 0 })
    }

    @Test("10,000 distinct statements name at most the fixed set of operations")
    func boundedOperations() throws {
        let recorder = Recorder()
        let db = try Database(path: ":memory:", key: try .rawKey(hex: Array(randomKeyHex().utf8)),
                              configuration: .init(observer: recorder))
        recorder.reset()
        try db.execute("CREATE TABLE t(x)")
        for index in 0..<10_000 {
            switch index % 4 {
            case 0: try db.execute("INSERT INTO t VALUES (\(index))")
            case 1: _ = try db.fetchAll("SELECT x, \(index) FROM t WHERE x = \(index)")
            case 2: try db.execute("UPDATE t SET x = \(index) WHERE x = \(index - 2)")
            default: try db.execute("/* \(index) */ DELETE FROM t WHERE x = \(index)")
            }
        }
        let statements = recorder.statements
        #expect(Set(statements.map(\.sql)).count >= 10_000)
        #expect(Set(statements.map(\.operation)) == ["CREATE", "INSERT", "SELECT", "UPDATE", "DELETE"])
    }

    /// Each secret found, with the event text it is in (case-insensitive: hex may be either case).
    static func occurrences(of secrets: [String], in texts: [String]) -> [String] {
        secrets.flatMap { secret in
            texts.filter { $0.localizedCaseInsensitiveContains(secret) }.map { "\(secret) in \($0.prefix(200))" }
        }
    }

    @Test("an observer may run no SQL on its connection (it must not): in the library's ATTACH a key pragma and a failure naming a key are refused, change nothing and keep no text; control: the same failure outside an event keeps its text", arguments: CipherConfiguration.all)
    func observerSQLIsRefused(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        let (spy, db) = try SQLRunningObserver.observing(folder.file("spy.db"), configuration)
        try db.execute("CREATE TABLE t(x)")
        // Inside the library's ATTACH (its own SQL, past the guard), when the ATTACH statement's event arrives.
        spy.arm(on: "ATTACH", running: ["PRAGMA rekey = '\(SQLRunningObserver.secret)'",
                                        "SELECT 'key=\(SQLRunningObserver.secret)' FROM no_such_table"])
        try db.attach(folder.file("other.db"), as: "other", key: configuration.makeKey(0x22))
        let inside = spy.takeErrors()
        #expect(inside.count == 2 && inside.allSatisfy { $0?.kind == .misuse && $0?.sql == nil }, "\(inside)")
        #expect(!"\(inside)".contains(SQLRunningObserver.secret))
        // An event outside the library's operations too.
        spy.arm(on: "SELECT 1", running: ["SELECT spy_marker_7f3a FROM no_such_table"])
        try db.execute("SELECT 1")
        let atSelect = spy.takeErrors()
        #expect(atSelect.count == 1 && atSelect.first!?.kind == .misuse && atSelect.first!?.sql == nil, "\(atSelect)")
        // Control: the same failure, run by the caller outside any event, keeps its SQL.
        #expect(thrownError { try db.execute("SELECT spy_marker_7f3a FROM no_such_table") }?.sql
                    == "SELECT spy_marker_7f3a FROM no_such_table")
        db.close()
        // The refused rekey changed nothing: the database opens with its key.
        #expect(try SQLRunningObserver.reopen(folder.file("spy.db"), configuration)
                    .scalar(Int.self, "SELECT count(*) FROM t") == 0)
    }

    @Test("an observer that uses its connection when the library begins or commits, or when asked for a context (found by a reviewer): refused, a failed statement is still reported failed, and a connection it closes fails the step", arguments: CipherConfiguration.all)
    func observerUsingTheConnection(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        let (spy, db) = try SQLRunningObserver.observing(folder.file("use.db"), configuration)
        try db.execute("CREATE TABLE t(x UNIQUE); INSERT INTO t VALUES (0)")
        // At the event of the library's SAVEPOINT inside its transaction: the spy's ROLLBACK would end the
        // transaction under the library; refused, and the transaction commits.
        spy.arm(on: "SAVEPOINT", running: ["ROLLBACK"])
        try db.transaction {
            try db.execute("INSERT INTO t VALUES (1)")
            try db.savepoint { try db.execute("INSERT INTO t VALUES (2)") }
        }
        let atSavepoint = spy.takeErrors()
        #expect(atSavepoint.count == 1 && atSavepoint.first!?.kind == .misuse,
                "the spy's ROLLBACK was not refused: \(atSavepoint)")
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM t") == 3)
        // SQL the spy tries when asked for a context, as a failing statement starts: refused, and the statement is
        // still reported failed, with its own result.
        spy.armContext(running: ["SELECT 1"])
        #expect(thrownError { try db.execute("INSERT INTO t VALUES (0)") }?.kind == .constraint)
        let duplicate = spy.statements.last { $0.sql == "INSERT INTO t VALUES (0)" }
        #expect(duplicate?.resultCode == 2067 /* SQLITE_CONSTRAINT_UNIQUE */, "\(String(describing: duplicate))")
        let asked = spy.takeErrors()
        #expect(asked.count == 1 && asked.first!?.kind == .misuse, "\(asked)")
        // A rekey from an event (found by a reviewer): its write transaction would run inside the statement's step.
        spy.armRekey(on: "SELECT 2")
        #expect(try db.scalar(Int.self, "SELECT 2") == 2)
        let rekeyed = spy.takeErrors()
        #expect(rekeyed.count == 1 && rekeyed.first!?.kind == .misuse, "\(rekeyed)")
        // The spy closes the connection when asked for a context: the step is not run on it.
        spy.armContext(closing: true)
        #expect(thrownError { try db.execute("INSERT INTO t VALUES (4)") }?.kind == .misuse)
        #expect(db.isClosed)
        #expect(try SQLRunningObserver.reopen(folder.file("use.db"), configuration)
                    .scalar(Int.self, "SELECT count(*) FROM t") == 3)
    }

    @Test("an observer's SQL inside the library's operations (found by attackers): the export's target, attached unkeyed until the library keys it, is out of its reach; a caller's savepoint cannot release the library's; SQL it tries whenever asked for a context does not ask again; no file holds the marker", arguments: CipherConfiguration.all)
    func observerInsideTheLibrarysOperations(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        let (spy, db) = try SQLRunningObserver.observing(folder.file("in.db"), configuration)
        let marker = "plaintext-marker-\(UUID().uuidString)"
        try db.execute("CREATE TABLE t(x)")
        try db.execute("INSERT INTO t VALUES (?)", [marker])
        // At the event of the export's ATTACH, before the library keys the target: a copy into it would be plaintext,
        // and `journal_mode` (no schema named) would write its header in plaintext.
        spy.arm(on: "ATTACH", running: ["CREATE TABLE sqlcipherkit_export.leak AS SELECT * FROM main.t",
                                        "PRAGMA journal_mode = DELETE"])
        let exportKey = try configuration.makeKey(0x33)
        try db.export(to: folder.file("export.db"), key: exportKey, cipher: configuration.cipher)
        let atAttach = spy.takeErrors()
        #expect(atAttach.count == 2 && atAttach.allSatisfy { $0?.kind == .misuse }, "not refused: \(atAttach)")
        let exported = try Data(contentsOf: URL(fileURLWithPath: folder.file("export.db")))
        #expect(exported.range(of: Data(marker.utf8)) == nil, "the marker is in the export's file in plaintext")
        #expect(try SQLRunningObserver.reopen(folder.file("export.db"), configuration, key: exportKey)
                    .scalar(Int.self, "SELECT count(*) FROM sqlite_schema WHERE name = 'leak'") == 0)
        // At the event of the library's SAVEPOINT, before its scope opens: the caller's savepoint `u` would release
        // it, and the insert it should roll back would be committed.
        struct Planned: Error {}
        spy.arm(on: "SAVEPOINT \"sqlcipherkit_savepoint_", running: ["RELEASE u"])
        try db.transaction {
            try db.execute("SAVEPOINT u")
            _ = try? db.savepoint {
                try db.execute("INSERT INTO t VALUES ('rolled back')")
                throw Planned()
            }
        }
        let atSavepoint = spy.takeErrors()
        #expect(atSavepoint.count == 1 && atSavepoint.first!?.kind == .misuse,
                "the spy's RELEASE was not refused: \(atSavepoint)")
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM t") == 1)
        // SQL the spy tries each time it is asked for a context, through a statement cached before (no compile to
        // refuse it first): asked again for that statement's step, it would recurse without end.
        _ = try db.cachedStatement("SELECT 1")
        spy.armContext(running: ["SELECT 1"], always: true, cached: true)
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM t") == 1)
        try db.execute("INSERT INTO t VALUES (2)")
        spy.armContext()
        let asked = spy.takeErrors()
        // Once before each statement, and once more at the commit's write-ahead-log event: each refused.
        #expect(asked.count >= 2 && asked.allSatisfy { $0?.kind == .misuse }, "\(asked)")
        // By effect: no file holds the marker but the one the caller asked for in plaintext through the typed API
        // (the scan's control, in the same run).
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM t WHERE x = ?", [marker]) == 1)
        try db.attachUnencrypted(folder.file("plain.db"), as: "plain")
        try db.execute("CREATE TABLE plain.c AS SELECT * FROM main.t")
        try db.detach("plain")
        db.close()
        let holders = try FileScan.files(under: folder.path, openIn: getpid()).filter { data($0.1, contains: marker) }
        #expect(holders.map(\.0) == [folder.file("plain.db")], "plaintext under \(configuration.name): \(holders.map(\.0))")
    }

    @Test("a connection closed from a callback inside the library's operations (an export's and a backup's progress, an observer's event at the export's ATTACH, at the library's SAVEPOINT): the operation fails with misuse, nothing is left at its target, the file opens with its key and holds its rows; the sanitized suites run it on the ASan+UBSan engine", arguments: CipherConfiguration.all)
    func closedFromACallback(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        // Rows enough for the export's progress to be called during its copy, and the backup's after a step.
        let source = try configuration.open(folder.file("source.db"))
        try source.execute("CREATE TABLE t(x); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
            + "WHERE i < 6000) INSERT INTO t SELECT randomblob(400) FROM c")
        source.close()
        let cases: [(String, (SQLRunningObserver, Database, String) throws -> Void)] = [
            ("export's progress", { _, db, target in
                try db.export(to: target, key: configuration.makeKey(0x33), cipher: configuration.cipher) { _ in
                    db.close()
                }
            }),
            ("backup's progress", { _, db, target in
                try db.backup(to: target, key: configuration.makeKey(0x33)) { _ in db.close() }
            }),
            ("event at the export's ATTACH", { spy, db, target in
                spy.armClose(on: "ATTACH")
                try db.export(to: target, key: configuration.makeKey(0x33), cipher: configuration.cipher)
            }),
            ("event at the library's SAVEPOINT", { spy, db, _ in
                spy.armClose(on: "SAVEPOINT")
                // Immediate: the write lock is held when the connection is closed, and must be dropped.
                try db.transaction(.immediate) { try db.savepoint { try db.execute("DELETE FROM t") } }
            }),
        ]
        for (name, operation) in cases {
            let path = folder.file("\(cases.firstIndex { $0.0 == name }!).db")
            try FileManager.default.copyItem(atPath: folder.file("source.db"), toPath: path)
            let (spy, db) = try SQLRunningObserver.observing(path, configuration)
            let target = path + "-copy.db"
            let error = thrownError { try operation(spy, db, target) }
            #expect(db.isClosed, "\(name): not closed")
            #expect(error?.kind == .misuse, "\(name): \(String(describing: error))")
            #expect(!FileManager.default.fileExists(atPath: target), "\(name): the target was left")
            // Released once the operation unwound, while `db` still lives: its transaction rolled back, its locks
            // dropped (found by a reviewer: it kept them until the connection was released).
            let other = try configuration.open(path, busyTimeout: .zero)
            #expect(thrownError {
                try other.execute("BEGIN IMMEDIATE; CREATE TABLE lock_check(x); DROP TABLE lock_check; COMMIT")
            } == nil, "\(name): the closed connection still holds a lock")
            other.close()
            withExtendedLifetime(db) {}
            #expect(try SQLRunningObserver.reopen(path, configuration).scalar(Int.self, "SELECT count(*) FROM t") == 6000,
                    "\(name)")
        }
    }

    @Test("an export's last progress call, which may run SQL under the whole guard, may not use the library's schema nor detach a schema named by an expression (found by an attacker); control: its own SQL runs", arguments: CipherConfiguration.all)
    func exportsLastProgressCall(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        let db = try configuration.open(folder.file("p.db"))
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        var errors: [SQLCipherError?] = []
        var count: Int?
        let exportKey = try configuration.makeKey(0x33)
        try db.export(to: folder.file("export.db"), key: exportKey, cipher: configuration.cipher) { value in
            guard value == 1 else { return }
            errors.append(thrownError { try db.execute("CREATE TABLE sqlcipherkit_export.extra(y)") })
            errors.append(thrownError { try db.execute("DETACH 'sqlcipherkit_' || 'export'") })
            count = try? db.scalar(Int.self, "SELECT count(*) FROM main.t")
        }
        #expect(errors.count == 2 && errors.allSatisfy { $0?.kind == .misuse }, "\(errors)")
        #expect(count == 1, "the control: the closure's own SQL did not run")
        #expect(try SQLRunningObserver.reopen(folder.file("export.db"), configuration, key: exportKey)
                    .scalar(Int.self, "SELECT count(*) FROM sqlite_schema WHERE name = 'extra'") == 0)
    }
}

/// An observer that breaks its contract: it runs SQL on its own connection when a statement's event arrives.
final class SQLRunningObserver: DatabaseObserver, @unchecked Sendable {
    /// No "key" in it: only the statements name the key word.
    static let secret = "SPY_SECRET_7f3a"
    /// The connection it misuses, held weakly (the connection holds its observer).
    weak var database: Database?

    /// A spy observing a new database at `path` under `configuration` (with its key), and that database.
    static func observing(_ path: String, _ configuration: CipherConfiguration) throws -> (SQLRunningObserver, Database) {
        let spy = SQLRunningObserver()
        let db = try configuration.open(path, observer: spy)
        spy.database = db
        return (spy, db)
    }

    /// The database at `path` opened again under `configuration`, with `key` (by default the one ``observing(_:_:)``
    /// keyed it with).
    static func reopen(_ path: String, _ configuration: CipherConfiguration, key: Key? = nil) throws -> Database {
        try Database(path: path, key: key ?? configuration.makeKey(), configuration: configuration.database())
    }
    private var trigger: String?
    private var armedStatements: [String] = []
    private var errors: [SQLCipherError?] = []

    /// Runs `statements` once, at the next event of a statement beginning with `prefix`.
    func arm(on prefix: String, running statements: [String]) {
        trigger = prefix
        armedStatements = statements
    }

    /// The errors the statements ran into (nil: it ran), and forgets them.
    func takeErrors() -> [SQLCipherError?] {
        defer { errors = [] }
        return errors
    }

    /// Runs `statements` (or closes the connection) the next time it is asked for a context.
    /// `always`: each time, until armed again; `cached`: through the connection's statement cache.
    func armContext(running statements: [String] = [], closing: Bool = false, always: Bool = false,
                    cached: Bool = false) {
        contextStatements = statements
        closesOnContext = closing
        contextAlways = always
        contextCached = cached
    }

    /// Every statement event.
    private(set) var statements: [StatementEvent] = []
    private var contextStatements: [String] = []
    private var closesOnContext = false
    private var contextAlways = false
    private var contextCached = false

    func currentContext() -> (any Sendable)? {
        guard let database else { return nil }
        let armed = contextStatements
        if !contextAlways { contextStatements = [] }
        for statement in armed {
            errors.append(thrownError {
                if contextCached {
                    try database.cachedStatement(statement).execute(nil)
                } else {
                    try database.execute(statement)
                }
            })
        }
        if closesOnContext {
            closesOnContext = false
            database.close()
        }
        return nil
    }

    /// Rekeys the connection (to a passphrase of its own) at the next event of a statement beginning with `prefix`.
    func armRekey(on prefix: String) {
        rekeyTrigger = prefix
    }

    private var rekeyTrigger: String?

    /// Closes the connection at the next event of a statement beginning with `prefix`.
    func armClose(on prefix: String) {
        closeTrigger = prefix
    }

    private var closeTrigger: String?

    func statementFinished(_ event: StatementEvent) {
        statements.append(event)
        if let closeTrigger, event.sql.hasPrefix(closeTrigger), let database {
            self.closeTrigger = nil
            database.close()
        }
        if let rekeyTrigger, event.sql.hasPrefix(rekeyTrigger), let database {
            self.rekeyTrigger = nil
            errors.append(thrownError { try database.rekey(to: .passphrase("spy-rekey")) })
        }
        guard let trigger, event.sql.hasPrefix(trigger), let database else { return }
        self.trigger = nil
        for statement in armedStatements {
            errors.append(thrownError { try database.execute(statement) })
        }
    }
}

extension Recorder {
    /// Every event, each as its full reflection (every field, the context included).
    func allEventTexts() -> [String] {
        statements.map { String(reflecting: $0) } + transactions.map { String(reflecting: $0) }
            + wal.map { String(reflecting: $0) } + checkpoints.map { String(reflecting: $0) }
            + busy.map { String(reflecting: $0) } + writers.map { String(reflecting: $0) }
            + readers.map { String(reflecting: $0) }
    }
}
