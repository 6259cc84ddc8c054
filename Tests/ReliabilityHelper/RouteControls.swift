#if canImport(Glibc)
import Glibc
#endif
import CSQLCipher
import Foundation
import ReliabilitySupport
import SQLCipherKit

/// `route-controls FOLDER`: the positive controls of `SQLRoutesTests` (issue 45). For every route SQL text takes on
/// its own and every payload, in this child process (a payload may change the whole process), it runs the route's
/// SQL (``SQLRoute/script(for:folder:)``, the very statements the guarded test runs) on a connection *without* the
/// guard: SQLite's C API, no authorizer, `trusted_schema` on, not defensive, and SQLCipherKit's export gate opened
/// before each statement. It then looks for the effects `SQLRoutesTests` looks for, and prints one line per pair:
///   `seen ROUTE PAYLOAD: EFFECTS` or `missed ROUTE PAYLOAD`
/// and one per SQL that SQLite refuses whatever the guard does (``SQLRoute/refusedBySQLite``):
///   `refused NAME: SQLITE'S MESSAGE` or `ran NAME`.
/// The test compares these lines with the lists in ``SQLRoute``; the exit status is 0 when every case ran.
enum RouteControls {
    static let rowCount = 100
    static let marker = "route-control-marker"
    static let rawKey = "x'" + String(repeating: "3c", count: 32) + "'"

    static func run(_ arguments: [String]) -> Never {
        guard let root = arguments.first else { fail(usage: "route-controls FOLDER") }
        for route in SQLRoute.sqlReachable {
            for payload in RoutePayload.allCases where route.takes(payload) {
                let folder = "\(root)/\(route.rawValue)-\(payload.rawValue)"
                guard mkdir(folder, 0o700) == 0 else { fail("cannot make \(folder)") }
                let effects = effects(of: payload, through: route, folder: folder)
                report(effects.isEmpty ? "missed \(route.rawValue) \(payload.rawValue)"
                       : "seen \(route.rawValue) \(payload.rawValue): \(effects.joined(separator: "; "))")
            }
        }
        for (name, sql, _) in SQLRoute.refusedBySQLite {
            let folder = "\(root)/\(name)"
            guard mkdir(folder, 0o700) == 0 else { fail("cannot make \(folder)") }
            let db = open(makeDatabase(in: folder))
            permitExport(db)
            if sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK {
                report("ran \(name)")
            } else {
                report("refused \(name): \(String(cString: sqlite3_errmsg(db)))")
            }
            sqlite3_close_v2(db)
        }
        exit(0)
    }

    /// A keyed database with `rowCount` marker rows in `t`, in `folder`; its path.
    static func makeDatabase(in folder: String) -> String {
        let path = folder + "/main.db"
        let db = open(path)
        guard sqlite3_exec(db, "CREATE TABLE t(x); BEGIN", nil, nil, nil) == SQLITE_OK else { fail("cannot create t") }
        for index in 0..<rowCount {
            let row = "\(marker)-\(index)-" + String(repeating: "p", count: 200)
            guard sqlite3_exec(db, "INSERT INTO t VALUES ('\(row)')", nil, nil, nil) == SQLITE_OK else {
                fail("cannot insert")
            }
        }
        guard sqlite3_exec(db, "COMMIT", nil, nil, nil) == SQLITE_OK else { fail("cannot commit") }
        sqlite3_close_v2(db)
        return path
    }

    /// A connection without the guard, keyed with the fixed raw key (SQLCipher 4's settings).
    static func open(_ path: String) -> OpaquePointer? {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            fail("cannot open \(path)")
        }
        guard sqlite3_key_v2(db, nil, rawKey, Int32(rawKey.utf8.count)) == SQLITE_OK else { fail("cannot key") }
        return db
    }

    /// Opens SQLCipherKit's export gate (the pin's local change `sqlcipher-export-gate`) for one call.
    static func permitExport(_ db: OpaquePointer?) {
        sqlite3_set_clientdata(db, "sqlcipherkit_export", UnsafeMutableRawPointer(bitPattern: 1), nil)
    }

    static func text(_ db: OpaquePointer?, _ sql: String) -> String? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { return nil }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
        return sqlite3_column_text(statement, 0).map { String(cString: $0) }
    }

    static func cipherDefaults() -> [String?] {
        var db: OpaquePointer?
        _ = sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, nil)
        defer { sqlite3_close_v2(db) }
        return ["cipher_default_kdf_iter", "cipher_default_page_size", "cipher_default_use_hmac",
                "cipher_default_plaintext_header_size"].map { text(db, "PRAGMA \($0)") }
    }

    /// Puts back what a payload changed for the whole process (the heap limits, the temporary folder, the cipher
    /// defaults), so that the next pair starts from rest.
    static func restoreProcess() {
        sqlite3_hard_heap_limit64(0)
        sqlite3_soft_heap_limit64(0)
        var db: OpaquePointer?
        _ = sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, nil)
        _ = sqlite3_exec(db, "PRAGMA temp_store_directory = ''; PRAGMA cipher_default_kdf_iter = 256000; "
                         + "PRAGMA cipher_default_page_size = 4096; PRAGMA cipher_default_use_hmac = ON", nil, nil, nil)
        sqlite3_close_v2(db)
    }

    /// What `SQLRoutesTests.check` looks for (the same detector, ``RouteEffects``), after `payload` went through
    /// `route` on a connection without the guard.
    static func effects(of payload: RoutePayload, through route: SQLRoute, folder: String) -> [String] {
        guard let script = route.script(for: payload, folder: folder) else { fail("\(route) is not SQL's own") }
        let path = makeDatabase(in: folder)
        let planted = route.plant(for: payload)
        if !planted.isEmpty {
            // Another program's schema objects, written before the control's connection opens.
            let planter = open(path)
            for statement in planted where sqlite3_exec(planter, statement, nil, nil, nil) != SQLITE_OK {
                fail("cannot plant \(statement): \(String(cString: sqlite3_errmsg(planter)))")
            }
            sqlite3_close_v2(planter)
        }
        let detector = RouteEffects(folder: folder, marker: marker, rowCount: rowCount, cipherDefaults: cipherDefaults)
        let before = detector.before()
        let db = open(path)
        guard text(db, "SELECT count(*) FROM t") == "\(rowCount)" else { fail("the control's database does not read") }
        for statement in script {
            permitExport(db)
            _ = sqlite3_exec(db, statement, nil, nil, nil)
        }
        var effects = detector.connectionEffects { text(db, $0) }
        sqlite3_close_v2(db)
        var reopened: [OpaquePointer?] = []
        effects += detector.fileEffects(since: before, asked: [],
                                        allowedCopy: payload == .vacuumInto ? "vacuumed.db" : nil) { name in
            let connection = open(folder + "/" + name)
            reopened.append(connection)
            return { text(connection, $0) }
        }
        reopened.forEach { sqlite3_close_v2($0) }
        restoreProcess()
        return effects
    }
}
