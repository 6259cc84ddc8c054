import Metrics
import SQLCipherKit
import Synchronization

/// The metrics of a ``ServerObserver``, made once per name and label set and kept: every label comes from a bounded
/// set (an operation word, a result-code name, a role, a state, an outcome, the namespace), so the set of series is
/// bounded too.
///
/// Names follow OpenTelemetry's semantic conventions for database clients where they have one
/// (`db.client.operation.duration`, `db.client.connection.*`); SQLCipherKit's own figures are `sqlcipherkit.*`.
final class Instruments: Sendable {
    private let factory: any MetricsFactory
    private let timers = Mutex<[String: Metrics.Timer]>([:])
    private let gauges = Mutex<[String: Gauge]>([:])
    private let counters = Mutex<[String: Counter]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    static let system = ("db.system.name", "sqlite")

    func operationDuration(_ operation: String, namespace: String, errorType: String?) -> Metrics.Timer {
        timer("db.client.operation.duration", [Self.system, ("db.namespace", namespace), ("db.operation.name", operation)]
            + (errorType.map { [("error.type", $0)] } ?? []))
    }

    func connectionWait(role: PoolReleaseEvent.Role, namespace: String) -> Metrics.Timer {
        timer("db.client.connection.wait_time", [Self.system, ("db.client.connection.pool.name", namespace),
                                                 ("sqlcipherkit.connection.role", role.rawValue)])
    }

    func connectionCount(role: PoolReleaseEvent.Role, state: String, namespace: String) -> Gauge {
        gauge("db.client.connection.count", [Self.system, ("db.client.connection.pool.name", namespace),
                                             ("db.client.connection.state", state),
                                             ("sqlcipherkit.connection.role", role.rawValue)])
    }

    func pendingRequests(namespace: String) -> Gauge {
        gauge("db.client.connection.pending_requests", [Self.system, ("db.client.connection.pool.name", namespace)])
    }

    func transactionDuration(_ outcome: TransactionEvent.Outcome, namespace: String) -> Metrics.Timer {
        timer("sqlcipherkit.transaction.duration", [Self.system, ("db.namespace", namespace),
                                                    ("sqlcipherkit.transaction.outcome", outcome.rawValue)])
    }

    func commitDuration(namespace: String) -> Metrics.Timer {
        timer("sqlcipherkit.transaction.commit.duration", [Self.system, ("db.namespace", namespace)])
    }

    func walFrames(namespace: String) -> Gauge {
        gauge("sqlcipherkit.wal.frames", [Self.system, ("db.namespace", namespace)])
    }

    func walBytes(namespace: String) -> Gauge {
        gauge("sqlcipherkit.wal.size", [Self.system, ("db.namespace", namespace)])
    }

    func checkpointDuration(namespace: String) -> Metrics.Timer {
        timer("sqlcipherkit.checkpoint.duration", [Self.system, ("db.namespace", namespace)])
    }

    func checkpointedFrames(namespace: String) -> Counter {
        counter("sqlcipherkit.checkpoint.frames", [Self.system, ("db.namespace", namespace)])
    }

    func busyRetries(namespace: String) -> Counter {
        counter("sqlcipherkit.busy.retries", [Self.system, ("db.namespace", namespace)])
    }

    private static func key(_ label: String, _ dimensions: [(String, String)]) -> String {
        ([label] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: "\u{1}")
    }

    private func timer(_ label: String, _ dimensions: [(String, String)]) -> Metrics.Timer {
        timers.withLock { timers in
            let key = Self.key(label, dimensions)
            if let timer = timers[key] { return timer }
            let timer = Metrics.Timer(label: label, dimensions: dimensions, factory: factory)
            timers[key] = timer
            return timer
        }
    }

    private func gauge(_ label: String, _ dimensions: [(String, String)]) -> Gauge {
        gauges.withLock { gauges in
            let key = Self.key(label, dimensions)
            if let gauge = gauges[key] { return gauge }
            let gauge = Gauge(label: label, dimensions: dimensions, factory: factory)
            gauges[key] = gauge
            return gauge
        }
    }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> Counter {
        counters.withLock { counters in
            let key = Self.key(label, dimensions)
            if let counter = counters[key] { return counter }
            let counter = Counter(label: label, dimensions: dimensions, factory: factory)
            counters[key] = counter
            return counter
        }
    }
}
