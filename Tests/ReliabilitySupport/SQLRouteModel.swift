// MIT License, The SQLCipherKit authors.

/// The routes matrix's model (issue 45): what SQL text tries to have run (a ``RoutePayload``), and who runs it (a
/// ``SQLRoute``). `SQLRoutesTests` carries each pair on a guarded connection and requires no effect;
/// `ReliabilityHelper route-controls` carries the same SQL on a connection without the guard and requires an
/// effect, so that a pair that could never deliver its payload (whatever the guard did) cannot pass as a case.
public enum RoutePayload: String, CaseIterable, Sendable {
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

    /// The statements, `{dir}` standing for the test folder. Every statement is tried on its own.
    public var statements: [String] {
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

    /// The one statement a schema row holds (SQLCipher's export runs the first statement of each row): the
    /// statement that has the effect. The brick's `UPDATE` needs `writable_schema`, which SQLCipher's export turns
    /// on while it runs the rows.
    public var schemaRow: String {
        self == .writableSchemaBrick || self == .vacuumInto ? statements[1] : statements[0]
    }
}

/// Who runs a payload.
public enum SQLRoute: String, CaseIterable, Sendable {
    /// The caller's SQL text, on the connection.
    case sqlText
    /// A pool's writer, in the body of a `write`.
    case poolWriter
    /// A trigger's body, fired by an `INSERT`.
    case trigger
    /// A view's column, read by a `SELECT`.
    case view
    /// A column `DEFAULT`, evaluated by an `INSERT` (SQLite never shows the authorizer a function there).
    case columnDefault
    /// A CHECK constraint, evaluated by an `INSERT` (SQLite allows functions that are not deterministic there).
    case checkConstraint
    /// A schema row of temp that `sqlcipher_export('main', 'temp')` runs, the export called from SQL text.
    case exportSchemaRow
    /// A schema row of main, planted by another program, that the library's own export runs.
    case libraryExportSchemaRow
    /// Schema objects another program wrote into the file (a trigger, a view, a column `DEFAULT`, a CHECK
    /// constraint), which the caller's innocent SQL (an `INSERT`, a `SELECT`) sets off: the guard never sees their
    /// SQL compiled as SQL text, so only the engine's defenses (`trusted_schema` off, the export gate) hold.
    case plantedTrigger, plantedView, plantedDefault, plantedCheck
    /// The progress callback of the library's export, backup and encrypt.
    case exportProgress, backupProgress, encryptProgress

    /// The routes that SQL text takes on its own (no typed API runs them): the helper's `route-controls` runs
    /// these on a connection without the guard.
    public static let sqlReachable: [SQLRoute] = [.sqlText, .trigger, .view, .columnDefault, .checkConstraint,
                                                   .exportSchemaRow, .plantedTrigger, .plantedView, .plantedDefault,
                                                   .plantedCheck]

    /// Whether the route's SQL depends on the payload at all: the planted routes carry only the export into temp.
    public func takes(_ payload: RoutePayload) -> Bool {
        plant(for: payload).isEmpty || payload == .exportToTemp
    }

    /// What another program writes into the file before the route runs (the planted routes' schema objects), run
    /// on a connection without the guard; empty for every other route.
    public func plant(for payload: RoutePayload) -> [String] {
        let export = "sqlcipher_export('temp')"
        switch self {
        case .plantedTrigger:
            return ["CREATE TABLE fire(x)", "CREATE TRIGGER fire_t AFTER INSERT ON fire BEGIN SELECT \(export); END"]
        case .plantedView:
            return ["CREATE VIEW v AS SELECT \(export) AS r"]
        case .plantedDefault:
            return ["CREATE TABLE d(a, b DEFAULT (\(export)))"]
        case .plantedCheck:
            return ["CREATE TABLE c(a CHECK ((\(export)) IS NULL))"]
        default:
            return []
        }
    }

    /// The statements (the payload's, with `{dir}` replaced by `folder`) that SQL text runs to take this route,
    /// each tried on its own; nil for the routes a typed API runs. A route that can only call a function calls
    /// the export of a temp schema row that holds the payload (planted with `writable_schema`), or the export
    /// itself when that is the payload.
    public func script(for payload: RoutePayload, folder: String) -> [String]? {
        func fill(_ text: String) -> String { text.replacingOccurrences(of: "{dir}", with: folder) }
        var plant: [String] = []
        var call = "sqlcipher_export('temp')"
        if payload != .exportToTemp {
            let row = fill(payload.schemaRow).replacingOccurrences(of: "'", with: "''")
            plant = ["CREATE TEMP TABLE zz(x)", "PRAGMA writable_schema = ON",
                     "UPDATE temp.sqlite_schema SET sql = '\(row)' WHERE name = 'zz'", "PRAGMA writable_schema = OFF"]
            call = "sqlcipher_export('main', 'temp')"
        }
        switch self {
        case .sqlText:
            return payload.statements.map(fill)
        case .plantedTrigger:
            return ["INSERT INTO fire VALUES (1)"]
        case .plantedView:
            return ["SELECT * FROM v"]
        case .plantedDefault:
            return ["INSERT INTO d(a) VALUES (1)"]
        case .plantedCheck:
            return ["INSERT INTO c VALUES (1)"]
        case .trigger:
            return plant + ["CREATE TABLE fire(x)",
                            "CREATE TRIGGER fire_t AFTER INSERT ON fire BEGIN SELECT \(call); END",
                            "INSERT INTO fire VALUES (1)"]
        case .view:
            return plant + ["CREATE VIEW v AS SELECT \(call) AS r", "SELECT * FROM v"]
        case .columnDefault:
            return plant + ["CREATE TABLE d(a, b DEFAULT (\(call)))", "INSERT INTO d(a) VALUES (1)"]
        case .checkConstraint:
            // Not `CHECK (… IS NULL OR 1)`: SQLite folds that to true and never calls the function.
            return plant + ["CREATE TABLE c(a CHECK ((\(call)) IS NULL))", "INSERT INTO c VALUES (1)"]
        case .exportSchemaRow:
            return plant + ["SELECT \(call)"]
        case .poolWriter, .libraryExportSchemaRow, .exportProgress, .backupProgress, .encryptProgress:
            return nil
        }
    }

    /// SQL that cannot take a payload whatever the guard does, with SQLite's reason: the routes that were in the
    /// matrix and never delivered (issue 45). `route-controls` runs each on a connection without the guard and
    /// requires SQLite's refusal, so that a change of SQLite's that opened one brings it back into the matrix.
    public static let refusedBySQLite: [(name: String, sql: String, refusal: String)] = [
        ("generatedColumn", "CREATE TABLE g(a, b AS (sqlcipher_export('main', 'temp')) STORED)",
         "non-deterministic functions prohibited in generated columns"),
        ("indexExpression", "CREATE INDEX i_x ON t((sqlcipher_export('main', 'temp')))",
         "non-deterministic functions prohibited in index expressions"),
    ]

    /// The pairs this route does not carry, each with the reason it cannot (measured by `route-controls`: without
    /// the guard each of the SQL routes' pairs here shows no effect, and every other shows one). `SQLRoutesTests`
    /// runs every other pair; these are judged where they can have an effect, as each reason says.
    public func cannotCarry(_ payload: RoutePayload) -> String? {
        let functionRoutes: [SQLRoute] = [.trigger, .view, .columnDefault, .checkConstraint, .exportSchemaRow]
        if !takes(payload) {
            return "another program's schema object can only call a function, and the one that acts is the export: "
                + "into temp is all it reaches from a schema (SQL text attaches nothing, and temp's schema rows cannot "
                + "be planted from another connection), which the exportToTemp case carries"
        }
        switch payload {
        case .cipherSetting, .pageSize:
            return "SQLCipher takes cipher settings (and page_size, which it applies as cipher_page_size on a keyed "
                + "database) only before a connection's first read, and every route here runs on a connection that "
                + "has read its database: GuardSpellingTests judges these families on fresh databases, by effect"
        case .endTransaction:
            return "this matrix has no library transaction to end and no check that would see one ended: "
                + "CipherConfigurationMatrixTests.poolKeepsItsTransactions judges COMMIT, ROLLBACK and END inside a "
                + "pool's write and a writer session, by effect, under every configuration"
        case .tempStoreFile, .vacuumIntoKeyedURI, .vacuumInto:
            guard functionRoutes.contains(self) else { return nil }
            return "the export runs the schema row while the statement that called it steps, and SQLite refuses "
                + "VACUUM and a temp_store change while a statement runs"
        case .writableSchemaBrick:
            guard [.trigger, .columnDefault, .checkConstraint].contains(self) else { return nil }
            return "measured without the guard: the schema row's UPDATE of sqlite_master leaves the schema as it was "
                + "when the export runs inside an INSERT (SQLite's reason not analysed; the view and export routes "
                + "carry this payload)"
        default:
            return nil
        }
    }

    /// A case whose effect the guard does not decide, so that no connection without the guard shows it here: its
    /// control runs elsewhere in every test command, as the reason says.
    public func controlElsewhere(_ payload: RoutePayload) -> String? {
        guard payload == .vacuumInto, cannotCarry(payload) == nil else { return nil }
        return "VACUUM INTO is allowed; the copy went wrong in the engine (issue 43: a heap overflow at page sizes "
            + "other than 4096, which the routes run under every configuration), and Tests/Sanitized's control "
            + "draws that overflow from upstream's amalgamation in every run"
    }

    /// The payloads this route carries.
    public var carried: [RoutePayload] { RoutePayload.allCases.filter { cannotCarry($0) == nil } }
}
