import SQLCipherKit

/// `rekey DATABASE`: opens with RELIABILITY_KEY_HEX, reports `rekeying`, rekeys to RELIABILITY_NEW_KEY_HEX and
/// reports `rekeyed` (after SQLCipherKit has verified every page under the new key).
enum RekeyRun {
    static func run(_ arguments: [String]) {
        guard arguments.count == 1 else { fail(usage: "rekey DATABASE") }
        let newKey = environmentKey("RELIABILITY_NEW_KEY_HEX")
        let db = orFail("open") {
            try Database(path: arguments[0], key: environmentKey("RELIABILITY_KEY_HEX"), mode: .readWrite)
        }
        orFail("read") { _ = try db.scalar(Int.self, "SELECT count(*) FROM sqlite_schema") }
        report("rekeying")
        orFail("rekey") { try db.rekey(to: newKey) }
        report("rekeyed")
        db.close()
    }
}
