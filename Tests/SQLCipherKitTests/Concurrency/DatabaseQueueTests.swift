import ProcessTestSupport
import Testing
@testable import SQLCipherKit

@Suite("DatabaseQueue", .hangGuard(.minutes(2), hang: "a queue job whose caller is never resumed"))
struct DatabaseQueueTests {
    @Test("a DatabaseQueue serializes concurrent async writes, and reads see committed data")
    func queue() async throws {
        let folder = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: folder.file("queue.db"), key: .passphrase("queue"))
        try await queue.write { try $0.execute("CREATE TABLE t(a)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask { try await queue.write { try $0.execute("INSERT INTO t VALUES (?)", [index]) } }
            }
            try await group.waitForAll()
        }
        #expect(try await queue.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") } == 20)
        await #expect(throws: (any Error).self) {
            try await queue.write { db in
                try db.execute("INSERT INTO t VALUES (99)")
                throw CancellationError()
            }
        }
        #expect(try await queue.read { try $0.scalar(Int.self, "SELECT count(*) FROM t WHERE a = 99") } == 0,
                "rolled back")
        queue.close()
        let closedRead = await outcome { try await queue.read { _ in 1 } }
        #expect((closedRead.error as? SQLCipherError)?.kind == .misuse)
    }
}
