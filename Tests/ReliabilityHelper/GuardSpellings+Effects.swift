#if canImport(Glibc)
import Glibc
#endif
import CSQLCipher
import Foundation
import SQLCipherKit

extension GuardSpellings {
    /// The rows of the template database; every case starts from a copy of it.
    static let rowCount = 60
    /// SQLCipher's log, in the work folder.
    static let logName = "cipher.log"

    /// The cipher state a cipher pragma could change, read back with SQLCipher's own pragmas.
    static let cipherState = ["cipher_settings", "cipher_salt", "cipher_hmac_pgno", "cipher_hmac_salt_mask",
                              "fast_kdf_iter", "cipher_status"]
    /// The process-wide cipher state, restored after every case that changed it (memory security can only be
    /// turned on: its one case runs last).
    static let processState = ["cipher_default_settings", "cipher_hmac_salt_mask", "cipher_memory_security"]

    /// What every case shares: the folder, the key (as a ``Key`` and as SQLCipher's raw-key text for the C API)
    /// and the process-wide state to restore.
    final class Context {
        let folder: String
        let key: Key
        let rawKey: String
        var processBaseline: [String] = []
        var template: [UInt8] = []

        init(folder: String, key: Key, rawKey: String) {
            self.folder = folder
            self.key = key
            self.rawKey = rawKey
        }

        func makeTemplate() throws {
            let path = folder + "/template.db"
            let db = try Database(path: path, key: key, configuration: .init(cipher: GuardSpellings.configuration.settings))
            try db.execute("CREATE TABLE t(x)")
            try db.transaction {
                for index in 0..<GuardSpellings.rowCount {
                    try db.execute("INSERT INTO t VALUES (?)", ["template-row-\(index)-" + String(repeating: "r", count: 300)])
                }
            }
            db.close()
            template = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            let raw = RawConnection(path: path, key: rawKey)
            processBaseline = GuardSpellings.processState.map { raw.rows("PRAGMA \($0)") }
            // SQLCipher logs every call of sqlite3_key_v2 and sqlite3_rekey_v2 at DEBUG: the log is how a case
            // sees that SQL handed key material to SQLCipher, whatever it then did with it.
            guard raw.execute("PRAGMA cipher_log = '\(logPath)'; PRAGMA cipher_log_level = DEBUG; "
                + "PRAGMA cipher_log_source = CORE") else { fail("cannot turn SQLCipher's log on") }
        }

        var logPath: String { folder + "/" + GuardSpellings.logName }

        /// Whether SQLCipher's keying functions were called while `body` ran (SQLCipher's log, flushed).
        func keyingCalls(during body: () -> Void) -> Bool {
            fflush(nil)
            let start = (try? FileManager.default.attributesOfItem(atPath: logPath)[.size] as? Int) ?? 0
            body()
            fflush(nil)
            guard let handle = FileHandle(forReadingAtPath: logPath) else { fail("no SQLCipher log") }
            defer { try? handle.close() }
            try? handle.seek(toOffset: UInt64(start))
            let added = String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
            return added.contains("sqlite3_key_v2: ") || added.contains("sqlite3_rekey_v2: ")
        }

        /// A fresh copy of the template (or an empty path, for page_size), the files of earlier cases gone.
        func freshDatabase(index: Int, side: String, empty: Bool) -> String {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            where name != "template.db" && name != GuardSpellings.logName {
                _ = unlink(folder + "/" + name)
            }
            let path = "\(folder)/case-\(index)-\(side).db"
            if !empty { _ = FileManager.default.createFile(atPath: path, contents: Data(template)) }
            return path
        }

        // MARK: The unguarded connection

        /// The spelling's effect on a connection with no authorizer, read back as described in GuardSpellings.
        func oracle(_ spelling: Spelling, index: Int) -> Effect {
            defer { restoreProcessState() }
            switch spelling.family {
            case .alwaysRefused:
                return .none
            case .key:
                // After the open's first read, as SQLCipherKit opens: did the SQL hand key material to
                // SQLCipher's keying functions (whatever they then did with it)?
                let db = RawConnection(path: freshDatabase(index: index, side: "oracle", empty: false), key: rawKey)
                _ = db.text("SELECT count(*) FROM t")
                return keyingCalls { _ = db.execute(spelling.sql) } ? .acted("called SQLCipher's keying functions") : .none
            case .tempStore:
                let db = RawConnection(path: freshDatabase(index: index, side: "oracle", empty: false), key: rawKey)
                _ = db.text("SELECT count(*) FROM t")
                _ = db.execute(spelling.sql)
                return db.text("PRAGMA temp_store") == "1" ? .acted("set temp_store to FILE") : .none
            case .cipher, .cipherCurrentValue:
                // On a new database, where every setting still takes effect (on a database with pages some,
                // the page size among them, are ignored after the first read).
                let db = RawConnection(path: freshDatabase(index: index, side: "oracle", empty: true), key: rawKey)
                _ = db.text("SELECT count(*) FROM sqlite_schema")
                let before = cipherSnapshot(db.rows)
                _ = db.execute(spelling.sql)
                let reads = db.text("SELECT count(*) FROM sqlite_schema") == "0"
                return cipherEffect(db.rows, reads: reads, before: before)
            case .pageSize:
                return pageSizeEffect(path: freshDatabase(index: index, side: "oracle", empty: true)) { db in
                    _ = db.execute(spelling.sql)
                }
            case .vacuumInto:
                // Promise 1 first: a URI key is handed to SQLCipher's keying function (sqlite3_key_v2, from
                // sqlite3CodecQueryParameters), whatever the engine then does with the copy (since issue 43 it keys
                // the copy like its source anyway); then promise 2, the copy itself.
                let db = RawConnection(path: freshDatabase(index: index, side: "oracle", empty: false), key: rawKey)
                _ = db.text("SELECT count(*) FROM t")
                let keyed = keyingCalls { _ = db.execute(spelling.sql, argument: spelling.argument) }
                db.close()
                return keyed ? .acted("handed a key from SQL text to SQLCipher's keying functions") : copyEffect()
            }
        }

        // MARK: The guarded connection

        /// Whether SQLCipherKit's guard refused the spelling, and, when it did not, its effect there.
        func guarded(_ spelling: Spelling, index: Int) -> (refused: Bool, effect: Effect) {
            defer { restoreProcessState() }
            let empty = spelling.family == .pageSize || spelling.family == .cipher
            let path = freshDatabase(index: index, side: "guarded", empty: empty)
            let db: Database
            do {
                db = try Database(path: path, key: key, configuration: .init(cipher: GuardSpellings.configuration.settings))
            } catch {
                fail("open \(path): \(error)")
            }
            let read = { (sql: String) in
                (try? db.fetchAll(sql).map { "\($0.values)" }.joined(separator: "\n")) ?? "error"
            }
            let before = spelling.family == .cipher ? cipherSnapshot(read) : []
            var refused = false
            let keyed = keyingCalls {
                do {
                    if let argument = spelling.argument {
                        try db.execute(spelling.sql, [argument])
                    } else {
                        try db.execute(spelling.sql)
                    }
                } catch let error as SQLCipherError where error.kind == .misuse && error.message.contains("refused") {
                    refused = true
                } catch {
                    // Any other failure (a syntax error, an unknown value) is SQLite's, on both sides.
                }
            }
            if refused {
                db.close()
                return (true, .none)
            }
            if keyed { return (false, .acted("called SQLCipher's keying functions")) }
            switch spelling.family {
            case .alwaysRefused, .key:
                db.close()
                return (false, .none)
            case .tempStore:
                defer { db.close() }
                if (try? db.scalar(Int.self, "PRAGMA temp_store")) == 1 { return (false, .acted("set temp_store to FILE")) }
                if let file = temporaryFileDuringSpill(db) { return (false, .acted("opened temporary file \(file)")) }
                return (false, .none)
            case .cipher, .cipherCurrentValue:
                let reads = (try? db.scalar(Int.self, "SELECT count(*) FROM sqlite_schema")) == 0
                let effect = cipherEffect(read, reads: reads, before: before)
                db.close()
                return (false, effect)
            case .pageSize:
                do {
                    try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
                } catch {
                    db.close()
                    return (false, .acted("failed a write after it: \(error.message)"))
                }
                db.close()
                return (false, pageSizeReopens(path: path) ? .none : .acted("wrote a file its settings cannot read"))
            case .vacuumInto:
                db.close()
                return (false, copyEffect())
            }
        }

        // MARK: Effects

        /// The cipher state, each pragma's rows as `read` returns them.
        func cipherSnapshot(_ read: (String) -> String) -> [String] {
            (GuardSpellings.cipherState + GuardSpellings.processState).map { read("PRAGMA \($0)") }
        }

        func cipherEffect(_ read: (String) -> String, reads: Bool, before: [String]) -> Effect {
            let after = cipherSnapshot(read)
            if let changed = zip(GuardSpellings.cipherState + GuardSpellings.processState, zip(before, after))
                .first(where: { $0.1.0 != $0.1.1 }) {
                return .acted("changed \(changed.0)")
            }
            return reads ? .none : .acted("made the database unreadable")
        }

        /// page_size's effect: after the open's first read (as SQLCipherKit reads at open), `body`, then a
        /// table written; the file must reopen with the key and the default settings.
        func pageSizeEffect(path: String, _ body: (RawConnection) -> Void) -> Effect {
            let db = RawConnection(path: path, key: rawKey)
            _ = db.text("SELECT count(*) FROM sqlite_schema")
            body(db)
            guard db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)") else {
                return .acted("failed a write after it")
            }
            db.close()
            return pageSizeReopens(path: path) ? .none : .acted("wrote a file its settings cannot read")
        }

        func pageSizeReopens(path: String) -> Bool {
            RawConnection(path: path, key: rawKey).text("SELECT count(*) FROM t") == "1"
        }

        /// Whether a VACUUM INTO copy was written in plaintext or keyed otherwise than with the main key.
        func copyEffect() -> Effect {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
                .filter { $0.contains("copy.db") && !$0.hasSuffix("-journal") }
            for name in names {
                let path = folder + "/" + name
                guard let header = FileManager.default.contents(atPath: path)?.prefix(16), !header.isEmpty else {
                    continue
                }
                if header.starts(with: Array("SQLite format 3".utf8)) { return .acted("wrote \(name) in plaintext") }
                if !RawConnection(path: path, key: rawKey).readsTemplate {
                    return .acted("wrote \(name) under a key from SQL text")
                }
            }
            return .none
        }

        /// A temporary table and a sort run on `db` with a two-page temporary cache; while the sort's first
        /// row is out, any open file named `etilqs_…` or under SQLITE_TMPDIR, or nil.
        func temporaryFileDuringSpill(_ db: Database) -> String? {
            do {
                try db.execute("PRAGMA temp.cache_size = 2; CREATE TEMP TABLE tt AS SELECT * FROM t")
                let sort = try db.prepare("SELECT x FROM tt ORDER BY substr(x, 5) DESC")
                _ = try sort.step()
                return openTemporaryFile()
            } catch {
                fail("spill: \(error)")
            }
        }

        func openTemporaryFile() -> String? {
            let temporary = getenv("SQLITE_TMPDIR").map { String(cString: $0) } ?? "/nonexistent"
            for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)
                else { continue }
                if target.contains("etilqs_") || target.hasPrefix(temporary + "/") { return target }
            }
            return nil
        }

        /// Puts back the process-wide cipher defaults a case changed (the unguarded side may change them).
        func restoreProcessState() {
            // Keyed, so that SQLCipher answers the salt-mask pragma (it needs a codec to read or set it).
            let db = RawConnection(path: ":memory:", key: rawKey)
            if db.rows("PRAGMA cipher_default_settings") != processBaseline[0] {
                for statement in processBaseline[0].split(separator: "\n") {
                    _ = db.execute(String(statement))
                }
            }
            if db.rows("PRAGMA cipher_hmac_salt_mask") != processBaseline[1] {
                _ = db.execute("PRAGMA cipher_hmac_salt_mask = \"x'\(processBaseline[1])'\"")
            }
            let now = GuardSpellings.processState.dropLast().map { db.rows("PRAGMA \($0)") }
            guard now == Array(processBaseline.dropLast()) else {
                fail("could not restore SQLCipher's process-wide settings: \(now) instead of \(processBaseline)")
            }
            db.close()
        }
    }

    /// A connection through SQLite's C API, with no authorizer.
    final class RawConnection {
        private(set) var handle: OpaquePointer?

        init(path: String, key: String?) {
            var db: OpaquePointer?
            _ = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
            handle = db
            if let key, let db {
                _ = sqlite3_key_v2(db, nil, key, Int32(key.utf8.count))
                // The configuration the spellings run under (RELIABILITY_CIPHER), as SQLCipherKit applies it.
                for pragma in GuardSpellings.configuration.pragmas {
                    _ = sqlite3_exec(db, pragma, nil, nil, nil)
                }
            }
        }

        deinit { close() }

        func close() {
            sqlite3_close_v2(handle)
            handle = nil
        }

        var readsTemplate: Bool {
            defer { close() }
            return text("SELECT count(*) FROM t") == String(GuardSpellings.rowCount)
        }

        /// Runs `sql` (one statement with `argument` bound as ?1, or a script): whether it all succeeded.
        @discardableResult
        func execute(_ sql: String, argument: String? = nil) -> Bool {
            guard let handle else { return false }
            guard let argument else { return sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK }
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { return false }
            defer { sqlite3_finalize(statement) }
            sqlite3_bind_text(statement, 1, argument, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            return sqlite3_step(statement) == SQLITE_DONE
        }

        /// Every row's columns joined by tabs, rows by newlines; "error" when the statement fails.
        func rows(_ sql: String) -> String {
            guard let handle else { return "error" }
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { return "error" }
            defer { sqlite3_finalize(statement) }
            var lines: [String] = []
            while true {
                let code = sqlite3_step(statement)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else { return "error" }
                lines.append((0..<sqlite3_column_count(statement)).map { column in
                    sqlite3_column_text(statement, column).map { String(cString: $0) } ?? "NULL"
                }.joined(separator: "\t"))
            }
            return lines.joined(separator: "\n")
        }

        /// The first column of the first row, or nil.
        func text(_ sql: String) -> String? {
            let result = rows(sql)
            return result == "error" ? nil : result.split(separator: "\n").first.map { String($0.split(separator: "\t").first ?? "") }
        }
    }
}
