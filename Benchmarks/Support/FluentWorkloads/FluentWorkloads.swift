import BenchmarkSupport
import FluentKit
import Foundation

/// The Fluent CRUD workload: on a fresh file, batched creates, filtered queries, updates and deletes, each part
/// timed by itself (set-up, the checks between parts and the shutdown are not timed), through one `Database` as a
/// request handler holds one.
public enum FluentCRUD {
    /// The measured parts, in the order ``run(_:_:folder:)`` returns their times; "total" is their sum.
    public static let parts = ["creates", "queries", "updates", "deletes", "total"]

    /// Text every row carries: the encrypted file must not hold it, the plain one must.
    static let marker = "fluent-benchmark item"

    public static func run(_ variant: FluentDriverVariant, _ data: FluentData, folder: ScratchFolder) async throws
        -> [Duration] {
        let path = folder.freshFile("crud-\(variant).db")
        let open = try variant.open(path)
        let times: [Duration]
        do {
            times = try await measure(try open.db(), data)
        } catch {
            await open.shutdown()
            throw error
        }
        await open.shutdown()
        try variant.checkFile(path, marker: marker)
        return times
    }

    private static func measure(_ db: any Database, _ data: FluentData) async throws -> [Duration] {
        try await FluentItem.migrate(on: db)
        let models = data.models()

        // 50 statements of 100 rows each (`[Model].create(on:)`: one INSERT with 100 rows of values).
        let creates = try await SideBySide.timeAsync {
            for start in stride(from: 0, to: models.count, by: FluentData.batchSize) {
                try await Array(models[start..<min(start + FluentData.batchSize, models.count)]).create(on: db)
            }
        }
        try await expectCount(db, FluentData.rowCount, "after the creates")

        // 500 queries: a category, a lowest score, best scores first, 20 rows at most.
        var results: [(Int, Double)] = []
        results.reserveCapacity(FluentData.queryCount)
        let queries = try await SideBySide.timeAsync {
            for index in 0..<FluentData.queryCount {
                results.append(try await FluentQueries.filtered(db, data, index))
            }
        }
        for (index, result) in results.enumerated() {
            try FluentQueries.check(data, index, rows: result.0, sum: result.1)
        }

        // 500 models changed and saved one by one (`update(on:)`: UPDATE … WHERE id = ?), then 10 bulk updates of
        // a category each (`query.filter(…).set(…).update()`).
        let updates = try await SideBySide.timeAsync {
            for index in data.updatedIndices {
                let model = models[index]
                model.score += 0.5
                model.done = true
                try await model.update(on: db)
            }
            for category in FluentData.bulkUpdateCategories {
                try await FluentItem.query(on: db).filter(\.$category == category).set(\.$done, to: true).update()
            }
        }
        let done = try await FluentItem.query(on: db).filter(\.$done == true).count()
        guard done == data.expectedDone else {
            throw FluentBenchmarkFailure("\(done) rows done after the updates, expected \(data.expectedDone)")
        }

        // 500 models deleted one by one (`delete(on:)`), then 10 bulk deletes of a category each.
        let deletes = try await SideBySide.timeAsync {
            for index in data.deletedIndices {
                try await models[index].delete(on: db)
            }
            for category in FluentData.bulkDeleteCategories {
                try await FluentItem.query(on: db).filter(\.$category == category).delete()
            }
        }
        try await expectCount(db, data.expectedRemaining, "after the deletes")
        return [creates, queries, updates, deletes, creates + queries + updates + deletes]
    }

    private static func expectCount(_ db: any Database, _ expected: Int, _ when: String) async throws {
        let count = try await FluentItem.query(on: db).count()
        guard count == expected else { throw FluentBenchmarkFailure("\(count) rows \(when), expected \(expected)") }
    }
}

/// Concurrent reads: ``FluentData/concurrentQueryCount`` filtered queries shared out among 1, 2 or 4 tasks, each
/// with its own `Database` on the next event loop (as concurrent requests of a Vapor app), on a file of
/// ``FluentData/rowCount`` rows. The time is the wall-clock time until the last task has its rows.
public enum FluentConcurrentReads {
    /// The task counts measured.
    public static let taskCounts = [1, 2, 4]

    /// The variant's name for `tasks` tasks.
    public static func name(_ variant: FluentDriverVariant, tasks: Int) -> String {
        "\(variant.rawValue), \(tasks) task\(tasks == 1 ? "" : "s")"
    }

    /// Writes the rows the reads read (untimed, once per process), through the variant's own driver.
    public static func fixture(_ variant: FluentDriverVariant, _ data: FluentData, folder: ScratchFolder) async throws
        -> OpenFluentDatabase {
        let open = try variant.open(folder.freshFile("reads-\(variant).db"))
        let db = try open.db()
        try await FluentItem.migrate(on: db)
        let models = data.models()
        for start in stride(from: 0, to: models.count, by: FluentData.batchSize) {
            try await Array(models[start..<min(start + FluentData.batchSize, models.count)]).create(on: db)
        }
        return open
    }

    public static func run(_ open: OpenFluentDatabase, _ data: FluentData, tasks: Int) async throws -> Duration {
        let databases = try (0..<tasks).map { _ in try open.db() }
        var results: [[(Int, Int, Double)]] = []
        let elapsed = try await SideBySide.timeAsync {
            results = try await withThrowingTaskGroup(of: [(Int, Int, Double)].self) { group in
                for (task, db) in databases.enumerated() {
                    group.addTask {
                        var found: [(Int, Int, Double)] = []
                        for index in stride(from: task, to: FluentData.concurrentQueryCount, by: tasks) {
                            let (rows, sum) = try await FluentQueries.filtered(db, data, index)
                            found.append((index, rows, sum))
                        }
                        return found
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        let all = results.joined()
        guard all.count == FluentData.concurrentQueryCount else {
            throw FluentBenchmarkFailure("\(all.count) queries answered, expected \(FluentData.concurrentQueryCount)")
        }
        for (index, rows, sum) in all {
            try FluentQueries.check(data, index, rows: rows, sum: sum)
        }
        return elapsed
    }
}
