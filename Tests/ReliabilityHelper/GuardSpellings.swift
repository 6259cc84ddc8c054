#if canImport(Glibc)
import Glibc
#endif
import CSQLCipher
import Foundation
import ReliabilitySupport
import SQLCipherKit

/// `guard-spellings FOLDER`: the SQL guard judged by effect. Generates thousands of spellings of each rule the
/// guard has, and of the allowed neighbours of each (case, quoting, white space and comments, schema prefixes,
/// number forms, the `PRAGMA x(v)` form, URIs, triggers, views and CTEs), and runs each twice on a fresh copy
/// of an encrypted database:
///
/// - on an *unguarded* connection (the C API, no authorizer), where the effect is measured: the pragma's value
///   read back on a fresh statement, the cipher settings and the process-wide defaults read back, whether the
///   database still reads with its key (on the connection and reopened), whether a `VACUUM INTO` copy is in
///   plaintext or keyed with anything but the main key;
/// - on a SQLCipherKit ``Database`` (guarded), where the verdict is read: refused (``SQLCipherError/Kind/misuse``
///   from the guard) or not; when not, the same effects are measured there, and for temp_store a temporary
///   table and a sort run while the process's open files are checked for any temporary file (`etilqs_…`, or
///   anything under SQLITE_TMPDIR).
///
/// A spelling is a *mismatch* when the guard's verdict differs from the effect: refused though harmless, or
/// allowed though it acts (and, allowed, acts on the guarded connection). ATTACH and `sqlcipher_export()` in
/// SQL text are refused whatever their effect (the authorizer cannot see an ATTACH's KEY clause), and so is a
/// cipher setting with any value, its current one included (those spellings must also show no effect, which
/// proves they are the current value): their spellings must all be refused. Before the cases, the spill check
/// is shown to see a file: a decoy held open under SQLITE_TMPDIR. Runs in a child process because the effect of `cipher_default_…` and
/// `cipher_memory_security` is process-wide (each is restored after its case). Prints one line per mismatch,
/// per-family counts, then `spellings N refused R allowed A mismatches M`; exits 1 on any mismatch.
///
/// The key comes from RELIABILITY_KEY_HEX, the seed from RELIABILITY_SEED.
enum GuardSpellings {
    enum Family: String, CaseIterable {
        case key = "key pragmas", tempStore = "temp_store", cipher = "cipher settings", pageSize = "page_size"
        case vacuumInto = "VACUUM INTO", alwaysRefused = "ATTACH / sqlcipher_export / unknown cipher_ setters"
        case cipherCurrentValue = "cipher settings set to their current value"

        /// Whether the guard refuses every spelling of the family, whatever its effect: ATTACH and export in SQL
        /// text, and a cipher setting with any value, its current one included (a setter is refused, not judged
        /// by whether it would change anything; the spellings that would are in ``cipher``).
        var alwaysRefused: Bool { self == .alwaysRefused || self == .cipherCurrentValue }
    }

    struct Spelling {
        let family: Family
        let sql: String
        var argument: String? = nil
    }

    /// Where one spelling leaves a connection, as far as the guard's rules care.
    enum Effect: Equatable {
        case none
        case acted(String)
    }

    static func run(_ arguments: [String]) {
        guard let folder = arguments.first else { fail(usage: "guard-spellings FOLDER") }
        let hex = getenv("RELIABILITY_KEY_HEX").map { String(cString: $0) } ?? ""
        let key = environmentKey("RELIABILITY_KEY_HEX")
        var generator = SplitMix64(seed: environmentSeed())
        guard chdir(folder) == 0 else { fail("cannot enter \(folder)") }
        let context = Context(folder: folder, key: key, rawKey: "x'\(hex)'")
        orFail("template") { try context.makeTemplate() }
        spillControl(context)

        let spellings = generate(using: &generator, folder: folder)
        var counts: [Family: (total: Int, refused: Int, mismatches: Int)] = [:]
        var mismatches = 0
        for (index, spelling) in spellings.enumerated() {
            let effect = context.oracle(spelling, index: index)
            let (refused, guardedEffect) = context.guarded(spelling, index: index)
            counts[spelling.family, default: (0, 0, 0)].total += 1
            if refused { counts[spelling.family, default: (0, 0, 0)].refused += 1 }
            let problem: String?
            switch (spelling.family, refused, effect, guardedEffect) {
            case (.cipherCurrentValue, _, .acted(let what), _):
                problem = "not the current value: on an unguarded connection it \(what)"
            case (let family, false, _, _) where family.alwaysRefused:
                problem = "allowed, though refused whatever its effect"
            case (let family, true, _, _) where family.alwaysRefused: problem = nil
            case (_, true, .none, _): problem = "refused, though harmless on an unguarded connection"
            case (_, false, .acted(let what), _): problem = "allowed, though on an unguarded connection it \(what)"
            case (_, false, .none, .acted(let what)): problem = "allowed, and on the guarded connection it \(what)"
            default: problem = nil
            }
            if let problem {
                mismatches += 1
                counts[spelling.family, default: (0, 0, 0)].mismatches += 1
                if mismatches <= 40 {
                    report("mismatch [\(spelling.family.rawValue)] \(problem): \(printable(spelling))")
                }
            }
        }
        for family in Family.allCases {
            let count = counts[family, default: (0, 0, 0)]
            report("family \(family.rawValue): \(count.total) spellings, \(count.refused) refused, "
                + "\(count.total - count.refused) allowed, \(count.mismatches) mismatches")
        }
        let refused = counts.values.map(\.refused).reduce(0, +)
        report("spellings \(spellings.count) refused \(refused) allowed \(spellings.count - refused) "
            + "mismatches \(mismatches)")
        exit(mismatches == 0 ? 0 : 1)
    }

    /// The spill check's control: with TEMP_STORE=3 no spill ever opens a file, so a check that could not see one
    /// would pass as well; a decoy held open under SQLITE_TMPDIR must be seen, and is gone before the cases run.
    static func spillControl(_ context: Context) {
        let folder = getenv("SQLITE_TMPDIR").map { String(cString: $0) } ?? "/nonexistent"
        let decoy = folder + "/decoy-spill-control"
        let descriptor = open(decoy, O_CREAT | O_RDWR | O_EXCL, 0o600)
        let seen = descriptor >= 0 ? context.openTemporaryFile() : nil
        if descriptor >= 0 { close(descriptor) }
        unlink(decoy)
        guard seen == decoy else { fail("spill control: a decoy held open under SQLITE_TMPDIR (\(decoy)) was not seen") }
        report("spill control: a decoy held open under SQLITE_TMPDIR was seen")
    }

    static func printable(_ spelling: Spelling) -> String {
        let text = spelling.sql.replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\t", with: "\\t")
        return spelling.argument.map { "\(text)  [bound: \($0)]" } ?? text
    }

    // MARK: Spellings

    static let separators = [" ", "  ", "\n", "\t", " /* c */ ", "/**/", " -- c\n"]
    /// SQLite's ways to write a name: bare, "double", [bracketed], `backticked`, 'single' (\0 is the name).
    static let quotings = ["\0", "\"\0\"", "[\0]", "`\0`", "'\0'"]

    /// `PRAGMA [schema.]name = value` in one random spelling of each part. `value` nil: no value.
    static func pragma(_ name: String, _ value: String?, schemas: [String],
                       using generator: inout SplitMix64) -> String {
        let separator = { (generator: inout SplitMix64) in separators.randomElement(using: &generator) ?? " " }
        // ASCII letters only: SQLite's comparisons fold ASCII case, and `ı`.uppercased() is an ASCII `I`.
        let cased = String(name.map { $0.isASCII && Bool.random(using: &generator) ? Character($0.uppercased()) : $0 })
        let quotedName = (quotings.randomElement(using: &generator) ?? "\0").replacingOccurrences(of: "\0", with: cased)
        let schema = schemas.randomElement(using: &generator) ?? ""
        var text = (Bool.random(using: &generator) ? "PRAGMA" : "pragma") + separator(&generator) + schema + quotedName
        if let value {
            let spelled = spellValue(value, using: &generator)
            switch Int.random(in: 0..<5, using: &generator) {
            case 0: text += "=" + spelled
            case 1: text += " = " + spelled
            case 2: text += separator(&generator) + "=" + separator(&generator) + spelled
            case 3: text += "(" + spelled + ")"
            default: text += separator(&generator) + "(" + separator(&generator) + spelled + separator(&generator) + ")"
            }
        }
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: text += ";"
        case 1: text += " -- trailing\n"
        case 2: text += " ; /* after */"
        default: break
        }
        return text
    }

    /// A value as a bare token (when it is one), or quoted in one of SQLite's ways.
    static func spellValue(_ value: String, using generator: inout SplitMix64) -> String {
        let isNumber = value.first.map { "+-0123456789".contains($0) } ?? false
        let isIdentifier = value.first.map { $0.isLetter || $0 == "_" } ?? false
            && value.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
        let bare = isNumber || isIdentifier
        switch Int.random(in: 0..<(bare ? 6 : 4), using: &generator) {
        case 0: return "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
        case 1: return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        case 2: return "[" + value + "]"
        case 3: return "`" + value + "`"
        default: return value
        }
    }

    static let schemaPrefixes = ["", "", "main.", "MAIN.", "\"main\".", "[main].", "`main`.", "main . ", "Main."]

    static func generate(using generator: inout SplitMix64, folder: String) -> [Spelling] {
        var spellings: [Spelling] = []
        func add(_ family: Family, _ count: Int, _ make: (inout SplitMix64) -> String) {
            for _ in 0..<count { spellings.append(Spelling(family: family, sql: make(&generator))) }
        }
        // temp_store: every value SQLite's getTempStore reads as FILE (first character 1, or FILE in any ASCII
        // case), and the neighbours it reads as DEFAULT or MEMORY, in every schema (temp_store has none: it is
        // the connection's).
        let tempValues = ["0", "1", "2", "3", "9", "10", "11", "19", "01", "001", "012", "-1", "+1", "-0", "1.5",
                          "1.0", "1e0", "1e5", "2.9", "0x1", "1x", "1 ", " 1", "2x", "100000000000000000000000",
                          "-100000000000000000000000", "file", "FILE", "File", "fIlE", "file ", "files", "fil", "memory",
                          "MEMORY", "Memory", "default", "DEFAULT", "", "on", "yes", "true", "off",
                          "\u{FF46}ile", "\u{212A}", "1\u{0301}"]
        for value in tempValues {
            add(.tempStore, 36) { pragma("temp_store", value, schemas: schemaPrefixes + ["temp.", "TEMP."], using: &$0) }
        }
        add(.tempStore, 60) { pragma("temp_store", nil, schemas: schemaPrefixes, using: &$0) }
        for name in ["temp_stor", "temp_storee", "tmp_store", "temp\u{017F}tore", "temp_st\u{00F6}re"] {
            add(.tempStore, 12) { pragma(name, "1", schemas: schemaPrefixes, using: &$0) }
        }
        // Key pragmas, with a key other than the database's, and names beside them.
        for (name, value) in [("key", "other"), ("rekey", "other"), ("hexkey", "00112233"), ("hexrekey", "00112233"),
                              ("textkey", "other"), ("textrekey", "other"), ("key", "other key"), ("rekey", "1")] {
            add(.key, 40) { pragma(name, value, schemas: schemaPrefixes + ["temp.", "TEMP."], using: &$0) }
        }
        for name in ["keys", "key_", "rekeys", "hexkeys", "\u{212A}ey", "re\u{212A}ey", "\u{FF4B}ey", "k\u{0435}y",
                     "textkey2", "akey"] {
            add(.key, 12) { pragma(name, "other", schemas: schemaPrefixes, using: &$0) }
        }
        // Cipher settings, each with a value other than the current one, and names beside them.
        let cipherSettings = [("cipher_page_size", "1024"), ("cipher_page_size", "8192"), ("cipher_page_size", "4096"),
                              ("cipher_use_hmac", "ON"), ("cipher_use_hmac", "OFF"),
                              ("cipher_use_hmac", "0"), ("cipher_use_hmac", "no"), ("kdf_iter", "1"),
                              ("fast_kdf_iter", "3"),
                              ("cipher_hmac_algorithm", "HMAC_SHA1"), ("cipher_kdf_algorithm", "PBKDF2_HMAC_SHA256"),
                              ("cipher_plaintext_header_size", "32"), ("cipher_compatibility", "3"),
                              ("cipher_compatibility", "1"), ("cipher_hmac_pgno", "be"),
                              ("cipher_hmac_salt_mask", "x'00'"), ("cipher_salt", "x'000102030405060708090a0b0c0d0e0f'"),
                              ("cipher_default_page_size", "1024"), ("cipher_default_kdf_iter", "1"),
                              ("cipher_default_use_hmac", "OFF"), ("cipher_default_compatibility", "1"),
                              ("cipher_default_hmac_algorithm", "HMAC_SHA1"),
                              ("cipher_default_kdf_algorithm", "PBKDF2_HMAC_SHA1"),
                              ("cipher_default_plaintext_header_size", "16")]
        for (name, value) in cipherSettings where !isCurrent(name, value) {
            add(.cipher, 24) { pragma(name, value, schemas: schemaPrefixes, using: &$0) }
        }
        // The same names with the value they already have (the configuration's): no effect, and still refused.
        for (name, value) in currentCipherSettings {
            add(.cipherCurrentValue, 12) { pragma(name, value, schemas: schemaPrefixes, using: &$0) }
        }
        for name in ["cipher_page_size", "cipher_use_hmac", "kdf_iter", "cipher_settings", "cipher_default_settings",
                     "cipher_version", "cipher_integrity_check", "cipher_default_kdf_iter"] {
            add(.cipher, 10) { pragma(name, nil, schemas: schemaPrefixes, using: &$0) }
        }
        for name in ["ciphr_page_size", "xcipher_use_hmac", "kdf_iters", "c\u{0131}pher_use_hmac", "fast_kdf_iter2"] {
            add(.cipher, 12) { pragma(name, "1", schemas: schemaPrefixes, using: &$0) }
        }
        // page_size: SQLCipher's cipher_page_size on a keyed schema; SQLite's own on temp.
        for value in pageSizeValues {
            add(.pageSize, 10) { pragma("page_size", value, schemas: schemaPrefixes, using: &$0) }
            add(.pageSize, 4) { pragma("page_size", value, schemas: ["temp.", "TEMP.", "\"temp\"."], using: &$0) }
        }
        add(.pageSize, 10) { pragma("page_size", nil, schemas: schemaPrefixes, using: &$0) }
        for name in ["page_sizes", "pagesize", "cache_size"] {
            add(.pageSize, 6) { pragma(name, "1024", schemas: schemaPrefixes, using: &$0) }
        }
        // VACUUM INTO: SQLite attaches the copy with `ATTACH %Q`; SQLCipher keys it with the main key unless
        // the name is a URI (exactly `file:` first) with a key parameter.
        let targets = ["copy.db", "./copy.db", "\(folder)/copy.db", "file:copy.db", "file:copy.db?key=",
                       "file:copy.db?key=other", "file:copy.db?hexkey=00112233", "file:copy.db?textkey=other",
                       "file:copy.db?k%65y=", "file:copy.db?mode=rwc&key=", "file:\(folder)/copy.db?key=",
                       "file://localhost\(folder)/copy.db?key=", "FILE:copy.db?key=", "File:copy.db?key=",
                       "file:copy.db?cache=private", "file:copy.db?KEY=", "file:copy.db?key", "file:copy.db?x=1&key=",
                       "file:copy.db?%6Bey=", "file:copy.db?k%00ey=", "file:copy.db?=x&key=", "file:copy.db#?key=",
                       "file:copy.db?keys=", "file:copy.db?hexkey=", "file:copy.db?hexkey=&key=", "file:copy.db?hexkey=0a",
                       "file:copy.db?textkey", "file:copy.db?vfs=unix&textkey=t"]
        for target in targets {
            for _ in 0..<8 {
                let separator = separators.randomElement(using: &generator) ?? " "
                let schema = ["", "main ", "MAIN ", "\"main\" "].randomElement(using: &generator) ?? ""
                let quoted = "'" + target.replacingOccurrences(of: "'", with: "''") + "'"
                if Int.random(in: 0..<4, using: &generator) == 0 {
                    spellings.append(Spelling(family: .vacuumInto, sql: "VACUUM \(schema)INTO ?", argument: target))
                } else {
                    let verb = Bool.random(using: &generator) ? "VACUUM" : "vacuum"
                    spellings.append(Spelling(family: .vacuumInto,
                                              sql: "\(verb)\(separator)\(schema)INTO\(separator)\(quoted)"))
                }
            }
        }
        // ATTACH and sqlcipher_export: refused in every form and place.
        let attaches = ["ATTACH 'a.db' AS a", "ATTACH DATABASE 'a.db' AS a KEY ''", "attach 'a.db' as a key 'k'",
                        "ATTACH 'file:a.db?key=' AS a", "ATTACH ':memory:' AS a", "ATTACH '' AS a",
                        "/*x*/ AtTaCh\n'a.db' AS \"a\" KEY x''", "ATTACH 'a.db' || '' AS a KEY substr('k', 1, 0)"]
        // Names SQLCipher does not (yet) know but that begin with `cipher`, with a value: refused, so that a
        // setting a later SQLCipher adds is refused before anyone has looked at it.
        let futureCipherSettings = ["PRAGMA cipher_kdf_iter = 1000", "PRAGMA cipher_future_setting = 1",
                                    "PRAGMA main.CIPHER_X('y')"]
        let exports = ["SELECT sqlcipher_export('temp')", "SELECT SQLCIPHER_EXPORT('temp', 'main')",
                       "SELECT \"sqlcipher_export\"('temp')", "SELECT [SqlCipher_Export]('temp')",
                       "WITH e(r) AS (SELECT sqlcipher_export('temp')) SELECT r FROM e",
                       "SELECT * FROM (SELECT sqlcipher_export('temp'))",
                       "CREATE TEMP VIEW v AS SELECT sqlcipher_export('temp') AS r; SELECT * FROM v",
                       "CREATE TEMP TABLE f(x); CREATE TEMP TRIGGER g AFTER INSERT ON f BEGIN SELECT "
                           + "sqlcipher_export('temp'); END; INSERT INTO f VALUES (1)",
                       "SELECT count(*) FROM t WHERE sqlcipher_export('temp') IS NOT NULL"]
        for sql in attaches + exports + futureCipherSettings {
            for _ in 0..<6 {
                let separator = separators.randomElement(using: &generator) ?? " "
                spellings.append(Spelling(family: .alwaysRefused,
                                          sql: sql.replacingOccurrences(of: " ", with: separator)))
            }
        }
        // Last, once: memory security can be turned on but never off again in a process.
        spellings.append(Spelling(family: .cipher, sql: pragma("cipher_memory_security", "ON", schemas: schemaPrefixes,
                                                             using: &generator)))
        return spellings
    }
}
