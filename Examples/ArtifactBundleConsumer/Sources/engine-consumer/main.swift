// Proves the artifact bundle's engine is SQLCipher and encrypts: `engine-consumer DATABASE` (the key comes from
// the environment variable ENGINE_CONSUMER_KEY, never the command line). Prints `cipher_version …`, writes a
// row holding a marker into DATABASE, reopens it with a wrong key (must fail) and the right one (must read the
// marker back). Exit status 0 only when all of that holds.
#if canImport(Glibc)
import Glibc
#endif
import SQLCipherEngine

func fail(_ message: String) -> Never {
    print("engine-consumer: \(message)")
    exit(1)
}

/// Opens `path` keyed with `key` through sqlite3_key_v2.
func open(_ path: String, key: [UInt8]) -> OpaquePointer {
    var db: OpaquePointer?
    guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db else {
        fail("cannot open \(path)")
    }
    guard sqlite3_key_v2(db, "main", key, Int32(key.count)) == SQLITE_OK else { fail("sqlite3_key_v2 failed") }
    return db
}

/// The first column of the first row of `sql`, as text; nil when there is no row or the statement fails.
func text(_ db: OpaquePointer, _ sql: String) -> String? {
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { return nil }
    defer { sqlite3_finalize(statement) }
    guard sqlite3_step(statement) == SQLITE_ROW, let value = sqlite3_column_text(statement, 0) else { return nil }
    return String(cString: value)
}

guard CommandLine.arguments.count == 2 else { fail("usage: engine-consumer DATABASE") }
guard let keyText = getenv("ENGINE_CONSUMER_KEY") else { fail("ENGINE_CONSUMER_KEY is not set") }
let path = CommandLine.arguments[1]
let key = Array(String(cString: keyText).utf8)
let marker = "artifact-bundle-marker"

let db = open(path, key: key)
guard let version = text(db, "PRAGMA cipher_version") else { fail("no cipher_version: this engine is not SQLCipher") }
print("cipher_version \(version)")
guard sqlite3_exec(db, "CREATE TABLE IF NOT EXISTS t(x); INSERT INTO t VALUES ('\(marker)')", nil, nil, nil) == SQLITE_OK
else { fail("write failed: \(String(cString: sqlite3_errmsg(db)))") }
sqlite3_close(db)

let wrong = open(path, key: key + [0x21])
guard text(wrong, "SELECT count(*) FROM sqlite_schema") == nil else { fail("a wrong key opened the database") }
sqlite3_close(wrong)
print("wrong key refused")

let reopened = open(path, key: key)
guard text(reopened, "SELECT x FROM t LIMIT 1") == marker else { fail("the marker did not read back") }
sqlite3_close(reopened)
print("marker read back")
