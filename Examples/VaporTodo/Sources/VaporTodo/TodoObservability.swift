import Prometheus
import SQLCipherKit
import SQLCipherKitObservability
import Vapor

/// What the app reports to the team that runs it: the database's statements, transactions and pool waits through
/// SQLCipherKitObservability's `ServerObserver` (to swift-log, swift-metrics and swift-distributed-tracing), a
/// `/metrics` endpoint in Prometheus's text format, and a server span per request that the database's spans are
/// children of.
///
/// The entry point (`vapor-todo`) bootstraps the process's metrics (swift-prometheus) and, when an OTLP endpoint is
/// set, its tracing (swift-otel), and hands this to ``configure(_:settings:observability:)``. Nothing secret is in
/// any of it: statements are reported as prepared (never a bound value, so never a todo's title), with the operation
/// alone as query text.
public struct TodoObservability: Sendable {
    /// The registry `/metrics` serves; nil: no `/metrics` route.
    public var registry: PrometheusCollectorRegistry?
    /// The database's observer; nil: the database reports nothing.
    public var observer: ServerObserver?
    /// Whether each request gets a server span (Vapor's `TracingMiddleware`), the parent of its database spans.
    public var tracesRequests: Bool

    /// Nothing reported: no `/metrics`, no observer, no request spans.
    public init(registry: PrometheusCollectorRegistry? = nil, observer: ServerObserver? = nil,
                tracesRequests: Bool = false) {
        self.registry = registry
        self.observer = observer
        self.tracesRequests = tracesRequests
    }

    /// The database pool's configuration, with ``observer`` installed.
    public var poolConfiguration: DatabasePool.Configuration {
        DatabasePool.Configuration(database: .init(observer: observer))
    }

    /// Adds the request spans and the `/metrics` route, as this value asks.
    func register(on app: Application) {
        if tracesRequests {
            app.middleware.use(TracingMiddleware(), at: .beginning)
        }
        if let registry {
            app.get("metrics") { _ -> Response in
                var buffer = [UInt8]()
                registry.emit(into: &buffer)
                var headers = HTTPHeaders()
                headers.contentType = HTTPMediaType(type: "text", subType: "plain",
                                                    parameters: ["version": "0.0.4", "charset": "utf-8"])
                return Response(status: .ok, headers: headers, body: .init(data: Data(buffer)))
            }
        }
    }
}
