import Benchmark

/// One implementation of an asynchronous workload whose measured work may have several parts (a Fluent CRUD
/// run: creates, queries, updates, deletes), each recorded under a metric of its own: `run` does its own untimed
/// set-up and returns the time of each part, in the order of `parts`.
public struct AsyncVariant: Sendable {
    /// The variant's name; each part's metric is "<name>: <part>" (just the name when there is one unnamed part).
    public let name: String
    /// The metric of each measured part, in the order `run` returns their times.
    public let metrics: [BenchmarkMetric]
    /// Runs the variant once: its set-up untimed, then each measured part; returns one time per part.
    public let run: @Sendable () async throws -> [Duration]

    /// A variant named `name` whose run measures `parts` (one unnamed part by default).
    public init(_ name: String, parts: [String] = [""], run: @escaping @Sendable () async throws -> [Duration]) {
        self.name = name
        metrics = parts.map { part in
            .custom(AsyncVariant.metricName(name, part), polarity: .prefersSmaller, useScalingFactor: false)
        }
        self.run = run
    }

    /// The metric name of `part` of the variant `name` (the report finds its samples by it).
    public static func metricName(_ name: String, _ part: String) -> String {
        part.isEmpty ? name : "\(name): \(part)"
    }
}

extension SideBySide {
    /// ``configuration(_:rounds:)`` for asynchronous variants: one metric per measured part of each.
    public static func configuration(_ variants: [AsyncVariant], rounds: Int = SideBySide.rounds)
        -> Benchmark.Configuration {
        let metrics = variants.flatMap(\.metrics)
        return .init(metrics: metrics,
                     units: Dictionary(uniqueKeysWithValues: metrics.map { ($0, BenchmarkUnits.count) }),
                     warmupIterations: 1, maxDuration: .seconds(3_600), maxIterations: rounds)
    }

    /// ``round(_:_:)`` for asynchronous variants: every variant once, in an order rotated by one each round, each
    /// part's time recorded in microseconds.
    public static func round(_ benchmark: Benchmark, _ variants: [AsyncVariant]) async throws {
        for offset in variants.indices {
            let variant = variants[(benchmark.currentIteration + offset) % variants.count]
            let times = try await variant.run()
            guard times.count == variant.metrics.count else {
                throw BenchmarkFailure("\(variant.name) measured \(times.count) parts, not \(variant.metrics.count)")
            }
            for (metric, elapsed) in zip(variant.metrics, times) {
                benchmark.measurement(metric, elapsed.wholeMicroseconds)
            }
        }
    }

    /// The time `body` takes (the asynchronous form of ``time(_:)``).
    @inline(never)
    public static func timeAsync(_ body: () async throws -> Void) async rethrows -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        try await body()
        return clock.now - start
    }
}
