// A downstream app: only `import SQLCipherKit`, linked against the artifact with no other flag.
import SQLCipherKit
#if canImport(Glibc)
import Glibc
#endif

func check(_ ok: Bool, _ what: String) {
    guard ok else { print("FAIL: \(what)"); exit(1) }
    print("ok: \(what)")
}

let path = CommandLine.arguments[1], marker = CommandLine.arguments[2]
do {
    let facts = try Engine.selfCheck()
    print("cipher_version: \(facts.cipherVersion)")
    print("engine: \(facts)")
    let key = try Key.passphrase("downstream link-test passphrase")
    let writer = try Database(path: path, key: key)
    try writer.execute("CREATE TABLE t(v TEXT); INSERT INTO t VALUES('\(marker)')")
    writer.close()
    do {
        _ = try Database(path: path, key: .passphrase("a wrong passphrase"), mode: .readOnly)
        check(false, "a wrong key is refused")
    } catch SQLCipherError.wrongKeyOrNotADatabase {
        check(true, "a wrong key is refused")
    }
    let reader = try Database(path: path, key: key, mode: .readOnly)
    check(try reader.textValue("SELECT v FROM t") == marker, "the marker reads back with the right key")
} catch {
    print("FAIL: \(error)")
    exit(1)
}
