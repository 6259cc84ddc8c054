import Foundation
import InMemoryLogging
import InMemoryTracing
import Logging
import MetricsTestKit
import SQLCipherKit
@testable import SQLCipherKitObservability
import Testing
import Tracing

/// The bridge on a known workload: the statement, transaction and pool figures with the right counts, the spans
/// children of the caller's span across the pool's threads, failures logged and marked.
@Suite("ServerObserver: logs, metrics and traces of a known workload")
struct ServerObserverTests {
    @Test("a pool's writes and reads: operation durations by operation, pool figures, spans under the request's span")
    func knownWorkload() async throws {
        let scene = try Scene(queryText: .exact)
        let pool = try DatabasePool(path: scene.file("known.db"), key: try .rawKey(hex: Array(Scene.keyHex().utf8)),
                                    configuration: .init(readerCount: 2, database: .init(observer: scene.observer)))
        try await pool.write { db in try db.execute("CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT UNIQUE)") }
        let before = MetricValues(scene.metrics)
        scene.tracer.clearAll()

        let request = scene.tracer.startSpan("GET /notes", context: .topLevel)
        try await ServiceContext.withValue(request.context) {
            try await pool.write { db in
                for body in ["a", "b", "c"] { try db.execute("INSERT INTO note(body) VALUES (?)", [body]) }
            }
            let count = try await pool.read { db in try db.scalar(Int.self, "SELECT count(*) FROM note") }
            #expect(count == 3)
            await #expect(throws: SQLCipherError.self) {
                try await pool.write { db in try db.execute("INSERT INTO note(body) VALUES (?)", ["a"]) }
            }
        }
        request.end()
        // Outside any request: no span (tracesWithoutParent is false), but metrics as always.
        try await pool.write { db in try db.execute("DELETE FROM note WHERE body = ?", ["c"]) }
        pool.close()

        // Metrics (counted since before the workload: the observer keeps its series, as an app's does): one series
        // per operation (and error type), one value per statement.
        let after = MetricValues(scene.metrics)
        func durations(_ operation: String, error: String? = nil) -> Int {
            after.count("db.client.operation.duration", before: before) { dimensions in
                dimensions["db.operation.name"] == operation && dimensions["error.type"] == error
            }
        }
        #expect(durations("INSERT") == 3)
        #expect(durations("INSERT", error: "SQLITE_CONSTRAINT") == 1)
        #expect(durations("SELECT") == 2, "the request's count(*), and the SELECT 1 closing the pool runs on its writer")
        #expect(durations("DELETE") == 1)
        #expect(after.all("db.client.operation.duration").allSatisfy { $0.dimensions["db.system.name"] == "sqlite"
            && $0.dimensions["db.namespace"] == "known.db" && $0.values.allSatisfy { $0 > 0 } })
        // Transactions: the request's write and read and the DELETE committed; the failed write rolled back.
        #expect(after.count("sqlcipherkit.transaction.duration", before: before) {
            $0["sqlcipherkit.transaction.outcome"] == "committed" } == 3)
        #expect(after.count("sqlcipherkit.transaction.duration", before: before) {
            $0["sqlcipherkit.transaction.outcome"] == "rolled_back" } == 1)
        // The commit duration is the writes' alone (the DELETE and the request's write; a read's COMMIT syncs nothing).
        #expect(after.count("sqlcipherkit.transaction.commit.duration", before: before) { _ in true } == 2)
        // The pool: 3 writer waits, 1 reader wait; readers back to all idle.
        #expect(after.count("db.client.connection.wait_time", before: before) { $0["sqlcipherkit.connection.role"] == "writer" } == 3)
        #expect(after.count("db.client.connection.wait_time", before: before) { $0["sqlcipherkit.connection.role"] == "reader" } == 1)
        func gauge(_ state: String, _ role: String) -> [Int] {
            after.all("db.client.connection.count").filter {
                $0.dimensions["db.client.connection.state"] == state && $0.dimensions["sqlcipherkit.connection.role"] == role
            }.flatMap(\.values).map { Int($0) }
        }
        #expect(gauge("used", "reader").suffix(2) == [1, 0] && gauge("idle", "reader").suffix(2) == [1, 2])
        #expect(gauge("used", "writer").allSatisfy { $0 <= 1 } && gauge("used", "writer").last == 0)
        // Each of the 3 writes joined the queue (1) and got the writer (0).
        #expect(after.count("db.client.connection.pending_requests", before: before) { _ in true } == 6)
        #expect(after.all("db.client.connection.pending_requests").first?.values.suffix(6) == [1, 0, 1, 0, 1, 0])

        // Spans: every statement and transaction of the request, children of its span, though pool threads ran them.
        let spans = scene.tracer.finishedSpans
        let requestSpan = try #require(spans.first { $0.operationName == "GET /notes" })
        let children = spans.filter { $0.parentSpanID == requestSpan.spanID }
        #expect(spans.count == children.count + 1, "a span outside the request: \(spans.map(\.operationName))")
        #expect(children.filter { $0.operationName == "INSERT" }.count == 4)
        #expect(children.filter { $0.operationName == "transaction" }.count == 3)
        #expect(children.contains { $0.operationName == "SELECT" && $0.attributes["db.response.returned_rows"]?.toSpanAttribute() == .int64(1) })
        let failed = children.filter { $0.status?.code == .error }
        #expect(failed.count == 1 && failed.first?.attributes["error.type"]?.toSpanAttribute() == .string("SQLITE_CONSTRAINT"))
        #expect(failed.first?.attributes["db.query.text"]?.toSpanAttribute() == .string("INSERT INTO note(body) VALUES (?)"))
        for span in children {
            #expect(span.kind == (span.operationName == "transaction" ? .internal : .client))
            #expect(span.startInstant.nanosecondsSinceEpoch <= span.endInstant.nanosecondsSinceEpoch)
        }

        // Logs: the failed statement, with its error type and text; no slow statement at 100 ms here.
        let entries = scene.logs.entries
        #expect(entries.count == 1, "\(entries)")
        #expect(entries.first?.metadata["error.type"] == "SQLITE_CONSTRAINT")
        #expect(entries.first?.metadata["db.query.text"] == "INSERT INTO note(body) VALUES (?)")
    }

    @Test("a failed statement a pool's thread ran is logged with the caller's ServiceContext current: the logger's metadata provider sees the request")
    func logsCarryTheCallersContext() async throws {
        let scene = try Scene(queryText: .operationOnly, metadataProvider: Logger.MetadataProvider {
            ServiceContext.current?[RequestIDKey.self].map { ["request.id": "\($0)"] } ?? [:]
        })
        let pool = try DatabasePool(path: scene.file("context.db"), key: try .rawKey(hex: Array(Scene.keyHex().utf8)),
                                    configuration: .init(readerCount: 1, database: .init(observer: scene.observer)))
        try await pool.write { db in try db.execute("CREATE TABLE t(x UNIQUE)") }
        try await pool.write { db in try db.execute("INSERT INTO t VALUES (1)") }
        var context = ServiceContext.topLevel
        context[RequestIDKey.self] = "request-42"
        _ = await ServiceContext.withValue(context) {
            await #expect(throws: SQLCipherError.self) {
                try await pool.write { db in try db.execute("INSERT INTO t VALUES (1)") }
            }
        }
        // Control: the same failure outside any request's context is logged without it.
        await #expect(throws: SQLCipherError.self) {
            try await pool.write { db in try db.execute("INSERT INTO t VALUES (1)") }
        }
        pool.close()
        let failures = scene.logs.entries.filter { $0.metadata["error.type"] == "SQLITE_CONSTRAINT" }
        #expect(failures.map { $0.metadata["request.id"] } == ["request-42", nil], "\(failures)")
    }

    @Test("pool gauges keep the newest figure: one read earlier but reported later does not overwrite it; control: a newer one does")
    func poolGaugesKeepTheNewestFigure() {
        let metrics = TestMetrics()
        let instruments = Instruments(factory: metrics)
        func last(_ label: String, state: String? = nil) -> Int? {
            MetricValues(metrics).all(label).first { $0.dimensions["db.client.connection.state"] == state }?
                .values.last.map { Int($0) }
        }
        // A reader given back (0 in use, read 5th) reported before the acquire read 4th (1 in use), of 2.
        instruments.recordConnectionCounts(used: 0, idle: 2, role: .reader, namespace: "n", sequence: 5)
        instruments.recordConnectionCounts(used: 1, idle: 1, role: .reader, namespace: "n", sequence: 4)
        #expect(last("db.client.connection.count", state: "used") == 0)
        #expect(last("db.client.connection.count", state: "idle") == 2)
        instruments.recordPendingRequests(0, namespace: "n", sequence: 7)
        instruments.recordPendingRequests(3, namespace: "n", sequence: 6)
        #expect(last("db.client.connection.pending_requests") == 0)
        // Control: newer figures are shown.
        instruments.recordConnectionCounts(used: 2, idle: 0, role: .reader, namespace: "n", sequence: 8)
        instruments.recordPendingRequests(4, namespace: "n", sequence: 9)
        #expect(last("db.client.connection.count", state: "used") == 2
                    && last("db.client.connection.count", state: "idle") == 0
                    && last("db.client.connection.pending_requests") == 4)
    }

    @Test("pending_requests counts the writes waiting behind a held writer while it is held, and 0 once they ran: one write or three, with group commit on or off",
          arguments: [(true, 1), (true, 3), (false, 1), (false, 3)])
    func pendingRequestsWhileTheWriterIsHeld(groupCommit: Bool, writes: Int) async throws {
        let scene = try Scene(queryText: .off)
        let pool = try DatabasePool(path: scene.file("queue.db"), key: try .rawKey(hex: Array(Scene.keyHex().utf8)),
                                    configuration: .init(readerCount: 1, database: .init(observer: scene.observer),
                                                         groupCommit: groupCommit ? .default : .off))
        try await pool.write { db in try db.execute("CREATE TABLE t(x)") }
        #expect(Self.pending(scene) == 0, "the CREATE got the writer with no write waiting")
        let (releasing, session) = await Self.holdingWriter(pool)
        defer { releasing.yield() }  // a failure before the release must not leave the session waiting
        let tasks = (1...writes).map { value in
            Task { try await pool.write { db in try db.execute("INSERT INTO t VALUES (\(value))") } }
        }
        // While the session holds the writer, the gauge follows the queue (before, it moved only when a write got
        // the writer, and showed 0 here). A bound, not a timing: the writes queue within milliseconds.
        let deadline = ContinuousClock.now + .seconds(30)
        while Self.pending(scene) != writes, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(Self.pending(scene) == writes)
        releasing.yield()
        try await session.value
        for task in tasks { try await task.value }
        #expect(Self.pending(scene) == 0)
        #expect(try await pool.read { db in try db.scalar(Int.self, "SELECT count(*) FROM t") } == writes)
        pool.close()
    }

    @Test("a write that gives up waiting (its wait limit) leaves pending_requests at once, the writer still held")
    func pendingRequestsWhenAWaitEnds() async throws {
        let scene = try Scene(queryText: .off)
        let pool = try DatabasePool(path: scene.file("limit.db"), key: try .rawKey(hex: Array(Scene.keyHex().utf8)),
                                    configuration: .init(readerCount: 1, database: .init(observer: scene.observer),
                                                         writerWaitTimeout: .milliseconds(300)))
        try await pool.write { db in try db.execute("CREATE TABLE t(x)") }
        let (releasing, session) = await Self.holdingWriter(pool)
        defer { releasing.yield() }
        // The write waits, is counted, then gives up at its limit while the session still holds the writer.
        await #expect(throws: SQLCipherError.self) {
            try await pool.write { db in try db.execute("INSERT INTO t VALUES (1)") }
        }
        #expect(Self.pending(scene) == 0, "the write that gave up is still counted")
        #expect(MetricValues(scene.metrics).all("db.client.connection.pending_requests").first?.values.contains(1)
                    == true, "the write was never counted while it waited")
        releasing.yield()
        try await session.value
        pool.close()
        #expect(Self.pending(scene) == 0)
    }

    /// Holds `pool`'s writer in a writer session until `releasing` yields; returns once the session holds it.
    static func holdingWriter(_ pool: DatabasePool) async
        -> (releasing: AsyncStream<Void>.Continuation, session: Task<Void, any Error>) {
        let (held, holding) = AsyncStream.makeStream(of: Void.self)
        let (release, releasing) = AsyncStream.makeStream(of: Void.self)
        let session = Task {
            try await pool.writeSession { _ in
                holding.yield()
                for await _ in release { break }
            }
        }
        for await _ in held { break }
        return (releasing, session)
    }

    /// The last figure of `db.client.connection.pending_requests`.
    static func pending(_ scene: Scene) -> Int? {
        MetricValues(scene.metrics).all("db.client.connection.pending_requests").first?.values.last.map { Int($0) }
    }

    @Test("the metadata of a logger the caller binds with swift-log's withLogger is on the statement's line, though a pool thread runs it, never under the line's own keys")
    func boundLoggersMetadata() async throws {
        let scene = try Scene(queryText: .operationOnly, slowStatementThreshold: .zero)
        let pool = try DatabasePool(path: scene.file("bound.db"), key: try .rawKey(hex: Array(Scene.keyHex().utf8)),
                                    configuration: .init(readerCount: 1, database: .init(observer: scene.observer)))
        try await pool.write { db in try db.execute("CREATE TABLE t(x)") }
        let requestLogs = InMemoryLogHandler()
        var requestLogger = Logger(label: "request") { _ in requestLogs }
        requestLogger[metadataKey: "request-id"] = "r-7f3a"
        // Keys a caller must not be able to put on the line: each would make it say something it does not.
        for key in ["db.operation.name", "error.type", "db.query.text", "DB.Query.Text", "sqlcipherkit.duration_ms",
                    "trace_id", "trace_flags"] {
            requestLogger[metadataKey: key] = "from-the-caller"
        }
        let inserts = { scene.logs.entries.filter { $0.metadata["db.operation.name"] == "INSERT" } }
        scene.clear()
        let request = scene.tracer.startSpan("POST /t", context: .topLevel)
        try await ServiceContext.withValue(request.context) {
            try await withLogger(requestLogger) { _ in
                try await pool.write { db in try db.execute("INSERT INTO t VALUES (1)") }
            }
        }
        request.end()
        let line = try #require(inserts().first, "\(scene.logs.entries)")
        #expect(inserts().count == 1 && line.metadata["request-id"] == "r-7f3a", "\(line.metadata)")
        #expect(!line.metadata.values.contains { "\($0)" == "from-the-caller" }, "\(line.metadata)")
        #expect(line.metadata["error.type"] == nil && line.metadata["db.query.text"] == nil)
        #expect(requestLogs.entries.isEmpty, "the line went to the caller's logger, not the configured one")
        // The caller's span is still the parent: the logger travels beside the ServiceContext, not in its place.
        let insert = scene.tracer.finishedSpans.first { $0.operationName == "INSERT" }
        #expect(insert != nil && insert?.parentSpanID == request.spanContext.spanID)
        // Metadata merged into swift-log's default, with no logger bound (withLogger(mergingMetadata:)).
        scene.clear()
        try await withLogger(mergingMetadata: ["request-id": "r-merged"]) { _ in
            try await pool.write { db in try db.execute("INSERT INTO t VALUES (2)") }
        }
        #expect(inserts().count == 1 && inserts().first?.metadata["request-id"] == "r-merged")
        // Control: nothing bound, no request-id.
        scene.clear()
        try await pool.write { db in try db.execute("INSERT INTO t VALUES (3)") }
        #expect(inserts().count == 1 && inserts().first?.metadata["request-id"] == nil)
        pool.close()
    }

    @Test("query text: off leaves it out, operationOnly gives the operation alone, exact the statement as prepared")
    func queryTextPolicy() throws {
        for policy in QueryTextPolicy.allCases {
            let scene = try Scene(queryText: policy, slowStatementThreshold: .zero)
            let db = try Database(path: scene.file("q.db"), key: try .rawKey(hex: Array(Scene.keyHex().utf8)),
                                  configuration: .init(observer: scene.observer))
            scene.clear()
            let root = scene.tracer.startSpan("job", context: .topLevel)
            try ServiceContext.withValue(root.context) { try db.execute("CREATE TABLE t(x)") }
            root.end()
            let span = try #require(scene.tracer.finishedSpans.first { $0.operationName == "CREATE" })
            let log = try #require(scene.logs.entries.first)
            switch policy {
            case .off:
                #expect(span.attributes["db.query.text"] == nil && span.attributes["db.query.summary"] == nil)
                #expect(log.metadata["db.query.text"] == nil && log.metadata["db.query.summary"] == nil)
            case .operationOnly:
                #expect(span.attributes["db.query.text"] == nil)
                #expect(span.attributes["db.query.summary"]?.toSpanAttribute() == .string("CREATE"))
                #expect(log.metadata["db.query.text"] == nil && log.metadata["db.query.summary"] == "CREATE")
            case .exact:
                #expect(span.attributes["db.query.text"]?.toSpanAttribute() == .string("CREATE TABLE t(x)"))
                #expect(log.metadata["db.query.text"] == "CREATE TABLE t(x)")
            }
        }
    }
}

/// A request's id, carried in its `ServiceContext` (as a tracer's span context would be).
enum RequestIDKey: ServiceContextKey {
    typealias Value = String
}

/// A temporary folder and an observer with in-memory logs, metrics and traces.
final class Scene: Sendable {
    let folder: String
    let metrics = TestMetrics()
    let tracer = InMemoryTracer()
    let logs = InMemoryLogHandler()
    let observer: ServerObserver

    init(queryText: QueryTextPolicy, slowStatementThreshold: Duration = .milliseconds(100),
         metadataProvider: Logger.MetadataProvider? = nil) throws {
        folder = FileManager.default.temporaryDirectory.path + "/observability-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var handler = logs  // a copy that shares the entries
        handler.metadataProvider = metadataProvider
        var logger = Logger(label: "sqlcipherkit") { _ in handler }
        logger.logLevel = .trace
        observer = ServerObserver(.init(logger: logger, slowStatementThreshold: slowStatementThreshold,
                                        metricsFactory: metrics, tracer: tracer, queryText: queryText))
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    func file(_ name: String) -> String { folder + "/" + name }

    /// Forgets the spans and log lines so far (the metrics stay: the observer keeps its series; see MetricValues).
    func clear() {
        tracer.clearAll()
        logs.clear()
    }

    /// 64 random hex digits: a raw key.
    static func keyHex() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
}

/// Every value each series of a TestMetrics holds, at one moment.
struct MetricValues {
    struct Series {
        let label: String
        let dimensions: [String: String]
        let values: [Double]
    }

    let series: [Series]

    init(_ metrics: TestMetrics) {
        func dictionary(_ pairs: [(String, String)]) -> [String: String] {
            Dictionary(pairs, uniquingKeysWith: { first, _ in first })
        }
        series = metrics.timers.map { Series(label: $0.label, dimensions: dictionary($0.dimensions), values: $0.values.map(Double.init)) }
            + metrics.recorders.map { Series(label: $0.label, dimensions: dictionary($0.dimensions), values: $0.values) }
            + metrics.counters.map { Series(label: $0.label, dimensions: dictionary($0.dimensions), values: $0.values.map(Double.init)) }
    }

    func all(_ label: String) -> [Series] { series.filter { $0.label == label } }

    /// The values recorded under `label` in series whose dimensions satisfy `matching`, since `before`.
    func count(_ label: String, before: MetricValues, _ matching: ([String: String]) -> Bool) -> Int {
        func total(_ values: MetricValues) -> Int {
            values.all(label).filter { matching($0.dimensions) }.map(\.values.count).reduce(0, +)
        }
        return total(self) - total(before)
    }
}
