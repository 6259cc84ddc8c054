import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdTodo
import NIOCore
import Prometheus
import SQLCipherKit
import SQLCipherKitObservability
import Testing

@Suite("HummingbirdTodo: what an operator sees at /metrics")
struct TodoTelemetryTests {
    /// `/metrics` before and after two creates and a list (the observer's metrics to the registry `/metrics` serves,
    /// or to none; the migration ran its own statements before), and the key and todo titles used.
    func metrics(observed: Bool) async throws -> (before: String, body: String, secrets: [String]) {
        let folder = try TestFolder()
        let passphrase = "hummingbird-todo key \(UUID().uuidString)"
        let settings = TodoSettings(databasePath: folder.path + "/todo.db",
                                    keySource: .file(try folder.keyFile("key", passphrase, mode: 0o600)))
        let titles = ["metrics-marker-\(UUID().uuidString)", "metrics-marker-\(UUID().uuidString)"]
        let registry = PrometheusCollectorRegistry()
        let observer = ServerObserver(.init(metricsFactory: observed ? PrometheusMetricsFactory(registry: registry) : nil,
                                            tracer: nil))
        let app = try await buildApplication(settings: settings,
                                             telemetry: TodoTelemetry(registry: registry, observer: observer))
        let (before, body) = try await app.test(.router) { client -> (String, String) in
            let before = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            for title in titles {
                let response = try await client.execute(uri: "/todos", method: .post,
                                                        body: json(CreateTodoRequest(title: title)))
                #expect(response.status == .created)
            }
            #expect(try await client.execute(uri: "/todos", method: .get).status == .ok)
            let response = try await client.execute(uri: "/metrics", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
            return (before, String(buffer: response.body))
        }
        return (before, body, titles + [passphrase])
    }

    @Test("/metrics serves the database's statements, transactions and pool figures by OpenTelemetry's names; no key, no title")
    func metricsEndpoint() async throws {
        let (before, body, secrets) = try await metrics(observed: true)
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
        #expect(added("sqlcipherkit_transaction_duration_count", [#"sqlcipherkit_transaction_outcome="committed""#])
            >= 2, "\(body)")
        #expect(added("db_client_connection_wait_time_count", [#"sqlcipherkit_connection_role="writer""#]) >= 2)
        for secret in secrets {
            #expect(!body.contains(secret), "\(secret) in /metrics")
        }
    }

    @Test("control: with the observer's metrics off, /metrics has no database series (what the test above counts is the observer's)")
    func control() async throws {
        let body = try await metrics(observed: false).body
        #expect(!body.contains("db_client_operation_duration"), "\(body)")
    }
}
