import Foundation
import Prometheus
import SQLCipherKit
import SQLCipherKitObservability
import Testing
import VaporTesting
import VaporTodo

@Suite("VaporTodo: what an operator sees at /metrics")
struct TodoObservabilityTests {
    /// `/metrics` before and after two creates and a list (the boot's migration ran its own statements before),
    /// and the key and todo titles used.
    func metrics(observed: Bool) async throws -> (before: String?, body: String?, secrets: [String]) {
        let folder = try TestFolder()
        let passphrase = "vapor-todo key \(UUID().uuidString)"
        let settings = TodoSettings(databasePath: folder.path + "/todo.db",
                                    keySource: .file(try folder.keyFile("key", passphrase, mode: 0o600)))
        let titles = ["metrics-marker-\(UUID().uuidString)", "metrics-marker-\(UUID().uuidString)"]
        let registry = PrometheusCollectorRegistry()
        let observer = ServerObserver(.init(metricsFactory: PrometheusMetricsFactory(registry: registry), tracer: nil))
        let observability = TodoObservability(registry: registry, observer: observed ? observer : nil)
        var before: String?, body: String?
        try await withApp(configure: { try await configure($0, settings: settings, observability: observability) }) { app in
            let client = try app.testing()
            before = try await client.sendRequest(.GET, "metrics").body.string
            for title in titles {
                let response = try await client.sendRequest(.POST, "todos") {
                    try $0.content.encode(CreateTodoRequest(title: title))
                }
                #expect(response.status == .created)
            }
            #expect(try await client.sendRequest(.GET, "todos").status == .ok)
            let response = try await client.sendRequest(.GET, "metrics")
            #expect(response.status == .ok)
            #expect(response.headers.contentType?.subType == "plain")
            body = response.body.string
        }
        return (before, body, titles + [passphrase])
    }

    @Test("/metrics serves the database's statements, transactions and pool figures by OpenTelemetry's names; no key, no title")
    func metricsEndpoint() async throws {
        let (observedBefore, observedBody, secrets) = try await metrics(observed: true)
        let before = try #require(observedBefore), body = try #require(observedBody)
        // Prometheus's names: OpenTelemetry's with the dots as underscores. What the creates and the list added.
        func count(_ text: String, _ name: String, _ labels: [String]) -> Double {
            text.split(separator: "\n").first { line in
                line.hasPrefix(name + "{") && labels.allSatisfy { line.contains($0) }
            }.flatMap { $0.split(separator: " ").last.flatMap { Double($0) } } ?? 0
        }
        func added(_ name: String, _ labels: [String]) -> Double {
            count(body, name, labels) - count(before, name, labels)
        }
        #expect(added("db_client_operation_duration_count", [#"db_operation_name="INSERT""#]) == 2, "\(body)")
        #expect(added("db_client_operation_duration_count", [#"db_operation_name="SELECT""#]) >= 1)
        #expect(count(body, "db_client_operation_duration_count", [#"db_system_name="sqlite""#,
                                                                   #"db_namespace="todo.db""#]) > 0)
        #expect(added("sqlcipherkit_transaction_duration_count", [#"sqlcipherkit_transaction_outcome="committed""#])
            >= 2, "\(body)")
        #expect(added("db_client_connection_wait_time_count", [#"sqlcipherkit_connection_role="writer""#]) >= 2)
        #expect(body.split(separator: "\n").contains { $0.hasPrefix("db_client_connection_count{") })
        // Nothing secret: neither the key nor a todo's title (a bound value).
        for secret in secrets {
            #expect(!body.contains(secret), "\(secret) in /metrics")
        }
    }

    @Test("control: without the observer, /metrics has no database series (what the test above counts is the observer's)")
    func control() async throws {
        let body = try #require(try await metrics(observed: false).body)
        #expect(!body.contains("db_client_operation_duration"), "\(body)")
    }
}
