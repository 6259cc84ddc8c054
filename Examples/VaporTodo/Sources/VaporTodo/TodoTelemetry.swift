import Logging
import Metrics
import OTel
import Prometheus
import ServiceLifecycle
import SQLCipherKitObservability
import Tracing

/// The process's metrics and traces, bootstrapped once at start: metrics always (swift-prometheus, served at
/// `/metrics`), traces when an OTLP endpoint is set (swift-otel's OTLP/HTTP exporter; `OTEL_EXPORTER_OTLP_ENDPOINT`
/// or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, with `OTEL_EXPORTER_OTLP_PROTOCOL` and the other standard `OTEL_*`
/// variables as swift-otel reads them). The entry point makes one and passes ``observability`` to
/// ``configure(_:settings:observability:)``.
public struct TodoTelemetry: Sendable {
    /// What ``configure(_:settings:observability:)`` installs: the registry, the database's observer, request spans.
    public let observability: TodoObservability
    /// swift-otel's exporter and batch processor, running until ``shutdown()`` (nil without traces).
    private let tracing: (group: ServiceGroup, task: Task<Void, any Error>)?

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
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.durationBuckets
        MetricsSystem.bootstrap(factory)

        let tracesOn = environment["OTEL_EXPORTER_OTLP_ENDPOINT"] != nil
            || environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] != nil
        if tracesOn {
            var configuration = OTel.Configuration.default
            configuration.serviceName = "vapor-todo"
            configuration.metrics.enabled = false
            configuration.logs.enabled = false
            configuration.diagnosticLogger = .custom(logger)
            // Errors only: at its default level (info) swift-otel logs every OTEL_* value it reads, the collector's
            // credentials in OTEL_EXPORTER_OTLP_HEADERS included, and on a malformed `traceparent` every header of
            // that request (a client's Authorization, its cookies). (OTEL_LOG_LEVEL, when set, overrides this.)
            configuration.diagnosticLogLevel = .error
            let backend = try OTel.makeTracingBackend(configuration: configuration)
            InstrumentationSystem.bootstrap(backend.factory)
            let group = ServiceGroup(services: [backend.service], gracefulShutdownSignals: [], logger: logger)
            tracing = (group, Task { try await group.run() })
        } else {
            tracing = nil
        }
        // After the bootstraps: the observer takes the metrics factory and tracer they installed.
        let observer = ServerObserver(.init(logger: logger, queryText: .operationOnly))
        observability = TodoObservability(registry: registry, observer: observer, tracesRequests: tracesOn)
    }

    /// Exports the spans still queued and stops the exporter (on the way out, after the server stopped).
    public func shutdown() async {
        guard let tracing else { return }
        await tracing.group.triggerGracefulShutdown()
        _ = await tracing.task.result
    }
}
