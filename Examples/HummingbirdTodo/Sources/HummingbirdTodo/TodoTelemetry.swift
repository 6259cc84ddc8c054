import Hummingbird
import Logging
import Metrics
import NIOCore
import OTel
import Prometheus
import ServiceLifecycle
import SQLCipherKit
import SQLCipherKitObservability
import Tracing

/// What the app reports to the team that runs it: the database's statements, transactions and pool waits through
/// SQLCipherKitObservability's `ServerObserver`, a `/metrics` endpoint in Prometheus's text format (swift-prometheus),
/// and, when an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, with the
/// other standard `OTEL_*` variables as swift-otel reads them), a server span per request (Hummingbird's
/// `TracingMiddleware`) with the database's spans as its children, exported by swift-otel over OTLP/HTTP.
///
/// Nothing secret is in any of it: statements are reported as prepared (never a bound value, so never a todo's
/// title), with the operation alone as query text.
public struct TodoTelemetry: Sendable {
    /// The registry `/metrics` serves.
    public let registry: PrometheusCollectorRegistry
    /// The database's observer.
    public let observer: ServerObserver
    /// swift-otel's exporter and batch processor, a service of the app's group (nil without traces).
    let tracing: (any Service)?

    /// Buckets for statement and wait durations: SQLite statements take microseconds, not the web's 5 ms and up.
    static let durationBuckets: [Duration] = [
        .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
        .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
    ]

    /// Bootstraps swift-metrics (and swift-distributed-tracing when `environment` names an OTLP endpoint); call once
    /// per process (both bootstraps are global).
    ///
    /// - Throws: swift-otel's error when its configuration from `environment` is not valid.
    public init(environment: [String: String], logger: Logger) throws {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.durationBuckets
        MetricsSystem.bootstrap(factory)
        if environment["OTEL_EXPORTER_OTLP_ENDPOINT"] != nil || environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] != nil {
            var configuration = OTel.Configuration.default
            configuration.serviceName = "hummingbird-todo"
            configuration.metrics.enabled = false
            configuration.logs.enabled = false
            configuration.diagnosticLogger = .custom(logger)
            // Errors only: at its default level (info) swift-otel logs every OTEL_* value it reads, the collector's
            // credentials in OTEL_EXPORTER_OTLP_HEADERS included, and on a malformed `traceparent` every header of
            // that request (a client's Authorization, its cookies). (OTEL_LOG_LEVEL, when set, overrides this.)
            configuration.diagnosticLogLevel = .error
            let backend = try OTel.makeTracingBackend(configuration: configuration)
            InstrumentationSystem.bootstrap(backend.factory)
            tracing = backend.service
        } else {
            tracing = nil
        }
        // After the bootstraps: the observer takes the metrics factory and tracer they installed.
        observer = ServerObserver(.init(logger: logger, queryText: .operationOnly))
    }

    /// A telemetry of the caller's own: `/metrics` from `registry`, the database reported to `observer`, no traces
    /// (for tests, which cannot bootstrap the process's metrics once per test).
    public init(registry: PrometheusCollectorRegistry, observer: ServerObserver) {
        self.registry = registry
        self.observer = observer
        tracing = nil
    }

    /// The database pool's configuration, with ``observer`` installed.
    var poolConfiguration: DatabasePool.Configuration {
        DatabasePool.Configuration(database: .init(observer: observer))
    }

    /// Adds the request spans (with traces on) and the `/metrics` route to `router`.
    func register(on router: Router<BasicRequestContext>) {
        if tracing != nil {
            router.add(middleware: TracingMiddleware())
        }
        router.get("metrics") { _, _ -> Response in
            var buffer = [UInt8]()
            registry.emit(into: &buffer)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
        }
    }
}
