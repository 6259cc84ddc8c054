import Foundation
import Synchronization
import Vapor

/// The server's own view of where a load run's tail is (`Benchmarks/Load/profile.sh`): with
/// `PROFILE_ROUTE_TIMINGS=FILE` set, every request's time from the middleware to its response is recorded by kind
/// (a read of one todo, the page of completed todos, a create, an update, a delete), and at shutdown FILE gets
/// one line per kind: `kind count p50_us p90_us p99_us max_us`. wrk sees one latency for all kinds; this splits
/// it, so that a tail made by writes waiting for the pool's one writer shows as such. Off unless the variable is
/// set (run.sh never sets it).
final class RouteTimings: AsyncMiddleware, Sendable {
    static let variable = "PROFILE_ROUTE_TIMINGS"

    private let file: String
    private let samples = Mutex<[String: [Int]]>([:])

    init(file: String) { self.file = file }

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let start = ContinuousClock.now
        let kind = Self.kind(of: request)
        defer {
            let elapsed = ContinuousClock.now - start
            let microseconds = Int(elapsed.components.seconds) * 1_000_000
                + Int(elapsed.components.attoseconds / 1_000_000_000_000)
            samples.withLock { $0[kind, default: []].append(microseconds) }
        }
        return try await next.respond(to: request)
    }

    /// The request kinds of Benchmarks/Load/mix.lua.
    static func kind(of request: Request) -> String {
        let parts = request.url.path.split(separator: "/")
        switch (request.method, parts.count) {
        case (.GET, 1): return "page"
        case (.GET, _): return "read"
        case (.POST, _): return "create"
        case (.PATCH, _): return "update"
        case (.DELETE, _): return "delete"
        default: return "other"
        }
    }

    /// Writes the percentiles of every kind to the file, one line each, and all writes together as `writes`.
    func write() throws {
        let all = samples.withLock { $0 }
        var lines = ["kind count p50_us p90_us p99_us max_us"]
        let writes = ["create", "update", "delete"].flatMap { all[$0] ?? [] }
        for (kind, values) in all.sorted(by: { $0.key < $1.key }) + [("writes", writes)] where !values.isEmpty {
            let sorted = values.sorted()
            func percentile(_ p: Double) -> Int { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
            lines.append("\(kind) \(sorted.count) \(percentile(0.5)) \(percentile(0.9)) \(percentile(0.99)) "
                + "\(sorted[sorted.count - 1])")
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file))
    }
}
