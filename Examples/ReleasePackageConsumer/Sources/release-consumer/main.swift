// Uses the Swift API through the release package: the self-check, a pool (the key derived once) and a queue,
// writes and reads back. Usage: release-consumer DIRECTORY MARKER, with the passphrase in RELEASE_CONSUMER_KEY.
import Foundation
import SQLCipherKit

@main
struct ReleaseConsumer {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let passphrase = ProcessInfo.processInfo.environment["RELEASE_CONSUMER_KEY"] else {
            FileHandle.standardError.write(Data("usage: RELEASE_CONSUMER_KEY=… release-consumer DIRECTORY MARKER\n".utf8))
            exit(64)
        }
        let directory = arguments[1], marker = arguments[2]
        let facts = try Engine.selfCheck()
        print("engine: \(facts)")
        print("cipher_version \(facts.cipherVersion)")

        let pool = try DatabasePool(path: directory + "/pool.db", key: .passphrase(passphrase))
        try await pool.write { db in
            try db.execute("CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT)")
            try db.execute("INSERT INTO note(body) VALUES (?)", [marker])
        }
        let pooled = try await pool.read { db in try db.textValue("SELECT body FROM note") }
        pool.close()
        print("pool read back \(pooled == marker)")

        let queue = try DatabaseQueue(path: directory + "/queue.db", key: .passphrase(passphrase))
        try await queue.write { db in
            try db.execute("CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT)")
            try db.execute("INSERT INTO note(body) VALUES (?)", [marker])
        }
        let queued = try await queue.read { db in try db.textValue("SELECT body FROM note") }
        queue.close()
        print("queue read back \(queued == marker)")

        do throws(SQLCipherError) {
            let wrong = try Database(path: directory + "/queue.db", key: .passphrase(passphrase + "-wrong"))
            wrong.close()
            print("wrong key accepted")
        } catch {
            print(error.kind == .wrongKeyOrNotADatabase ? "wrong key refused" : "wrong key: unexpected \(error.kind)")
        }
    }
}
