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
        print("pool read back \(try await writeAndReadBack(marker, write: pool.write, read: pool.read))")
        pool.close()
        let queue = try DatabaseQueue(path: directory + "/queue.db", key: .passphrase(passphrase))
        print("queue read back \(try await writeAndReadBack(marker, write: queue.write, read: queue.read))")
        queue.close()

        do throws(SQLCipherError) {
            let wrong = try Database(path: directory + "/queue.db", key: .passphrase(passphrase + "-wrong"))
            wrong.close()
            print("wrong key accepted")
        } catch {
            print(error.kind == .wrongKeyOrNotADatabase ? "wrong key refused" : "wrong key: unexpected \(error.kind)")
        }
    }
}

/// Creates a table through `write`, stores `marker` in it, and tells whether `read` gives it back.
func writeAndReadBack(
    _ marker: String,
    write: (@escaping @Sendable (Database) throws -> Void) async throws -> Void,
    read: (@escaping @Sendable (Database) throws -> String?) async throws -> String?
) async throws -> Bool {
    try await write { db in
        try db.execute("CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT)")
        try db.execute("INSERT INTO note(body) VALUES (?)", [marker])
    }
    return try await read { db in try db.textValue("SELECT body FROM note") } == marker
}
