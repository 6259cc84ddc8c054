// GRDB on SQLCipher: `grdb-on-sqlcipher DATABASE` (key in the environment variable GRDB_ON_SQLCIPHER_KEY, never
// on the command line). Keys every connection in GRDB's prepareDatabase, writes records, prints
// `cipher_version …` and `sqlite_version …` as GRDB reads them, then proves a wrong key is refused and the
// records read back. Exit status 0 only when all of that holds.
#if canImport(Glibc)
import Glibc
#endif
import GRDB
import SQLCipherKeying

struct Note: Codable, FetchableRecord, PersistableRecord {
    var id: Int64?
    var body: String
}

func fail(_ message: String) -> Never {
    print("grdb-on-sqlcipher: \(message)")
    exit(1)
}

/// A GRDB configuration whose every connection is keyed with `key` before its first statement.
func configuration(key: [UInt8]) -> Configuration {
    var configuration = Configuration()
    configuration.prepareDatabase { db in
        let connection = db.sqliteConnection.map { UnsafeMutableRawPointer($0) }
        let code = key.withUnsafeBytes { sqlcipherkeying_key(connection, $0.baseAddress, Int32($0.count)) }
        guard code == 0 else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "sqlite3_key_v2 failed") }
    }
    return configuration
}

guard CommandLine.arguments.count == 2 else { fail("usage: grdb-on-sqlcipher DATABASE") }
guard let keyText = getenv("GRDB_ON_SQLCIPHER_KEY") else { fail("GRDB_ON_SQLCIPHER_KEY is not set") }
let path = CommandLine.arguments[1]
let key = Array(String(cString: keyText).utf8)

do {
    let queue = try DatabaseQueue(path: path, configuration: configuration(key: key))
    try queue.write { db in
        guard let version = try String.fetchOne(db, sql: "PRAGMA cipher_version") else {
            fail("no cipher_version: GRDB is not running on SQLCipher")
        }
        print("cipher_version \(version)")
        print("sqlite_version \(try String.fetchOne(db, sql: "SELECT sqlite_version()") ?? "?")")
        try db.create(table: "note", ifNotExists: true) { table in
            table.autoIncrementedPrimaryKey("id")
            table.column("body", .text).notNull()
        }
        for body in ["grdb-marker one", "grdb-marker two"] {
            try Note(id: nil, body: body).insert(db)
        }
    }
    try queue.close()

    do {
        let wrong = try DatabaseQueue(path: path, configuration: configuration(key: key + [0x21]))
        _ = try wrong.read { try Note.fetchCount($0) }
        fail("a wrong key opened the database")
    } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB {
        print("wrong key refused")
    }

    let reopened = try DatabaseQueue(path: path, configuration: configuration(key: key))
    let notes = try reopened.read { try Note.fetchAll($0) }
    guard notes.map(\.body).suffix(2) == ["grdb-marker one", "grdb-marker two"] else { fail("records did not read back") }
    print("records read back \(notes.count)")
} catch {
    fail("\(error)")
}
