import Foundation
import ProcessTestSupport
@testable import SQLCipherKit
import ReliabilitySupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The guard's missing dimension: *who runs the statement*. `SQLPromisesTests` and the generative spelling test
/// vary how a refused statement is spelled; here every refused family (those of the spelling test, and a schema
/// that no longer parses) is carried by every route SQL can take on the caller's behalf — a trigger, a view, a
/// column DEFAULT, a CHECK constraint, a generated column, an index expression, a schema row that SQLCipher's
/// export runs (planted with `writable_schema`), the library's own export running such a row, a progress callback
/// of export, backup and encrypt, a pool's writer — and judged by its effect, not by an error: afterwards no new
/// file exists but the ones a typed API was asked for (and none holds the marker in plaintext), the process-wide
/// cipher defaults are unchanged, the temp schema holds no copy, temp_store is not FILE, and the database still
/// opens with its key, holds its rows and passes `cipher_integrity_check` and `integrity_check`.
///
/// Seen failing on the guard before issue 33 (its three reproductions are the `exportSchemaRow` and
/// `columnDefault` routes with `attachEmptyKey` and `attachTextKey`, the `exportProgress` route with
/// `attachEmptyKey` and `cipherDefault`, and `sqlText` with `writableSchemaBrick`).
@Suite("SQL routes: refused, or without effect, whoever runs the statement")
struct SQLRoutesTests {
    /// A refused family: one statement the caller's SQL tries to have run.
    enum Payload: String, CaseIterable, CustomTestStringConvertible, Sendable {
        /// A plaintext copy of the data through an attachment.
        case attachEmptyKey
        /// A database keyed from SQL text.
        case attachTextKey
        /// A process-wide cipher default (every later database).
        case cipherDefault
        /// The connection's key changed from SQL text.
        case rekeyPragma
        /// A schema that no longer parses: the database would never open again.
        case writableSchemaBrick
        /// The whole database copied into another schema.
        case exportToTemp
        /// A cipher setting of the open database (its pages would no longer read).
        case cipherSetting
        /// `page_size` on the keyed main database, which SQLCipher applies as `cipher_page_size`.
        case pageSize
        /// Temporary files, which SQLCipher does not encrypt.
        case tempStoreFile
        /// A `VACUUM INTO` copy keyed from a URI (an empty `key=` writes it in plaintext).
        case vacuumIntoKeyedURI
        /// A `VACUUM INTO` copy with a small cache, so its pages are read back through the codec (issue 43: on
        /// settings other than SQLCipher 4's it overflowed the heap, wrote heap memory into the copy, and the copy
        /// never opened). Allowed on the writer: the copy must open with the database's key and settings.
        case vacuumInto
        /// Process-wide state from SQL text: heap limits and the temporary and data folders of every connection.
        case processWide
        /// The transaction the library opened, ended from SQL text (a pool's reader and writer, a writer session).
        case endTransaction

        var testDescription: String { rawValue }

        /// The statements, `{dir}` standing for the test folder. Every statement is tried on its own.
        var statements: [String] {
            switch self {
            case .attachEmptyKey:
                ["ATTACH '{dir}/plain.db' AS p KEY ''", "CREATE TABLE p.leak AS SELECT * FROM main.t"]
            case .attachTextKey:
                ["ATTACH '{dir}/keyed.db' AS k KEY 'secret-key-in-sql'", "CREATE TABLE k.leak AS SELECT * FROM main.t"]
            case .cipherDefault:
                ["PRAGMA cipher_default_kdf_iter = 1"]
            case .rekeyPragma:
                ["PRAGMA rekey = 'secret-key-in-sql'"]
            case .writableSchemaBrick:
                ["PRAGMA writable_schema = ON", "UPDATE sqlite_master SET sql = 'CREATE TABLE t(' WHERE name = 't'",
                 "PRAGMA writable_schema = OFF"]
            case .exportToTemp:
                ["SELECT sqlcipher_export('temp')"]
            case .cipherSetting:
                ["PRAGMA cipher_use_hmac = OFF", "PRAGMA cipher_page_size = 1024"]
            case .pageSize:
                ["PRAGMA main.page_size = 1024", "VACUUM"]
            case .tempStoreFile:
                ["PRAGMA temp_store = FILE"]
            case .vacuumIntoKeyedURI:
                ["VACUUM INTO 'file:{dir}/vacuumed.db?key='"]
            case .vacuumInto:
                ["PRAGMA cache_size = 3", "VACUUM INTO '{dir}/vacuumed.db'"]
            case .processWide:
                ["PRAGMA hard_heap_limit = 300000", "PRAGMA soft_heap_limit = 300000",
                 "PRAGMA temp_store_directory = '{dir}'", "PRAGMA data_store_directory = '{dir}'"]
            case .endTransaction:
                ["COMMIT", "ROLLBACK", "END", "BEGIN"]
            }
        }

        /// The one statement a schema row can hold (SQLCipher's export runs the first statement of each row).
        var schemaRow: String { statements[0] }
    }

    /// Who runs the payload.
    enum Route: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case sqlText, poolWriter
        case trigger, view, columnDefault, checkConstraint, generatedColumn, indexExpression
        case exportSchemaRow, libraryExportSchemaRow
        case exportProgress, backupProgress, encryptProgress

        var testDescription: String { rawValue }
    }

    @Test("Refused or without effect", arguments: Payload.allCases, Route.allCases)
    func refusedOrWithoutEffect(payload: Payload, route: Route) throws {
        try Self.check(payload, through: route, under: .sqlcipher4)
    }

    /// Issue 43: every test of the guard ran under SQLCipher 4's defaults, where VACUUM INTO happened to work.
    /// The same routes and payloads under every other configuration of the matrix.
    @Test("Refused or without effect under every other cipher configuration",
          arguments: CipherConfiguration.all.dropFirst(), Route.allCases)
    func refusedOrWithoutEffectUnderEveryConfiguration(configuration: CipherConfiguration, route: Route) throws {
        for payload in Payload.allCases {
            try Self.check(payload, through: route, under: configuration)
        }
    }

    /// The judgement of one payload carried by one route under one configuration: by its effect.
    static func check(_ payload: Payload, through route: Route, under configuration: CipherConfiguration) throws {
        let scene = try SQLPromisesTests.Scene(configuration: configuration)
        let label = "\(payload.rawValue) by \(route.rawValue) under \(configuration.name)"
        #expect(try Self.cipherDefaults() == Self.sqlcipher4Defaults, "a process-wide cipher default had changed")
        #expect(Self.processState() == Self.restingProcessState, "process-wide state had changed before \(label)")
        let asked = try Self.run(payload, through: route, scene: scene)
        #expect(Self.processState() == Self.restingProcessState, "process-wide state changed: \(label)")
        // The connection: no copy in temp, still reading its rows.
        #expect(try scene.db.scalar(Int.self, "SELECT count(*) FROM temp.sqlite_schema WHERE name = 't'") == 0,
                "the export copied the database into temp")
        #expect(try scene.db.scalar(Int.self, "PRAGMA temp_store") != 1, "temp_store is FILE")
        #expect(try scene.db.scalar(Int.self, "SELECT count(*) FROM t") == SQLPromisesTests.Scene.rowCount,
                "the open connection no longer reads its rows")
        // A VACUUM INTO copy, the one file SQL text may write: it must open with the database's key and settings.
        var files = try FileManager.default.contentsOfDirectory(atPath: scene.folder.path)
            .filter { !$0.hasPrefix("main.db") }.sorted()
        let vacuumed = payload == .vacuumInto && files.contains("vacuumed.db")
        if vacuumed { files.removeAll { $0 == "vacuumed.db" } }
        #expect(files == asked.sorted(), "\(label): files written: \(files), asked for through a typed API: \(asked)")
        let findings = try scene.closeAndScan()
        #expect(findings.isEmpty, "\(label): plaintext marker in \(findings)")
        #expect(try Self.cipherDefaults() == Self.sqlcipher4Defaults, "a process-wide cipher default changed")
        // The database, and a VACUUM INTO copy, open with the key and settings, hold the rows, and check out.
        for name in ["main.db"] + (vacuumed ? ["vacuumed.db"] : []) {
            let reopened = try scene.reopen(name)
            #expect(try reopened.scalar(Int.self, "SELECT count(*) FROM t") == SQLPromisesTests.Scene.rowCount,
                    "\(label): \(name)")
            #expect(try reopened.textValue("PRAGMA integrity_check") == "ok", "\(label): \(name)")
            if configuration.usesHMAC {
                #expect(try reopened.fetchAll("PRAGMA cipher_integrity_check").isEmpty, "\(label): \(name)")
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
    }

    // MARK: Routes

    /// Runs `payload` through `route` on the scene's connection, ignoring refusals; returns the files (names in
    /// the scene's folder) that a typed API was asked to write.
    static func run(_ payload: Payload, through route: Route, scene: SQLPromisesTests.Scene) throws -> [String] {
        let db = scene.db
        let folder = scene.folder.path
        func attempt(_ statements: [String], on connection: Database? = nil) {
            for statement in statements {
                _ = try? (connection ?? db).execute(statement.replacingOccurrences(of: "{dir}", with: folder))
            }
        }
        /// The payload as a temp schema row that `sqlcipher_export('main', 'temp')` runs.
        func plantRow() {
            let row = payload.schemaRow.replacingOccurrences(of: "{dir}", with: folder)
                .replacingOccurrences(of: "'", with: "''")
            attempt(["CREATE TEMP TABLE zz(x)", "PRAGMA writable_schema = ON",
                     "UPDATE temp.sqlite_schema SET sql = '\(row)' WHERE name = 'zz'", "PRAGMA writable_schema = OFF"])
        }
        /// What a route that can only call a function runs: the payload when it is the export, else the export of
        /// a planted row.
        func exportCall() -> String {
            if payload == .exportToTemp { return "sqlcipher_export('temp')" }
            plantRow()
            return "sqlcipher_export('main', 'temp')"
        }
        /// A table large enough that an export's progress handler fires while `sqlcipher_export` steps (every
        /// 100,000 instructions), so a callback runs inside the export, where SQLCipher has writable_schema on.
        func growForCallbacks() {
            attempt(["CREATE TABLE bulk(y)", "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                     + "WHERE i < 100000) INSERT INTO bulk SELECT printf('%0120d', i) FROM n"])
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
        switch route {
        case .sqlText:
            attempt(payload.statements)
        case .poolWriter:
            let pool = try DatabasePool(path: scene.folder.file("main.db"), key: scene.key,
                                        configuration: .init(database: scene.configuration.database()))
            _ = try? pool.write { connection in attempt(payload.statements, on: connection) }
            pool.close()
        case .trigger:
            let call = exportCall()
            attempt(["CREATE TABLE fire(x)", "CREATE TRIGGER fire_t AFTER INSERT ON fire BEGIN SELECT \(call); END",
                     "INSERT INTO fire VALUES (1)"])
        case .view:
            let call = exportCall()
            attempt(["CREATE VIEW v AS SELECT \(call) AS r", "SELECT * FROM v"])
        case .columnDefault:
            let call = exportCall()
            attempt(["CREATE TABLE d(a, b DEFAULT (\(call)))", "INSERT INTO d(a) VALUES (1)"])
        case .checkConstraint:
            let call = exportCall()
            attempt(["CREATE TABLE c(a CHECK (\(call) IS NULL OR 1))", "INSERT INTO c VALUES (1)"])
        case .generatedColumn:
            let call = exportCall()
            attempt(["CREATE TABLE g(a, b AS (\(call)) STORED)", "INSERT INTO g(a) VALUES (1)"])
        case .indexExpression:
            let call = exportCall()
            attempt(["CREATE TABLE i(a)", "CREATE INDEX i_x ON i((\(call)))", "INSERT INTO i VALUES (1)"])
        case .exportSchemaRow:
            let call = exportCall()
            attempt(["SELECT \(call)"])
        case .libraryExportSchemaRow:
            // The library's own export runs main's schema rows: plant the payload there.
            let row = payload.schemaRow.replacingOccurrences(of: "{dir}", with: folder)
                .replacingOccurrences(of: "'", with: "''")
            attempt(["CREATE TABLE zz(x)", "PRAGMA writable_schema = ON",
                     "UPDATE sqlite_schema SET sql = '\(row)' WHERE name = 'zz'", "PRAGMA writable_schema = OFF"])
            asked.append("exported.db")
            if (try? db.export(to: scene.folder.file("exported.db"), key: scene.key,
                               cipher: scene.configuration.cipher)) == nil { asked.removeAll() }
        case .exportProgress:
            growForCallbacks()
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
        return asked
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
