import FluentKit
import Foundation
import SQLKit

/// The model every Fluent variant writes and reads, as a Vapor app declares one: a UUID identifier, text, an
/// integer it filters on (indexed), a double it filters and sorts on, a flag, a creation timestamp.
public final class FluentItem: Model, @unchecked Sendable {
    public static let schema = "items"

    @ID(key: .id) public var id: UUID?
    @Field(key: "name") public var name: String
    @Field(key: "category") public var category: Int
    @Field(key: "score") public var score: Double
    @Field(key: "done") public var done: Bool
    @Timestamp(key: "created_at", on: .create) public var createdAt: Date?

    public init() {}

    /// Row `index` of ``FluentData``.
    public init(_ data: FluentData, _ index: Int) {
        id = data.ids[index]
        name = data.names[index]
        category = data.categories[index]
        score = data.scores[index]
        done = false
    }

    /// The table and its index, through Fluent's schema builder and SQLKit (untimed in every workload).
    public static func migrate(on db: any Database) async throws {
        try await db.schema(schema)
            .id()
            .field("name", .string, .required)
            .field("category", .int, .required)
            .field("score", .double, .required)
            .field("done", .bool, .required)
            .field("created_at", .datetime)
            .create()
        guard let sql = db as? any SQLDatabase else { throw FluentBenchmarkFailure("\(type(of: db)) is no SQLDatabase") }
        try await sql.create(index: "items_category").on(schema).column("category").run()
    }
}

/// A failed check or step of a Fluent benchmark.
public struct FluentBenchmarkFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The rows and the queries of the Fluent workloads: generated deterministically, once per process, so every
/// variant writes, reads, updates and deletes exactly the same values; with what each phase must find.
public struct FluentData: Sendable {
    /// The rows the creates write (and the concurrent reads' file holds).
    public static let rowCount = 5_000
    /// Rows per create statement (`[FluentItem].create(on:)`, one multi-row INSERT).
    public static let batchSize = 100
    /// Distinct values of `category`.
    public static let categoryCount = 50
    /// Filtered queries of the CRUD workload.
    public static let queryCount = 500
    /// Rows a filtered query returns at most (`limit`).
    public static let pageSize = 20
    /// Filtered queries of the concurrent-read workload, shared out among its tasks.
    public static let concurrentQueryCount = 1_200
    /// Categories the bulk updates (`set … update()`) change: 0 up to this.
    public static let bulkUpdateCategories = 0..<10
    /// Categories the bulk deletes remove.
    public static let bulkDeleteCategories = 40..<50

    public let ids: [UUID]
    public let names: [String]
    public let categories: [Int]
    public let scores: [Double]
    /// Each filtered query's category and lowest score.
    public let queries: [(category: Int, minScore: Double)]
    /// The rows the filtered queries return, and the sum of their scores (query `q` at `queries[q % queryCount]`).
    public let queryRows: [Int]
    public let queryScoreSums: [Double]
    /// The rows updated one by one (model `update(on:)`) and deleted one by one (model `delete(on:)`).
    public let updatedIndices: [Int]
    public let deletedIndices: [Int]
    /// Rows whose `done` is true after the updates; rows left after the deletes.
    public let expectedDone: Int
    public let expectedRemaining: Int

    public init() {
        var state: UInt64 = 0xF1_0E47_BE4C_4A11
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 11
        }
        var ids: [UUID] = [], names: [String] = [], categories: [Int] = [], scores: [Double] = []
        for index in 0..<FluentData.rowCount {
            var bytes = [UInt8](repeating: 0, count: 16)
            for byte in bytes.indices { bytes[byte] = UInt8(truncatingIfNeeded: next()) }
            bytes[6] = bytes[6] & 0x0F | 0x40
            bytes[8] = bytes[8] & 0x3F | 0x80
            ids.append(UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                   bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])))
            names.append("fluent-benchmark item \(index) " + String(repeating: "x", count: Int(next() % 24)))
            categories.append(index % FluentData.categoryCount)
            scores.append(Double(next() % 10_000) / 100)
        }
        var queries: [(category: Int, minScore: Double)] = []
        var queryRows: [Int] = [], queryScoreSums: [Double] = []
        for query in 0..<FluentData.queryCount {
            let category = (query * 7) % FluentData.categoryCount
            let minScore = Double((query * 37) % 90)
            queries.append((category, minScore))
            let page = categories.indices.filter { categories[$0] == category && scores[$0] >= minScore }
                .map { scores[$0] }.sorted(by: >).prefix(FluentData.pageSize)
            queryRows.append(page.count)
            queryScoreSums.append(page.reduce(0, +))
        }
        let updated = Array(stride(from: 0, to: FluentData.rowCount, by: 10))
        let deleted = Array(stride(from: 5, to: FluentData.rowCount, by: 10))
        let done = Set(updated).union(categories.indices.filter { FluentData.bulkUpdateCategories.contains(categories[$0]) })
        let gone = Set(deleted).union(categories.indices.filter { FluentData.bulkDeleteCategories.contains(categories[$0]) })
        self.ids = ids
        self.names = names
        self.categories = categories
        self.scores = scores
        self.queries = queries
        self.queryRows = queryRows
        self.queryScoreSums = queryScoreSums
        updatedIndices = updated
        deletedIndices = deleted
        expectedDone = done.count
        expectedRemaining = FluentData.rowCount - gone.count
    }

    /// The models of every row, new (not yet saved).
    public func models() -> [FluentItem] {
        (0..<FluentData.rowCount).map { FluentItem(self, $0) }
    }
}

/// The filtered query both workloads run: one category, a lowest score, the best scores first, one page.
public enum FluentQueries {
    /// Runs query `index` (of ``FluentData/queries``, modulo their count); returns its rows and their score sum.
    public static func filtered(_ db: any Database, _ data: FluentData, _ index: Int) async throws -> (Int, Double) {
        let query = data.queries[index % FluentData.queryCount]
        let items = try await FluentItem.query(on: db)
            .filter(\.$category == query.category)
            .filter(\.$score >= query.minScore)
            .sort(\.$score, .descending)
            .limit(FluentData.pageSize)
            .all()
        return (items.count, items.reduce(0) { $0 + $1.score })
    }

    /// Whether `rows` and `sum` are what query `index` must return.
    public static func check(_ data: FluentData, _ index: Int, rows: Int, sum: Double) throws {
        let expectedRows = data.queryRows[index % FluentData.queryCount]
        let expectedSum = data.queryScoreSums[index % FluentData.queryCount]
        guard rows == expectedRows, abs(sum - expectedSum) <= 1e-6 * max(1, expectedSum) else {
            throw FluentBenchmarkFailure("query \(index): \(rows) rows (sum \(sum)), expected \(expectedRows) (\(expectedSum))")
        }
    }
}
