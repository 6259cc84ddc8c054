#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ReliabilitySupport
@testable import SQLCipherKit

/// `group-commit-full DATABASE WRITES`: a pool's group commit whose commit fails on a full disk. A writer session
/// holds the pool's writer while WRITES `async` writes queue (one group: its bounds are out of reach), each inserting
/// a row of 3,000 bytes; then every file this process writes is capped just above the sizes its files have now
/// (RLIMIT_FSIZE, SIGXFSZ ignored: the failed write(2) a full disk gives), and the session ends. The group's jobs fit
/// in the page cache, so the failure lands on the commit. Reports `queued N`, then `write I ok` or
/// `write I error KIND` for each write, then, with the cap lifted, `rows N` (the rows the database holds) and
/// `after ok` once a new write commits.
enum GroupCommitFull {
    static func run(_ arguments: [String]) {
        guard arguments.count == 2, let writes = Int(arguments[1]), writes > 0 else {
            fail(usage: "group-commit-full DATABASE WRITES")
        }
        let path = arguments[0]
        let pool = orFail("open") {
            try DatabasePool(path: path, key: environmentKey("RELIABILITY_KEY_HEX"),
                             configuration: .init(readerCount: 1, groupCommit: .init(maxJobs: 10_000,
                                                                                      maxDuration: .seconds(60))))
        }
        orFail("schema") {
            try pool.write { db in try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, payload BLOB)") }
        }
        let finished = DispatchSemaphore(value: 0)
        Task {
            await queueAndFail(pool, path: path, writes: writes)
            finished.signal()
        }
        finished.wait()
        pool.close()
    }

    private static func queueAndFail(_ pool: DatabasePool, path: String, writes: Int) async {
        let (release, releaseNow) = AsyncStream<Void>.makeStream()
        let (held, holding) = AsyncStream<Void>.makeStream()
        let session = Task {
            try await pool.writeSession { _ in
                holding.yield()
                for await _ in release { break }
            }
        }
        for await _ in held { break }
        let tasks = (0..<writes).map { index in
            Task {
                try await pool.write { db in
                    try db.execute("INSERT INTO item(id, payload) VALUES (?, zeroblob(3000))", index)
                }
            }
        }
        var waited = 0
        while pool.groupCommitQueueCount < writes, waited < 2000 {
            try? await Task.sleep(for: .milliseconds(5))
            waited += 1
        }
        guard pool.groupCommitQueueCount == writes else { fail("only \(pool.groupCommitQueueCount) writes queued") }
        report("queued \(writes)")

        let largest = ["", "-wal", "-shm"].compactMap { suffix -> Int? in
            var info = stat()
            return stat(path + suffix, &info) == 0 ? Int(info.st_size) : nil
        }.max() ?? 0
        signal(SIGXFSZ, SIG_IGN)
        var cap = rlimit(rlim_cur: rlim_t(largest + 16_384), rlim_max: rlim_t.max)
        guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &cap) == 0 else { fail("setrlimit failed: errno \(errno)") }
        releaseNow.finish()
        _ = await outcome(of: session)
        for (index, task) in tasks.enumerated() {
            switch await outcome(of: task) {
            case .success: report("write \(index) ok")
            case .failure(let error as SQLCipherError): report("write \(index) error \(error.kind.rawValue)")
            case .failure(let error): report("write \(index) error untyped \(error)")
            }
        }

        cap.rlim_cur = rlim_t.max
        guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &cap) == 0 else { fail("setrlimit failed: errno \(errno)") }
        do {
            let rows = try await pool.read { db in try db.scalar(Int.self, "SELECT count(*) FROM item") ?? -1 }
            report("rows \(rows)")
            try await pool.write { db in try db.execute("INSERT INTO item(id, payload) VALUES (-1, x'00')") }
            report("after ok")
        } catch {
            report("after error \(error)")
        }
    }

    private static func outcome<Value>(of task: Task<Value, any Error>) async -> Result<Value, any Error> {
        do { return .success(try await task.value) } catch { return .failure(error) }
    }
}
