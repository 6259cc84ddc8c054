import Foundation
import ProcessTestSupport
import ReliabilitySupport
import Testing
@testable import SQLCipherKit

/// A bounded, seeded random-input loop through the Swift API: random SQL from a token soup with random bound
/// values of every kind, columns read as mismatched Swift types, and mutated copies of an encrypted database.
/// Every failure must be a thrown ``SQLCipherError`` (or, on the `Decodable` paths, the documented
/// `DecodingError`); nothing may crash; reads of the wrong type throw ``SQLCipherError/Kind/typeMismatch``.
@Suite("Reliability: API fuzz")
struct APIFuzzTests {
    static let statements = 15_000
    static let mutatedFiles = 500
    /// A file name that only ATTACH or VACUUM INTO (left out of the soup) could create: it must never appear.
    static let escapeName = "fuzz-escape.db"

    @Test("Random SQL, bound values, wrong-type reads and mutated files: typed errors only, no crash")
    func fuzz() throws {
        let started = Date()
        let seed = reliabilitySeed()
        var generator = SplitMix64(seed: seed)
        let folder = try TemporaryDirectory()
        let keyBytes = (0..<Key.rawKeyLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let key = try Key.rawKey(keyBytes)

        var statements = FuzzStatements(folder: folder, key: key, secrets: [Hex.string(keyBytes)])
        try statements.run(Self.statements, using: &generator)
        let statementsDone = Date()
        #expect(statements.problems.isEmpty, "seed \(seed): \(statements.problems.count) problems: \(statements.problems.prefix(8))")

        let escaped = Self.escapedFiles(named: Self.escapeName, besides: folder)
        #expect(escaped.isEmpty, "seed \(seed): random SQL created \(escaped)")
        let left = try folder.names().filter { !$0.hasPrefix("fuzz.db") }
        #expect(left.isEmpty, "seed \(seed): random SQL created \(left) in the test folder")

        // Mutated copies of a small encrypted database, opened with the right key.
        let target = try TamperTarget.make(in: folder, name: "mutated", key: key, secrets: [Hex.string(keyBytes)],
                                           cipher: CipherSettings())
        var summary = TamperSummary()
        var mutationProblems: [String] = []
        for index in 0..<Self.mutatedFiles {
            let (bytes, description) = Self.mutate(target.pristine, using: &generator)
            let mode: OpenMode = index.isMultiple(of: 3) ? .readOnly : .readWrite
            let result = target.check(bytes: bytes, expecting: .mutated, mode: mode)
            summary.add(result)
            if !result.findings.isEmpty { mutationProblems.append("#\(index) \(description): \(result)") }
        }
        #expect(mutationProblems.isEmpty, "seed \(seed): \(mutationProblems.prefix(5))")

        print("RELIABILITY api fuzz: \(statements.count) statements, \(summary.flips) mutated files, 0 crashes, "
              + "\(String(format: "%.1f", Date().timeIntervalSince(started))) s (statements "
              + "\(String(format: "%.1f", statementsDone.timeIntervalSince(started))) s; seed \(seed); "
              + "errors \(statements.errorKinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")); "
              + "wrong-type reads \(statements.typeMismatches); mutated-file outcomes "
              + "\(summary.outcomesText))")
    }

    @Test("The escape check sees a file that ATTACH creates outside the test folder")
    func escapeCheckSeesAttach() throws {
        let folder = try TemporaryDirectory()
        let name = "fuzz-escape-control-\(UUID().uuidString).db"
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent(name).path
        defer { for suffix in ["", "-journal"] { unlink(outside + suffix) } }
        let db = try Database(path: folder.file("fuzz.db"), key: try Key.rawKey([UInt8](repeating: 7, count: 32)))
        #expect(Self.escapedFiles(named: name, besides: folder).isEmpty)
        try db.attach(outside, as: "outside", key: try Key.rawKey([UInt8](repeating: 7, count: 32)))
        try db.execute("CREATE TABLE outside.t(x)")
        #expect(Self.escapedFiles(named: name, besides: folder) == [outside])
    }

    @Test("Found by fuzzing (fixed): text with a NUL is bound whole; 'malformed JSON' is not corruption")
    func knownIssues() throws {
        let folder = try TemporaryDirectory()
        let db = try Database(path: folder.file("known.db"), key: try Key.rawKey([UInt8](repeating: 9, count: 32)))
        // Text was once bound as a C string (length -1), so SQLite stored only the bytes before a NUL.
        let echoed = try db.scalar(String.self, "SELECT ?", ["a\0b"])
        #expect(echoed.map { Array($0.utf8) } == [0x61, 0x00, 0x62])
        // SQL text with a NUL would be run only up to it: refused instead.
        #expect(thrownError { try db.execute("SELECT 1;\0 DROP TABLE x") }?.kind == .invalidArgument)
        #expect(thrownError { try db.fetchAll("SELECT 1;\0 SELECT 2") }?.kind == .invalidArgument)
        // Any SQLITE_ERROR whose message held "malformed" was once classified as .corrupt.
        let error = thrownError { try db.fetchAll("SELECT json('{')") }
        #expect(error != nil)
        #expect(error?.kind == .sqlite)
    }

    // MARK: Helpers

    /// Files named `name` (or its side files) in the working directory or the system temporary directory.
    static func escapedFiles(named name: String, besides folder: TemporaryDirectory) -> [String] {
        let places = [FileManager.default.currentDirectoryPath, FileManager.default.temporaryDirectory.path,
                      folder.url.deletingLastPathComponent().path]
        var found: [String] = []
        for place in Set(places).sorted() {
            for suffix in ["", "-journal", "-wal", "-shm"] {
                let path = URL(fileURLWithPath: place).appendingPathComponent(name + suffix).path
                if FileManager.default.fileExists(atPath: path) { found.append(path) }
            }
        }
        return found
    }

    /// A mutated copy of `bytes`: one to three of flips, truncations, extensions, zeroed or copied pages.
    static func mutate(_ original: Data, using generator: inout SplitMix64) -> (Data, String) {
        var bytes = original
        var steps: [String] = []
        let pageSize = TamperingTests.pageSize
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
            let pages = max(1, bytes.count / pageSize)
            switch Int.random(in: 0..<8, using: &generator) {
            case 0 where !bytes.isEmpty:
                let count = Int.random(in: 1...8, using: &generator)
                for _ in 0..<count {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
                }
                steps.append("\(count) flips")
            case 1:
                let length = Int.random(in: 0...bytes.count, using: &generator)
                bytes = bytes.prefix(length)
                steps.append("truncated to \(length)")
            case 2:
                let length = Int.random(in: 0...pages, using: &generator) * pageSize
                bytes = bytes.prefix(length)
                steps.append("truncated to \(length / pageSize) pages")
            case 3:
                let count = Int.random(in: 1...(2 * pageSize), using: &generator)
                let zeros = Bool.random(using: &generator)
                bytes.append(Data((0..<count).map { _ in zeros ? 0 : UInt8.random(in: 0...255, using: &generator) }))
                steps.append("extended by \(count) \(zeros ? "zero" : "random") bytes")
            case 4 where bytes.count >= pageSize:
                let page = Int.random(in: 0..<bytes.count / pageSize, using: &generator)
                bytes.replaceSubrange(page * pageSize..<(page + 1) * pageSize, with: Data(count: pageSize))
                steps.append("page \(page + 1) zeroed")
            case 5 where bytes.count >= 2 * pageSize:
                let from = Int.random(in: 0..<bytes.count / pageSize, using: &generator)
                let to = Int.random(in: 0..<bytes.count / pageSize, using: &generator)
                let page = Data(bytes[from * pageSize..<(from + 1) * pageSize])
                bytes.replaceSubrange(to * pageSize..<(to + 1) * pageSize, with: page)
                steps.append("page \(from + 1) copied over page \(to + 1)")
            case 6 where bytes.count >= pageSize:
                let start = Int.random(in: 0..<bytes.count / pageSize, using: &generator) * pageSize
                let page = Data(bytes[start..<(start + pageSize)])
                bytes.append(page)
                steps.append("a page appended again")
            case 7 where !bytes.isEmpty:
                let start = Int.random(in: 0..<bytes.count, using: &generator)
                let end = min(bytes.count, start + Int.random(in: 1...64, using: &generator))
                bytes.replaceSubrange(start..<end, with: (start..<end).map { _ in UInt8.random(in: 0...255, using: &generator) })
                steps.append("bytes \(start)..<\(end) randomized")
            default:
                steps.append("nothing (empty file)")
            }
        }
        return (bytes, steps.joined(separator: ", "))
    }
}

/// The random-statement half of the fuzz test: runs SQL from a token soup through every entry point of the
/// API and records what went wrong.
struct FuzzStatements {
    let folder: TemporaryDirectory
    let key: Key
    let secrets: [String]
    var problems: [String] = []
    var errorKinds: [String: Int] = [:]
    var count = 0
    var typeMismatches = 0

    /// Instructions a statement may run (in steps of 1,000) before it is interrupted, so that a runaway
    /// recursive query or cross join ends.
    static let instructionBudget = 1_000

    static let tables = """
        CREATE TABLE t1(a INTEGER, b TEXT, c BLOB, d REAL);
        CREATE TABLE t2(id INTEGER PRIMARY KEY, name TEXT UNIQUE, data BLOB NOT NULL DEFAULT x'', n NUMERIC
                        CHECK (n IS NULL OR n > -1e300));
        CREATE INDEX t1_b ON t1(b);
        CREATE VIEW v1 AS SELECT a, b FROM t1 WHERE a > 0;
        CREATE TRIGGER t2_log AFTER INSERT ON t2 BEGIN INSERT INTO t1(a, b) VALUES (new.id, 'trigger'); END;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)
        INSERT INTO t1 SELECT i, 'row ' || i, randomblob(i), i / 3.0 FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
        INSERT INTO t2(id, name, data, n) SELECT i, 'name ' || i, zeroblob(i), i FROM n;
        """

    /// Likely-valid statements, so that binding and reading get exercised past the parser. Over-the-limit
    /// values come from zeroblob and randomblob, which check the length first; printf('%.*c', 1000000001, …)
    /// is left out: SQLite builds up to a gigabyte of text before it fails "string or blob too big".
    static let templates = [
        "SELECT * FROM t1 WHERE a = ? OR b = ?", "SELECT a, b, c, d FROM t1 ORDER BY a LIMIT ?",
        "INSERT INTO t1 VALUES (?, ?, ?, ?)", "INSERT INTO t2(name, data, n) VALUES (?, ?, ?)",
        "UPDATE t2 SET data = ? WHERE id = ?", "DELETE FROM t1 WHERE a > ?", "SELECT ?, ?, ?",
        "SELECT CAST(? AS TEXT), typeof(?), length(?), hex(?)", "SELECT * FROM t2 WHERE name LIKE ? ESCAPE '\\'",
        "SELECT :a, @b, $c, ?7", "SELECT count(*), sum(a), group_concat(b) FROM t1 WHERE d < ?",
        "SELECT substr(?, ?, ?)", "SELECT * FROM v1 JOIN t2 ON v1.a = t2.id", "SELECT json_extract(?, '$.a')",
        "INSERT OR REPLACE INTO t2(id, name, data) VALUES (?, ?, ?) RETURNING *",
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r LIMIT ?) SELECT count(*) FROM r",
        "SELECT zeroblob(?)", "SELECT ? IS NULL, ? = ?, ? < ?",
        "BEGIN; INSERT INTO t1(a) VALUES (1); ROLLBACK", "SAVEPOINT s1; DELETE FROM t2; ROLLBACK TO s1; RELEASE s1",
        "CREATE TABLE IF NOT EXISTS t3(x ANY, y)", "INSERT INTO t3 VALUES (?, ?)", "SELECT * FROM t3",
        "CREATE VIRTUAL TABLE IF NOT EXISTS f USING fts5(body)", "INSERT INTO f(body) VALUES (?)",
        "SELECT * FROM f WHERE f MATCH ?",
        // FTS5's trigram LIKE/GLOB path and its porter stemmer (both had engine bugs found by the engine fuzzer).
        "CREATE VIRTUAL TABLE IF NOT EXISTS g USING fts5(body, tokenize = 'trigram')", "INSERT INTO g(body) VALUES (?)",
        "SELECT rowid FROM g WHERE body LIKE ?", "SELECT rowid FROM g WHERE body GLOB ?",
        "CREATE VIRTUAL TABLE IF NOT EXISTS p USING fts5(body, tokenize = 'porter')", "INSERT INTO p(body) VALUES (?)",
        "ALTER TABLE t1 ADD COLUMN e TEXT DEFAULT 'e'", "PRAGMA integrity_check",
        "PRAGMA cipher_integrity_check", "PRAGMA table_info(t1)", "PRAGMA user_version = 7", "PRAGMA cipher_version",
        "PRAGMA foreign_keys = ON", "EXPLAIN QUERY PLAN SELECT * FROM t1 WHERE b = ?", "SELECT randomblob(?)",
        "SELECT zeroblob(2000000000)", "SELECT randomblob(1000000001)", "SELECT zeroblob(?) || zeroblob(?)",
        "SELECT count(*) FROM t1, t1 AS x, t1 AS y, t1 AS z", "SELECT quote(?), unicode(?), char(?)",
    ]

    /// The token soup. No ATTACH, DETACH, VACUUM, load_extension or free PRAGMA: nothing that could reach a
    /// file outside the test folder (the literal file names are bait for that check).
    static let tokens: [String] = [
        "SELECT", "FROM", "WHERE", "INSERT", "INTO", "VALUES", "UPDATE", "SET", "DELETE", "ORDER", "BY", "GROUP",
        "HAVING", "LIMIT", "OFFSET", "JOIN", "LEFT", "ON", "AS", "AND", "OR", "NOT", "NULL", "IS", "IN", "LIKE",
        "GLOB", "BETWEEN", "CASE", "WHEN", "THEN", "ELSE", "END", "DISTINCT", "UNION", "ALL", "EXCEPT",
        "INTERSECT", "CREATE", "TABLE", "INDEX", "VIEW", "TRIGGER", "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT",
        "RELEASE", "DROP", "IF", "EXISTS", "ALTER", "RENAME", "TO", "ADD", "COLUMN", "WITH", "RECURSIVE",
        "RETURNING", "DEFAULT", "PRIMARY", "KEY", "UNIQUE", "CHECK", "CAST", "COLLATE", "NOCASE", "ESCAPE",
        "EXPLAIN", "REPLACE", "OR IGNORE", "ON CONFLICT DO NOTHING", "INTEGER", "TEXT", "BLOB", "REAL", "ANY",
        "STRICT", "WITHOUT ROWID", "OVER", "PARTITION", "WINDOW", "FILTER", "MATCH", "REGEXP",
        "t1", "t2", "t3", "v1", "f", "a", "b", "c", "d", "e", "id", "name", "data", "n", "rowid", "t1_b",
        "sqlite_schema", "main", "temp", "\"weird \"\" id\"", "[bracket]", "`tick`", "sqlcipherkit_savepoint_1",
        "count(", "sum(", "length(", "hex(", "upper(", "substr(", "zeroblob(", "randomblob(", "printf(", "json(",
        "json_extract(", "typeof(", "abs(", "coalesce(", "char(", "unicode(", "quote(", "instr(", "replace(",
        "group_concat(", "max(", "min(", "random()", "likelihood(", "iif(", "round(", "row_number() OVER ()",
        "0", "1", "-1", "42", "3.14", "-0.0", "1e308", "1e-320", "9223372036854775807", "-9223372036854775808",
        "9223372036854775808", "0x7fffffff", "2000000000", "'text'", "''", "'it''s'", "'é漢字👩‍👩‍👧'", "x'00ff'",
        "x''", "x'zz'", "'\(APIFuzzTests.escapeName)'",
        "'\(FileManager.default.temporaryDirectory.appendingPathComponent(APIFuzzTests.escapeName).path)'",
        "'{\"a\":[1,2,{\"b\":null}]}'", "'{'", "?", "?1", "?32766", "?32767", ":a", "@b", "$c", "?0",
        "+", "-", "*", "/", "%", "||", "=", "==", "!=", "<>", "<", "<=", ">", ">=", "<<", ">>", "&", "|", "~",
        "->", "->>", "(", ")", "(", ")", ",", ",", ";", ".", "*", "--", "/*", "*/", "'", "\"",
    ]

    /// Runs `total` random statements, reopening a fresh copy of the sample database every 250.
    mutating func run(_ total: Int, using generator: inout SplitMix64) throws {
        let path = folder.file("fuzz.db")
        let template = folder.file("template.db")
        let setup = try Database(path: template, key: key)
        try setup.setJournalMode(.delete)
        try setup.execute(Self.tables)
        setup.close()
        let templateBytes = try contents(of: template)
        unlink(template)

        var db: Database?
        for index in 0...total {
            if index.isMultiple(of: 250) || index == total {
                if let open = db {
                    // Whatever the random SQL did, the file it leaves is sound.
                    open.close()
                    let check = try Database(path: path, key: key, mode: .readOnly)
                    let damage = try check.integrityCheck() + check.cipherIntegrityCheck().filter(\.isFailure).map(\.message)
                    if !damage.isEmpty { problems.append("after statement \(index) the database is damaged: \(damage)") }
                    check.close()
                }
                guard index < total else { break }
                for suffix in ["-journal", "-wal", "-shm"] { unlink(path + suffix) }
                try writeFile(path, templateBytes)
                db = try Database(path: path, key: key, mode: .readWrite)
                // No fsync per commit: the file is scratch, and the loop stays fast.
                try db?.execute("PRAGMA synchronous = OFF")
            }
            guard let db else { continue }
            let sql = Self.randomSQL(using: &generator)
            count += 1
            var calls = 0
            do {
                try db.withProgressHandlerRethrowing(every: 1_000, {
                    calls += 1
                    return calls > Self.instructionBudget
                }) {
                    try runOne(sql, on: db, using: &generator)
                }
            } catch let error as SQLCipherError {
                record(error, sql: sql)
            } catch let error as DecodingError {
                // Only the Decodable entry point may throw it; runOne catches that one itself.
                problems.append("a DecodingError escaped: \(error) in \(sql.debugDescription.prefix(200))")
            } catch {
                problems.append("untyped error \(type(of: error)): \(error) in \(sql.debugDescription.prefix(200))")
            }
        }
    }

    /// Records a thrown error: its kind, and that it shows no key.
    mutating func record(_ error: SQLCipherError, sql: String) {
        errorKinds[error.kind.rawValue, default: 0] += 1
        let texts = [error.description, error.message, String(reflecting: error)]
        if secrets.contains(where: { secret in texts.contains { $0.localizedCaseInsensitiveContains(secret) } }) {
            problems.append("an error shows the key: \(error)")
        }
        // Kinds that random SQL on an open, sound connection has no business producing.
        // (.misuse only from the SQL guard: a key pragma or temp_store = FILE the soup happened to spell.)
        // Every refusal of the guard (Connection/SQLGuard.swift) says "… is refused …" (or "… are refused …":
        // SAVEPOINT, RELEASE and ROLLBACK TO of a library savepoint's name, which the soup spells too) and names
        // the typed API.
        let guarded = error.kind == .misuse
            && (error.message.contains(" is refused") || error.message.contains(" are refused"))
        if [.wrongKeyOrNotADatabase, .notSQLCipher, .cannotOpen, .ioError, .misuse].contains(error.kind) && !guarded {
            problems.append("unexpected \(error.kind): \(error) in \(sql.debugDescription.prefix(200))")
        }
        // The database is sound: random SQL must never report corruption (bad JSON once did, see knownIssues).
        if error.kind == .corrupt {
            problems.append("corrupt on a sound database: \(error) in \(sql.debugDescription.prefix(200))")
        }
    }

    /// Runs `sql` through one randomly chosen entry point of the API.
    mutating func runOne(_ sql: String, on db: Database, using generator: inout SplitMix64) throws {
        switch Int.random(in: 0..<9, using: &generator) {
        case 0, 1:
            // prepare, bind (sometimes at bad indexes or names), step, read every column as every type.
            let statement = try db.prepare(sql)
            let parameters = statement.parameterCount
            for index in 1...max(1, parameters) where parameters > 0 || Bool.random(using: &generator) {
                let value = Self.randomValue(using: &generator)
                if Int.random(in: 0..<12, using: &generator) == 0 {
                    let bad = [0, -1, parameters + 1, Int(Int32.max)].randomElement(using: &generator) ?? 0
                    expectThrows(.invalidArgument, "binding parameter \(bad) of \(parameters)") {
                        () throws(SQLCipherError) in try statement.bind(value, at: bad)
                    }
                } else if Int.random(in: 0..<12, using: &generator) == 0 {
                    expectThrows(.invalidArgument, "binding a missing name") {
                        () throws(SQLCipherError) in try statement.bind(value, named: "no_such_parameter")
                    }
                } else {
                    try statement.bind(value, at: index)
                }
            }
            var rows = 0
            while rows < 50, try statement.step() {
                rows += 1
                if rows <= 3 {
                    probeColumns(statement, using: &generator)
                    probeColumns(statement.row, using: &generator)
                }
            }
        case 2:
            try db.execute(sql)
        case 3:
            try db.execute(sql, Self.randomArguments(using: &generator))
        case 4:
            for row in try db.fetchAll(sql, Self.randomArguments(using: &generator)).prefix(3) {
                probeColumns(row, using: &generator)
            }
        case 5:
            _ = try db.fetchOne(sql, Self.randomArguments(using: &generator))
            _ = try db.scalar(Int.self, sql)
            _ = try db.textValue(sql)
        case 6:
            try db.forEachStatement(in: sql) { _, cursor in _ = try cursor.all() }
        case 7:
            if Bool.random(using: &generator) {
                try db.transaction { try db.execute(sql) }
            } else {
                try db.savepoint { try db.execute(sql) }
            }
        default:
            // Decodable: a mismatch is the documented DecodingError; anything else must be SQLCipherError.
            do {
                _ = try db.fetchAll(FuzzRecord.self, sql, Self.randomArguments(using: &generator))
            } catch is DecodingError {
                typeMismatches += 1
            }
        }
        // A round trip of a bound value of every kind through "SELECT ?".
        if Int.random(in: 0..<4, using: &generator) == 0 { try roundTrip(db, using: &generator) }
    }

    /// `SELECT ?1, typeof(?1)` returns the bound value unchanged (NaN reads back as NULL, as SQLite stores it).
    mutating func roundTrip(_ db: Database, using generator: inout SplitMix64) throws {
        let value = Self.randomValue(using: &generator)
        guard let row = try db.fetchOne("SELECT ?1", [value]) else {
            problems.append("SELECT ? returned no row for \(value.kindName)")
            return
        }
        var expected = value
        if case .real(let real) = value, real.isNaN { expected = .null }
        if row[0] != expected {
            problems.append("SELECT ? returned \(row[0].kindName) \(String(describing: row[0]).prefix(80)) for "
                            + "\(value.kindName) \(String(describing: value).prefix(80))")
        }
        probeColumns(row, using: &generator)
    }

    /// Expects `body` to throw an error of `kind`.
    mutating func expectThrows(_ kind: SQLCipherError.Kind, _ what: String,
                               _ body: () throws(SQLCipherError) -> Void) {
        do {
            try body()
            problems.append("\(what) did not throw")
        } catch {
            if error.kind != kind { problems.append("\(what) threw \(error.kind), not \(kind)") }
        }
    }

    /// Reads every column as every supported type: a value that does not convert (by the rules below) must
    /// throw typeMismatch, one that does must read; a missing column throws invalidArgument.
    mutating func probeColumns(_ source: some FuzzColumns, using generator: inout SplitMix64) {
        var found: [String] = []
        var mismatches = 0
        for index in 0..<source.fuzzCount {
            let value = source.fuzzValue(index)
            func probe<T: DatabaseValueConvertible>(_ type: T.Type, _ converts: Bool?, check: (T) -> Bool = { _ in true }) {
                do {
                    let read = try source.fuzzGet(index, as: T.self)
                    if converts == false {
                        found.append("\(value.kindName) read as \(T.self) did not throw")
                    } else if !check(read) {
                        found.append("\(value.kindName) read as \(T.self) gave \(read)")
                    }
                } catch {
                    mismatches += 1
                    if error.kind != .typeMismatch {
                        found.append("\(value.kindName) read as \(T.self) threw \(error.kind), not typeMismatch")
                    } else if converts == true {
                        found.append("\(value.kindName) read as \(T.self) threw typeMismatch")
                    }
                }
            }
            let integer: Int64? = switch value {
            case .integer(let integer): integer
            case .real(let real): Int64(exactly: real)
            default: nil
            }
            let isNumber = switch value { case .integer, .real: true; default: false }
            let text: String? = switch value {
            case .text(let text): text
            case .blob(let bytes): String(validating: bytes, as: UTF8.self)
            default: nil
            }
            let isBytes = switch value { case .text, .blob: true; default: false }
            probe(Int64.self, integer != nil) { $0 == integer }
            probe(Int.self, integer != nil)
            probe(Int32.self, integer.flatMap { Int32(exactly: $0) } != nil)
            probe(Double.self, isNumber)
            probe(Bool.self, isNumber)
            probe(String.self, text != nil) { $0 == text }
            probe([UInt8].self, isBytes)
            probe(Data.self, isBytes)
            // Dates read numbers as Unix time and some text formats; NULL and blobs never.
            let dateConverts: Bool? = switch value { case .integer, .real: true; case .text: nil; default: false }
            probe(Date.self, dateConverts)
            probe(Int?.self, value.isNull || integer != nil)
            probe(String?.self, value.isNull || text != nil)
            probe(DatabaseValue.self, true) { $0 == value }
        }
        for bad in [-1, source.fuzzCount, Int.random(in: source.fuzzCount...Int.max, using: &generator)] {
            do {
                _ = try source.fuzzGet(bad, as: DatabaseValue.self)
                found.append("column \(bad) of \(source.fuzzCount) read without error")
            } catch where error.kind != .invalidArgument {
                found.append("column \(bad) of \(source.fuzzCount) threw \(error.kind), not invalidArgument")
            } catch {}
        }
        typeMismatches += mismatches
        problems += found
    }

    // MARK: Random input

    static func randomSQL(using generator: inout SplitMix64) -> String {
        var sql: String
        switch Int.random(in: 0..<20, using: &generator) {
        case 0..<7:
            sql = templates.randomElement(using: &generator) ?? ""
        case 7..<9:
            // A template with a token dropped, swapped or inserted.
            var words = (templates.randomElement(using: &generator) ?? "").split(separator: " ").map(String.init)
            let position = Int.random(in: 0..<max(1, words.count), using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0 where !words.isEmpty: words.remove(at: position)
            case 1 where words.count > 1: words.swapAt(position, Int.random(in: 0..<words.count, using: &generator))
            default: words.insert(tokens.randomElement(using: &generator) ?? "", at: min(position, words.count))
            }
            sql = words.joined(separator: " ")
        case 9..<18:
            let count = Int.random(in: 1...30, using: &generator)
            sql = (0..<count).map { _ in tokens.randomElement(using: &generator) ?? "" }
                .joined(separator: Int.random(in: 0..<5, using: &generator) == 0 ? "" : " ")
        case 18:
            // Random bytes, decoded as UTF-8 (invalid sequences become U+FFFD), NULs included.
            let bytes = (0..<Int.random(in: 0...80, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            sql = String(decoding: bytes, as: UTF8.self)
        default:
            // Random Unicode scalars: controls, combining marks, right-to-left, emoji, private use.
            let scalars = (0..<Int.random(in: 1...40, using: &generator)).compactMap { _ in
                Unicode.Scalar(UInt32.random(in: 0...0x1F_FFF, using: &generator))
            }
            sql = "SELECT '" + String(String.UnicodeScalarView(scalars)) + (Bool.random(using: &generator) ? "'" : "")
        }
        if Int.random(in: 0..<7, using: &generator) == 0 {
            // Cut at a random UTF-8 byte, possibly inside a character.
            let utf8 = Array(sql.utf8)
            sql = String(decoding: utf8.prefix(Int.random(in: 0...utf8.count, using: &generator)), as: UTF8.self)
        }
        return sql
    }

    static func randomArguments(using generator: inout SplitMix64) -> StatementArguments {
        if Int.random(in: 0..<8, using: &generator) == 0 {
            var named: [String: (any DatabaseValueConvertible)?] = [:]
            for name in ["a", ":a", "@b", "$c", "nope"] where Bool.random(using: &generator) {
                named[name] = randomValue(using: &generator)
            }
            return StatementArguments(named: named)
        }
        return StatementArguments((0..<Int.random(in: 0...5, using: &generator)).map { _ in randomValue(using: &generator) })
    }

    /// A value of every storage class, with their edges: Int64.min, NaN, infinities, empty and invalid UTF-8
    /// blobs, NUL in text, and now and then megabytes of text or blob.
    static func randomValue(using generator: inout SplitMix64) -> DatabaseValue {
        let huge = Int.random(in: 0..<150, using: &generator) == 0
        switch Int.random(in: 0..<5, using: &generator) {
        case 0:
            return .null
        case 1:
            let edges: [Int64] = [.min, .max, 0, -1, 1, Int64(Int32.max) + 1, Int64(Int32.min) - 1, 1 << 53 + 1]
            return .integer(Bool.random(using: &generator) ? edges.randomElement(using: &generator) ?? 0
                            : Int64.random(in: -1_000...1_000, using: &generator))
        case 2:
            let edges: [Double] = [.nan, .infinity, -.infinity, -0.0, .greatestFiniteMagnitude,
                                   .leastNonzeroMagnitude, 0.1, 3, 9.223_372_036_854_775_807e18, -9.223_372_036_854_775_808e18, 1e300]
            return .real(Bool.random(using: &generator) ? edges.randomElement(using: &generator) ?? 0
                         : Double.random(in: -1e6...1e6, using: &generator))
        case 3:
            if huge {
                let count = Int.random(in: 1_000_000...3_000_000, using: &generator)
                return .text(String(repeating: Bool.random(using: &generator) ? "x" : "é", count: count))
            }
            let samples = ["", "a", "héllo", "漢字", "👩‍👩‍👧", "\u{202E}rtl", "e\u{301}", "a\0b", "\0", "'; DROP TABLE t1; --",
                           "%", "_", "\\", "{\"a\":1}", String(repeating: "long ", count: 2_000), "row 3", "name 5"]
            return .text(samples.randomElement(using: &generator) ?? "")
        default:
            if huge {
                return .blob([UInt8](repeating: UInt8.random(in: 0...255, using: &generator),
                                     count: Int.random(in: 1_000_000...3_000_000, using: &generator)))
            }
            let samples: [[UInt8]] = [[], [0], [0xff, 0xfe, 0xfd], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80],
                                      Array("valid utf-8 é".utf8), (0..<64).map { UInt8($0 * 4) }]
            return .blob(samples.randomElement(using: &generator) ?? [])
        }
    }
}

/// A Decodable read with random SQL: most rows will not fit it.
struct FuzzRecord: Decodable {
    let a: Int
    let b: String?
    let c: Data?
}

/// Columns to read: a result row, or the current row of a statement.
protocol FuzzColumns {
    var fuzzCount: Int { get }
    func fuzzValue(_ index: Int) -> DatabaseValue
    func fuzzGet<T: DatabaseValueConvertible>(_ index: Int, as type: T.Type) throws(SQLCipherError) -> T
}

extension Row: FuzzColumns {
    var fuzzCount: Int { count }
    func fuzzValue(_ index: Int) -> DatabaseValue { self[index] }
    func fuzzGet<T: DatabaseValueConvertible>(_ index: Int, as type: T.Type) throws(SQLCipherError) -> T {
        try get(index, as: T.self)
    }
}

extension Statement: FuzzColumns {
    var fuzzCount: Int { columnCount }
    func fuzzValue(_ index: Int) -> DatabaseValue { value(at: index) }
    func fuzzGet<T: DatabaseValueConvertible>(_ index: Int, as type: T.Type) throws(SQLCipherError) -> T {
        try column(index, as: T.self)
    }
}

extension DatabaseValue {
    /// The storage class, for messages.
    var kindName: String {
        switch self {
        case .null: "NULL"
        case .integer: "integer"
        case .real: "real"
        case .text: "text"
        case .blob: "blob"
        }
    }
}
