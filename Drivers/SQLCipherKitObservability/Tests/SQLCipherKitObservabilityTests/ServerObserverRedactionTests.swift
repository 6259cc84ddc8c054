import Foundation
import InMemoryLogging
import InMemoryTracing
import Logging
import Metrics
import MetricsTestKit
import SQLCipherKit
import SQLCipherKitObservability
import Testing
import Tracing

/// Nothing secret leaks through the bridge: with every bridge attached, query text on and every statement logged, no
/// log line, metric name or label, span name or attribute holds a key, a passphrase or a bound value. The scan's
/// control runs in the same test: a value planted as SQL text is found. And the metric series stay bounded.
@Suite("ServerObserver: nothing secret in logs, metrics or traces; bounded series")
struct ServerObserverRedactionTests {
    @Test("keyed database, bound secrets, failures, rekey, attach, backup, export and a pool, query text exact: no secret anywhere; a planted literal found")
    func noSecrets() async throws {
        let scene = try Scene(queryText: .exact, slowStatementThreshold: .zero)
        let configuration = Database.Configuration(observer: scene.observer)
        let passphrase = "correct horse \(UUID().uuidString)"
        let rawHex = Scene.keyHex(), newHex = Scene.keyHex(), backupHex = Scene.keyHex(), attachHex = Scene.keyHex()
        let exportPassphrase = "export \(UUID().uuidString)"
        let bound = ["bound-secret-\(UUID().uuidString)", "bound-blob-\(UUID().uuidString)", "failing-\(UUID().uuidString)"]
        let planted = "planted-\(UUID().uuidString)"

        let root = scene.tracer.startSpan("job", context: .topLevel)
        try await ServiceContext.withValue(root.context) {
            let db = try Database(path: scene.file("a.db"), key: try .passphrase(passphrase), configuration: configuration)
            try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, x UNIQUE, y BLOB)")
            try db.execute("INSERT INTO t(x, y) VALUES (?, ?)", [bound[0], Data(bound[1].utf8)])
            _ = try db.fetchAll("SELECT * FROM t WHERE x = ?", [bound[0]])
            #expect(throws: SQLCipherError.self) { try db.execute("INSERT INTO t(x) VALUES (?)", [bound[0]]) }
            #expect(throws: SQLCipherError.self) { try db.execute("INSERT INTO missing VALUES (?)", [bound[2]]) }
            try db.attach(scene.file("attached.db"), as: "other", key: try .rawKey(hex: Array(attachHex.utf8)))
            try db.execute("CREATE TABLE other.u(x)")
            try db.execute("INSERT INTO other.u VALUES (?)", [bound[0]])
            try db.detach("other")
            try db.backup(to: scene.file("backup.db"), key: try .rawKey(hex: Array(backupHex.utf8)))
            try db.export(to: scene.file("export.db"), key: try .passphrase(exportPassphrase))
            try db.rekey(to: try .rawKey(hex: Array(newHex.utf8)))
            try db.execute("INSERT INTO t(x) VALUES (?)", [bound[2]])
            // The control: a value written into the SQL text (not bound) is in the statement's text, and found.
            _ = try db.fetchAll("SELECT '\(planted)'")
            db.close()

            let pool = try DatabasePool(path: scene.file("pool.db"), key: try .rawKey(hex: Array(rawHex.utf8)),
                                        configuration: .init(database: configuration))
            try await pool.write { db in try db.execute("CREATE TABLE p(x)") }
            try await pool.write { db in try db.execute("INSERT INTO p VALUES (?)", [bound[1]]) }
            _ = try await pool.read { db in try db.fetchAll("SELECT * FROM p WHERE x = ?", [bound[1]]) }
            try pool.rekey(to: try .passphrase(passphrase + "-pool"))
            pool.close()
        }
        root.end()

        let texts = Self.everything(scene)
        #expect(texts.count > 100, "too little was scanned: \(texts.count) texts")
        // Every kind of output took part: log lines, metric series, spans.
        #expect(!scene.logs.entries.isEmpty && !scene.metrics.timers.isEmpty && scene.tracer.finishedSpans.count > 20)
        let secrets = [passphrase, passphrase + "-pool", exportPassphrase, rawHex, newHex, backupHex, attachHex] + bound
        let hexOfPassphrases = [passphrase, exportPassphrase].map { Data($0.utf8).map { String(format: "%02x", $0) }.joined() }
        let found = Self.occurrences(of: secrets + hexOfPassphrases, in: texts)
        #expect(found.isEmpty, "secrets in logs, metrics or spans: \(found)")
        // The control, in the same run: the planted literal is found, in the logs and in the spans.
        let plantedFound = Self.occurrences(of: [planted], in: texts)
        #expect(plantedFound.count >= 2, "the scan did not find the planted literal: \(plantedFound)")
        // Metric labels never hold SQL text, even with query text on: the planted literal is in no series.
        #expect(Self.occurrences(of: [planted], in: Self.metricTexts(scene.metrics)).isEmpty)
        print("OBSERVABILITY REDACTION: \(texts.count) log lines, metric series and spans scanned for "
              + "\(secrets.count + hexOfPassphrases.count) secrets: \(found.count) found; the planted literal found "
              + "\(plantedFound.count) times (logs and spans), in no metric")
    }

    @Test("10,000 distinct statements leave a bounded number of metric series")
    func boundedSeries() throws {
        let scene = try Scene(queryText: .exact)
        let db = try Database(path: scene.file("c.db"), key: try .rawKey(hex: Array(Scene.keyHex().utf8)),
                              configuration: .init(observer: scene.observer))
        try db.execute("CREATE TABLE t(x)")
        let before = Self.metricTexts(scene.metrics).count
        for index in 0..<10_000 {
            switch index % 5 {
            case 0: try db.execute("INSERT INTO t VALUES (\(index))")
            case 1: _ = try db.fetchAll("SELECT x, \(index) FROM t WHERE x = \(index)")
            case 2: try db.execute("UPDATE t SET x = \(index) WHERE x = \(index - 2)")
            case 3: try db.execute("/* \(index) */ DELETE FROM t WHERE x = \(index)")
            default: _ = try? db.execute("INSERT INTO no_table_\(index) VALUES (1)")
            }
        }
        let series = Self.metricTexts(scene.metrics)
        // The count's control, in the same run: a label holding each statement's text makes a series per statement,
        // and the count sees every one.
        let control = TestMetrics()
        for index in 0..<1_000 {
            Metrics.Timer(label: "db.client.operation.duration", dimensions: [("db.query.text", "SELECT \(index)")],
                          factory: control).recordNanoseconds(1)
        }
        #expect(Self.metricTexts(control).count == 1_000)
        let operations = scene.metrics.timers(label: "db.client.operation.duration")
        // CREATE, PRAGMA (the open's), INSERT, SELECT, UPDATE, DELETE: one series each (the failed INSERTs never
        // ran: they fail while prepared, so they are not statements that ran).
        #expect(operations.count <= 8, "\(operations.map(\.dimensions))")
        #expect(series.count - before <= 8 && series.count <= 24, "\(series.count) series")
        print("OBSERVABILITY CARDINALITY: 10,000 distinct statements, \(operations.count) operation-duration series, "
              + "\(series.count) series in all")
    }

    /// Every log line (message and metadata), metric series (label and dimensions) and span (name and attributes)
    /// as text.
    static func everything(_ scene: Scene) -> [String] {
        scene.logs.entries.map { "\($0.message) \($0.metadata)" } + metricTexts(scene.metrics)
            + scene.tracer.finishedSpans.map { span in
                var attributes: [String] = []
                span.attributes.forEach { key, value in attributes.append("\(key)=\(value)") }
                return span.operationName + " " + attributes.joined(separator: " ")
            }
    }

    static func metricTexts(_ metrics: TestMetrics) -> [String] {
        func text(_ label: String, _ dimensions: [(String, String)]) -> String {
            label + " " + dimensions.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
        }
        return metrics.timers.map { text($0.label, $0.dimensions) } + metrics.recorders.map { text($0.label, $0.dimensions) }
            + metrics.counters.map { text($0.label, $0.dimensions) } + metrics.meters.map { text($0.label, $0.dimensions) }
    }

    static func occurrences(of secrets: [String], in texts: [String]) -> [String] {
        secrets.flatMap { secret in
            texts.filter { $0.localizedCaseInsensitiveContains(secret) }.map { "\(secret) in \($0.prefix(200))" }
        }
    }
}
