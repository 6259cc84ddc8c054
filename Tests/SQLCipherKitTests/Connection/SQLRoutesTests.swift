import CSQLCipher
import Foundation
import ProcessTestSupport
@testable import SQLCipherKit
import ReliabilitySupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The guard's missing dimension: *who runs the statement*. `SQLPromisesTests` and the generative spelling test
/// vary how a refused statement is spelled; here every refused family (``RoutePayload``, those of the spelling test
/// and a schema that no longer parses) is carried by every route SQL can take on the caller's behalf
/// (``SQLRoute``) — a trigger, a view, a column DEFAULT, a CHECK constraint, a schema row that SQLCipher's export
/// runs (planted with `writable_schema`), the library's own export running such a row (planted by another
/// program), a progress callback of export, backup and encrypt, a pool's writer — and judged by its effect, not by
/// an error: afterwards no new file exists but the ones a typed API was asked for (and none holds the marker in
/// plaintext), the process-wide cipher defaults are unchanged, the temp schema holds no copy, temp_store is not
/// FILE, and the database still opens with its key, holds its rows and passes `cipher_integrity_check` and
/// `integrity_check`.
///
/// Only pairs that can deliver their payload are cases (issue 45): `routeControls` runs every pair of the routes
/// SQL takes on its own on a connection without the guard and requires an effect for each case and none for each
/// pair ``SQLRoute/cannotCarry(_:)`` leaves out with its reason; the routes a typed API runs must show that they
/// ran the payload's statements. A generated column and an index expression are no routes: SQLite refuses a
/// function that is not deterministic there, which `routeControls` also requires.
///
/// Seen failing on the guard before issue 33 (its three reproductions are the `exportSchemaRow` and
/// `columnDefault` routes with `attachEmptyKey` and `attachTextKey`, the `exportProgress` route with
/// `attachEmptyKey` and `cipherDefault`, and `sqlText` with `writableSchemaBrick`).
@Suite("SQL routes: refused, or without effect, whoever runs the statement")
struct SQLRoutesTests {
    typealias Payload = RoutePayload
    typealias Route = SQLRoute

    /// Every pair a route carries: the matrix's cases.
    static let cases: [(Payload, Route)] = Route.allCases.flatMap { route in route.carried.map { ($0, route) } }

    @Test("Refused or without effect", arguments: cases)
    func refusedOrWithoutEffect(payload: Payload, route: Route) throws {
        try Self.check(payload, through: route, under: .sqlcipher4)
    }

    /// Issue 43: every test of the guard ran under SQLCipher 4's defaults, where VACUUM INTO happened to work.
    /// The same routes and payloads under every other configuration of the matrix.
    @Test("Refused or without effect under every other cipher configuration",
          arguments: CipherConfiguration.all.dropFirst(), Route.allCases)
    func refusedOrWithoutEffectUnderEveryConfiguration(configuration: CipherConfiguration, route: Route) throws {
        for payload in route.carried {
            try Self.check(payload, through: route, under: configuration)
        }
    }

    /// The judgement of one payload carried by one route under one configuration: by its effect, read by the
    /// detector (``RouteEffects``) that `routeControls` shows seeing every case's effect without the guard.
    static func check(_ payload: Payload, through route: Route, under configuration: CipherConfiguration) throws {
        let scene = try SQLPromisesTests.Scene(configuration: configuration)
        let label = "\(payload.rawValue) by \(route.rawValue) under \(configuration.name)"
        #expect(try Self.cipherDefaults() == Self.sqlcipher4Defaults, "a process-wide cipher default had changed")
        #expect(Self.processState() == Self.restingProcessState, "process-wide state had changed before \(label)")
        let detector = RouteEffects(folder: scene.folder.path, marker: scene.marker,
                                    rowCount: SQLPromisesTests.Scene.rowCount,
                                    cipherDefaults: { (try? Self.cipherDefaults()) ?? [] })
        let before = detector.before()
        let (asked, attempts) = try Self.run(payload, through: route, scene: scene)
        // The route's own control: it ran the payload's statements (the routes SQL takes alone have theirs in
        // routeControls, on a connection without the guard).
        #expect(attempts > 0, "\(label): the route never ran the payload")
        // A CHECK constraint another program planted (the planted routes) is compiled when the schema loads, and the
        // guarded connection refuses to load that schema at all ("unsafe use of sqlcipher_export()", trusted_schema
        // being off): then its reads are not judged (the file is another program's doing), what it wrote and
        // changed is.
        var planted = false
        if !route.plant(for: payload).isEmpty,
           let error = thrownError({ try scene.db.execute("SELECT count(*) FROM t") }) {
            #expect(error.message.contains("unsafe use of sqlcipher_export()"), "\(label): \(error)")
            // The file is intact: not called corrupt (it was, until SQLCipherError.Kind.unsafeSchema).
            #expect(error.kind == .unsafeSchema && !error.description.contains("corrupt"), "\(label): \(error)")
            planted = true
        }
        var effects = detector.connectionEffects(reads: !planted) { sql in (try? scene.db.textValue(sql)) ?? nil }
        // Closed first, so that WAL frames and journals are where they end up; held-open and temporary files too.
        let findings = try scene.closeAndScan()
        #expect(findings.isEmpty, "\(label): plaintext marker in \(findings)")
        if planted {
            // Opened afresh with the key and settings that wrote it. Read-write, the open itself gets the same typed
            // answer (its first read loads the schema); read-only, SQLite drops CHECK constraints (a read-only
            // connection never writes), so the file opens and reads. detectFormat (read-write when it can be, leaving
            // the folder as found) reports it, not "no format opens it".
            let writing = thrownError { _ = try scene.reopen(mode: .readWrite) }
            #expect(writing?.kind == .unsafeSchema && writing?.description.contains("corrupt") == false
                    && writing?.message.hasPrefix("malformed database schema (c) - unsafe use of ") == true
                    && writing?.sql == nil, "\(label): \(String(describing: writing))")
            #expect(try scene.reopen().scalar(Int.self, "SELECT count(*) FROM t") == SQLPromisesTests.Scene.rowCount)
            if configuration.name == CipherConfiguration.sqlcipher4.name {
                let detecting = thrownError {
                    _ = try Database.detectFormat(path: scene.folder.file("main.db"), key: scene.key)
                }
                #expect(detecting?.kind == .unsafeSchema, "\(label): \(String(describing: detecting))")
            }
        }
        effects += detector.fileEffects(since: before, asked: asked,
                                        allowedCopy: payload == .vacuumInto ? "vacuumed.db" : nil,
                                        reopen: planted ? nil : { name in
            guard let reopened = try? scene.reopen(name) else { return nil }
            return { sql in (try? reopened.textValue(sql)) ?? nil }
        })
        #expect(effects.isEmpty, "\(label): \(effects)")
        if configuration.usesHMAC && !planted {
            for name in ["main.db"] + (payload == .vacuumInto && FileManager.default.fileExists(
                atPath: scene.folder.file("vacuumed.db")) ? ["vacuumed.db"] : []) {
                #expect(try scene.reopen(name).fetchAll("PRAGMA cipher_integrity_check").isEmpty, "\(label): \(name)")
            }
        }
    }

    /// What SQL text could change for the whole process (ReliabilitySupport's ``ProcessState``).
    static func processState() -> ProcessState { ProcessState.current() }

    static let restingProcessState = ProcessState.resting

    /// Seen failing as written first: `data_store_directory` was never seen, because the pragma exists in Windows
    /// builds only; the reading no longer claims to watch it.
    @Test("control: the process-state reading sees each heap limit and folder change (in a child process of its own)")
    func processStateControl() throws {
        let folder = try TemporaryDirectory()
        let child = try HelperProcess(["process-state-control", folder.path])
        var lines: [String] = []
        while let line = child.readLine(timeout: 60) { lines.append(line) }
        _ = child.finish()
        let seen = lines.filter { $0.hasPrefix("seen ") }.map { String($0.dropFirst(5).prefix { $0 != ":" }) }
        #expect(seen == ["hard_heap_limit", "soft_heap_limit", "temp_store_directory"],
                "\(lines)\n\(child.standardError)")
        #expect(child.exitStatus == 0, "\(lines)")
    }


    /// Issue 45: a pair that cannot deliver its payload, whatever the guard does, passes as a case; three routes
    /// of the earlier matrix never could (30 of its 130 cases). So the cases are what this control shows.
    @Test("control: without the guard every case of the SQL routes has its effect, every pair left out has none, and SQLite refuses a generated column and an index expression (ReliabilityHelper route-controls)")
    func routeControls() throws {
        let folder = try TemporaryDirectory()
        let child = try HelperProcess(["route-controls", folder.path])
        var lines: [String] = []
        while let line = child.readLine(timeout: 120) { lines.append(line) }
        _ = child.finish()
        #expect(child.exitStatus == 0, "\(lines)\n\(child.standardError)")
        var hadEffect: [String: Bool] = [:]
        for line in lines {
            if line.hasPrefix("seen ") {
                hadEffect[String(line.dropFirst(5).prefix { $0 != ":" })] = true
            } else if line.hasPrefix("missed ") {
                hadEffect[String(line.dropFirst(7))] = false
            }
        }
        for route in Route.sqlReachable {
            for payload in Payload.allCases where route.takes(payload) {
                let pair = "\(route.rawValue) \(payload.rawValue)"
                guard let effect = hadEffect[pair] else {
                    Issue.record("no control line for \(pair): \(lines)")
                    continue
                }
                if route.controlElsewhere(payload) != nil {
                    continue
                } else if let reason = route.cannotCarry(payload) {
                    #expect(!effect, "\(pair) has an effect without the guard, yet the matrix leaves it out (\(reason)): make it a case")
                } else {
                    #expect(effect, "\(pair) has no effect even without the guard, so as a case it could never fail: replace the route's SQL by one that delivers, or leave the pair out with the reason")
                }
            }
        }
        #expect(hadEffect.count == Route.sqlReachable.map { route in Payload.allCases.filter(route.takes).count }
            .reduce(0, +), "\(hadEffect.keys.sorted())")
        for (name, _, refusal) in Route.refusedBySQLite {
            #expect(lines.contains("refused \(name): \(refusal)"), "\(name): \(lines.filter { $0.contains(name) })")
        }
    }

    /// `statements` on one pool's writer, each in a write of its own, synchronously.
    static func poolWrite(_ statements: [String], path: String, key: Key) throws {
        let pool = try DatabasePool(path: path, key: key)
        for statement in statements {
            _ = try? pool.write { (db: Database) throws -> Void in try db.execute(statement) }
        }
        pool.close()
    }

    @Test("A progress callback inside the export's step runs no SQL on that connection; after it returns, SQL runs")
    func progressInsideStepRunsNoSQL() throws {
        let scene = try SQLPromisesTests.Scene()
        // Enough rows that the export's progress handler fires while sqlcipher_export steps.
        try scene.db.execute("CREATE TABLE bulk(y); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
            + "WHERE i < 100000) INSERT INTO bulk SELECT printf('%0120d', i) FROM n")
        var insideStep: [SQLCipherError.Kind?] = []
        var atEnd: SQLCipherError.Kind?? = .none
        try scene.db.export(to: scene.folder.file("exported.db"), key: scene.key) { fraction in
            // Mid-export, writable_schema is on (SQLCipher's export sets it): this would leave a schema that never
            // parses again, were it run.
            let error = thrownError {
                try scene.db.execute("UPDATE sqlite_master SET sql = 'CREATE TABLE t(' WHERE name = 't'")
            }
            if fraction < 1 { insideStep.append(error?.kind) } else { atEnd = .some(error?.kind) }
        }
        #expect(!insideStep.isEmpty, "the progress handler never fired during the export: grow the table")
        #expect(insideStep.allSatisfy { $0 == .misuse }, "\(insideStep)")
        // After the export returned, the statement meets the guard and the defensive connection: it changes nothing.
        #expect(atEnd != nil)
        scene.db.close()
        let reopened = try Database(path: scene.folder.file("main.db"), key: scene.key, mode: .readOnly)
        #expect(try reopened.textValue("PRAGMA integrity_check") == "ok")
        #expect(try reopened.scalar(Int.self, "SELECT count(*) FROM t") == SQLPromisesTests.Scene.rowCount)
    }

    @Test("encrypt refuses a file whose schema row holds more than its CREATE statement, and writes nothing")
    func encryptRefusesForeignSchemaRows() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("foreign.db")
        // Written by another SQLite (Python's), whose connection is not defensive: a row SQLite still loads (it
        // parses the first statement), followed by an ATTACH that SQLCipher's export would have been handed.
        let script = """
            import sqlite3, sys
            con = sqlite3.connect(sys.argv[1])
            con.execute("CREATE TABLE t(a)")
            con.execute("INSERT INTO t VALUES ('foreign-row')")
            con.execute("PRAGMA writable_schema = ON")
            con.execute("UPDATE sqlite_master SET sql = ? WHERE name = 't'",
                        ("CREATE TABLE t(a); ATTACH '" + sys.argv[2] + "' AS y KEY ''",))
            con.commit()
            con.close()
            """
        let made = try runProcess("/usr/bin/env", ["python3", "-c", script, path, folder.file("attached.db")])
        #expect(made.status == 0, "\(made)")
        let before = try contents(of: path)
        let error = thrownError { try Database.encrypt(path: path, key: .passphrase("foreign")) }
        #expect(error?.kind == .misuse, "\(String(describing: error))")
        #expect(error?.message.contains("schema row of table 't' holds more than one statement") == true,
                "\(String(describing: error))")
        #expect(try contents(of: path) == before, "the source changed")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(files == ["foreign.db"], "\(files)")
    }

    @Test("A schema row that is no CREATE statement is refused before anything is written")
    func untrustedSchemaRows() throws {
        for (type, sql) in [("table", "CREATE TABLE t(a); ATTACH 'x' AS y"), ("view", "CREATE TABLE v(a)"),
                            ("trigger", "ATTACH 'x' AS y"), ("table", "create  table t(a)")] {
            let problem = Database.schemaRowProblem(type: type, sql: sql)
            if sql == "create  table t(a)" {
                #expect(problem == nil, "\(sql)")
            } else {
                #expect(problem != nil, "\(type): \(sql)")
            }
        }
        #expect(Database.schemaRowProblem(
            type: "trigger", sql: "CREATE TRIGGER x AFTER INSERT ON t BEGIN SELECT 1; SELECT 2; END") == nil)
        #expect(Database.schemaRowProblem(type: "index", sql: nil) == nil)
        #expect(Database.schemaRowProblem(type: "table", sql: nil) != nil)
        // A semicolon followed by a combining mark is still a semicolon to SQLite (found by an attacker).
        #expect(Database.schemaRowProblem(type: "table", sql: "CREATE TABLE t(a);\u{301} ATTACH 'x' AS y") != nil)
    }

    @Test("A schema name with a quote followed by a combining mark is quoted as SQLite reads it (found by an attacker): the library's ATTACH and DETACH take it whole, under every cipher configuration",
          arguments: CipherConfiguration.all)
    func quotedNameWithCombiningMark(_ configuration: CipherConfiguration) throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.file("main.db"), key: configuration.makeKey(),
                              configuration: configuration.database())
        let name = "a\"\u{301}b"
        try db.attach(folder.file("other.db"), as: name, key: configuration.makeKey(0x22))
        #expect(try db.fetchAll("PRAGMA database_list").map { try $0.get(1) as String }.contains(name))
        try db.detach(name)
        #expect(!(try db.fetchAll("PRAGMA database_list").map { try $0.get(1) as String }.contains(name)))
        #expect(name.quotedIdentifier.unicodeScalars.filter { $0 == "\"" }.count == 4)
        // The same for an SQL literal (a value's description) and a shell's quotes (a suggested chmod's path).
        #expect(Array(DatabaseValue.text("a'\u{301}b").description.unicodeScalars)
                    == Array("'a''\u{301}b'".unicodeScalars))
        #expect(Array(KeyFileCheck.shellQuoted("a'\u{301}b").unicodeScalars)
                    == Array("'a'\\''\u{301}b'".unicodeScalars))
    }

    // MARK: Routes

    /// Runs `payload` through `route` on the scene's connection, ignoring refusals; returns the files (names in
    /// the scene's folder) that a typed API was asked to write, and how many of the payload's statements the route
    /// tried to run (the route's own control: a route that never runs its payload cannot fail).
    static func run(_ payload: Payload, through route: Route, scene: SQLPromisesTests.Scene) throws
        -> (asked: [String], attempts: Int) {
        let db = scene.db
        let folder = scene.folder.path
        var attempts = 0
        func attempt(_ statements: [String], on connection: Database? = nil) {
            for statement in statements {
                attempts += 1
                _ = try? (connection ?? db).execute(statement.replacingOccurrences(of: "{dir}", with: folder))
            }
        }
        /// A table large enough that an export's progress handler fires while `sqlcipher_export` steps (every
        /// 100,000 instructions), so a callback runs inside the export, where SQLCipher has writable_schema on.
        func growForCallbacks() throws {
            try db.execute("CREATE TABLE bulk(y)")
            try db.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) "
                + "INSERT INTO bulk SELECT printf('%0120d', i) FROM n")
        }
        var asked: [String] = []
        var once = true
        // The first report (inside the export's step when the table is large) and the last (after it).
        var reports = 0
        let callback: (Double) -> Void = { fraction in
            reports += 1
            guard reports == 1 || fraction >= 1 else { return }
            attempt(payload.statements)
        }
        if let script = route.script(for: payload, folder: folder) {
            // Another program's schema objects first (the planted routes), then the route's SQL text: the very
            // statements routeControls runs without the guard.
            let planted = route.plant(for: payload)
            if !planted.isEmpty { try plantWithoutGuard(planted, scene: scene) }
            attempt(script)
            return (asked, attempts)
        }
        switch route {
        case .sqlText, .trigger, .view, .columnDefault, .checkConstraint, .exportSchemaRow, .plantedTrigger,
             .plantedView, .plantedDefault, .plantedCheck:
            Issue.record("\(route) has no script")
        case .poolWriter:
            let pool = try DatabasePool(path: scene.folder.file("main.db"), key: scene.key,
                                        configuration: .init(database: scene.configuration.database()))
            _ = try? pool.write { connection in attempt(payload.statements, on: connection) }
            pool.close()
        case .libraryExportSchemaRow:
            // The library's own export runs main's schema rows: another program (a connection without the guard)
            // plants the payload there, as an attacker's file would hold it, after a CREATE statement that SQLite
            // still loads (it parses the first statement; SQLCipher's export would run them all).
            let row = ("CREATE TABLE zz(x); " + payload.schemaRow.replacingOccurrences(of: "{dir}", with: folder))
                .replacingOccurrences(of: "'", with: "''")
            try plantWithoutGuard(["CREATE TABLE zz(x)", "PRAGMA writable_schema = ON",
                                   "UPDATE sqlite_schema SET sql = '\(row)' WHERE name = 'zz'",
                                   "PRAGMA writable_schema = OFF"], scene: scene)
            attempts += 1
            asked.append("exported.db")
            if (try? db.export(to: scene.folder.file("exported.db"), key: scene.key,
                               cipher: scene.configuration.cipher)) == nil { asked.removeAll() }
        case .exportProgress:
            try growForCallbacks()
            asked.append("exported.db")
            if (try? db.export(to: scene.folder.file("exported.db"), key: scene.key,
                               cipher: scene.configuration.cipher, progress: callback)) == nil {
                asked.removeAll()
            }
        case .backupProgress:
            asked.append("backup.db")
            if (try? db.backup(to: scene.folder.file("backup.db"), key: scene.key, progress: callback)) == nil {
                asked.removeAll()
            }
        case .encryptProgress:
            // A plaintext file encrypted in place; its progress callback runs the payload on the source connection
            // the library keeps: nothing it can reach is the scene's database, whose folder must stay unchanged.
            let plain = scene.folder.file("import.db")
            let source = try Database(unencryptedPath: plain)
            try source.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
            source.close()
            asked.append("import.db")
            try Database.encrypt(path: plain, key: scene.key, cipher: scene.configuration.cipher) { _ in
                guard once else { return }
                once = false
                attempt(payload.statements)
            }
        }
        return (asked, attempts)
    }

    /// Runs `statements` on the scene's database from a second connection through SQLite's C API (no guard, as
    /// another program would write the file), keyed with the scene's key and settings; records an issue when one
    /// fails.
    static func plantWithoutGuard(_ statements: [String], scene: SQLPromisesTests.Scene) throws {
        var raw: OpaquePointer?
        guard sqlite3_open_v2(scene.folder.file("main.db"), &raw, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
            Issue.record("cannot open the scene's database through the C API")
            return
        }
        defer { sqlite3_close_v2(raw) }
        _ = scene.key.material.withUnsafeBytes { bytes in sqlite3_key_v2(raw, "main", bytes.baseAddress,
                                                                          Int32(bytes.count)) }
        for statement in scene.configuration.cipher.pragmas(schema: "main") + statements {
            var message: UnsafeMutablePointer<CChar>?
            let code = sqlite3_exec(raw, statement, nil, nil, &message)
            #expect(code == SQLITE_OK, "planting \(statement): \(message.map { String(cString: $0) } ?? "")")
            sqlite3_free(message)
        }
    }

    /// SQLCipher 4's process-wide defaults, as `cipherDefaults()` reads them. Fixed values, not a snapshot: the
    /// cases run in parallel in one process, and a snapshot taken after another case changed a default would hide it.
    static let sqlcipher4Defaults: [String?] = ["256000", "4096", "1", "0"]

    /// Process-wide cipher defaults, read on a fresh connection.
    static func cipherDefaults() throws -> [String?] {
        let db = try Database(unencryptedPath: ":memory:")
        return try ["cipher_default_kdf_iter", "cipher_default_page_size", "cipher_default_use_hmac",
                    "cipher_default_plaintext_header_size"].map { try db.textValue("PRAGMA \($0)") }
    }
}
