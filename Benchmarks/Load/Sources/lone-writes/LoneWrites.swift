import Foundation
import SQLCipherKit

/// One connection's writes, counted in instructions (`Benchmarks/Load/lone-writes.sh` runs it under callgrind):
///
///     lone-writes <grouped|ungrouped> COUNT FOLDER
///
/// opens a `DatabasePool` on a fresh file in FOLDER with group commit on (its default) or off, and makes COUNT
/// `async` writes one after another, each awaited before the next starts: a lone write, as a server with one
/// client makes them. With nothing waiting beside it, a grouped write must commit at once; the script compares
/// the instructions per write of both, so the cost of the group path for a lone write is measured without the
/// machine's load (a timed run at one connection moves by more than the difference). Checks the rows at the end.
/// `main` is synchronous and waits for a task on a semaphore: valgrind cannot run an `async` main (the main thread
/// parks in libdispatch's `sigsuspend`, and valgrind dies of SIGSEGV there); the main thread is not one of the
/// cooperative pool's, so its wait holds none of them (the task is detached: `main` runs on the main actor, and a
/// task that inherited it would wait for the thread that waits for it).
@main
enum LoneWrites {
    static func main() {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await run()
            done.signal()
        }
        done.wait()
    }

    static func run() async {
        let arguments = CommandLine.arguments
        guard arguments.count == 4, ["grouped", "ungrouped"].contains(arguments[1]), let count = Int(arguments[2]),
              count >= 0 else {
            FileHandle.standardError.write(Data("usage: lone-writes <grouped|ungrouped> COUNT FOLDER\n".utf8))
            exit(64)
        }
        let grouped = arguments[1] == "grouped"
        let path = arguments[3] + "/lone-\(arguments[1]).db"
        do {
            try? FileManager.default.removeItem(atPath: path)
            let configuration = DatabasePool.Configuration(groupCommit: grouped ? .default : .off)
            let pool = try DatabasePool(unencryptedPath: path, configuration: configuration)
            try await pool.write { db in
                try db.execute("CREATE TABLE item(id INTEGER PRIMARY KEY, title TEXT NOT NULL)")
            }
            for index in 0..<count {
                try await pool.write { db in
                    try db.execute("INSERT INTO item(title) VALUES (?)", "item \(index)")
                }
            }
            let rows = try await pool.read { db in try db.scalar(Int.self, "SELECT count(*) FROM item") }
            guard rows == count else {
                throw LoneWritesError(description: "\(rows ?? -1) rows, expected \(count)")
            }
            pool.close()
        } catch {
            FileHandle.standardError.write(Data("lone-writes: \(error)\n".utf8))
            exit(1)
        }
    }
}

struct LoneWritesError: Error, CustomStringConvertible {
    let description: String
}
