import Metrics
import SQLCipherKit
import Synchronization

/// The metrics of a ``ServerObserver``, made once per name and label set and kept. Every label but the namespace comes
/// from a fixed set (an operation word, a result-code name, a role, a state, an outcome), so the series are bounded
/// by the number of database files (or by one, with ``ServerObserver/Configuration/namespace`` set).
///
/// Names follow OpenTelemetry's semantic conventions for database clients where they have one
/// (`db.client.operation.duration`, `db.client.connection.*`); SQLCipherKit's own figures are `sqlcipherkit.*`.
final class Instruments: Sendable {
    private let factory: any MetricsFactory
    /// Every instrument made so far, by kind, name and labels (swift-metrics' timers, gauges and counters are classes).
    private let made = Mutex<[String: any AnyObject & Sendable]>([:])

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

    /// The instrument of kind `M` named `label` with `dimensions`: made by `make` the first time, the same one after.
    private func instrument<M: AnyObject & Sendable>(_ label: String, _ dimensions: [(String, String)], make: () -> M) -> M {
        made.withLock { made in
            let key = ([String(describing: M.self), label] + dimensions.map { "\($0.0)=\($0.1)" })
                .joined(separator: "\u{1}")
            if let instrument = made[key] as? M { return instrument }
            let instrument = make()
            made[key] = instrument
            return instrument
        }
    }

    private func timer(_ label: String, _ dimensions: [(String, String)]) -> Metrics.Timer {
        instrument(label, dimensions) { Metrics.Timer(label: label, dimensions: dimensions, factory: factory) }
    }

    private func gauge(_ label: String, _ dimensions: [(String, String)]) -> Gauge {
        instrument(label, dimensions) { Gauge(label: label, dimensions: dimensions, factory: factory) }
    }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> Counter {
        instrument(label, dimensions) { Counter(label: label, dimensions: dimensions, factory: factory) }
    }
}
