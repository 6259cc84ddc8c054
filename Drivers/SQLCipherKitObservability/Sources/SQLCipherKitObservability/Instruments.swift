import Metrics
import SQLCipherKit
import Synchronization

/// The metrics of a ``ServerObserver``, made once per name and label set and kept. Every label but the namespace comes
/// from a fixed set (an operation word, a result-code name, a role, a state, an outcome), so the series are bounded
/// by the number of database files (or by one, with ``ServerObserver/Configuration/namespace`` set).
///
/// Names follow OpenTelemetry's semantic conventions for database clients where they have one
/// (`db.client.operation.duration`, `db.client.connection.*`); SQLCipherKit's own figures are `sqlcipherkit.*`.
///
/// Every event looks its instruments up here, on the threads that run the statements: a lookup hashes a small key (a
/// kind and two or three short strings) under one lock held for the lookup alone; the labels are built only when an
/// instrument is made. (The first version built a string key of every label under the lock: in a `perf` profile of
/// the load benchmark's server at 16 connections, the observer's functions took about 9 % of its CPU; 3 % since.)
final class Instruments: Sendable {
    private let factory: any MetricsFactory

    /// Which instrument a key names.
    private enum Kind: UInt8 {
        case operationDuration, connectionWait, connectionCount, pendingRequests, transactionDuration, commitDuration
        case walFrames, walBytes, checkpointDuration, checkpointedFrames, busyRetries
    }

    /// An instrument's identity: its kind, namespace and the fixed-set labels that vary (`first`, `second`).
    private struct Key: Hashable {
        let kind: Kind
        let namespace: String
        var first = ""
        var second = ""
    }

    /// swift-metrics' timers, gauges and counters are classes: made once, kept by key.
    private struct Made {
        var timers: [Key: Metrics.Timer] = [:]
        var gauges: [Key: Gauge] = [:]
        var counters: [Key: Counter] = [:]
    }

    private let made = Mutex(Made())

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    static let system = ("db.system.name", "sqlite")

    func operationDuration(_ operation: String, namespace: String, errorType: String?) -> Metrics.Timer {
        timer(Key(kind: .operationDuration, namespace: namespace, first: operation, second: errorType ?? "")) {
            ("db.client.operation.duration", [Self.system, ("db.namespace", namespace), ("db.operation.name", operation)]
                + (errorType.map { [("error.type", $0)] } ?? []))
        }
    }

    func connectionWait(role: PoolReleaseEvent.Role, namespace: String) -> Metrics.Timer {
        timer(Key(kind: .connectionWait, namespace: namespace, first: role.rawValue)) {
            ("db.client.connection.wait_time", [Self.system, ("db.client.connection.pool.name", namespace),
                                                ("sqlcipherkit.connection.role", role.rawValue)])
        }
    }

    /// Sets `db.client.connection.count` for `role` to `used` (state `used`) and `idle` (state `idle`), unless
    /// figures read after them (a larger `sequence`) are set already: both under one hold of the lock.
    func recordConnectionCounts(used: Int, idle: Int, role: PoolReleaseEvent.Role, namespace: String,
                                sequence: UInt64) {
        ordered.withLock { ordered in
            ordered.record(Key(kind: .connectionCount, namespace: namespace, first: role.rawValue, second: "used"),
                           used, sequence: sequence, factory: factory) {
                Self.connectionCount(role: role, state: "used", namespace: namespace)
            }
            ordered.record(Key(kind: .connectionCount, namespace: namespace, first: role.rawValue, second: "idle"),
                           idle, sequence: sequence, factory: factory) {
                Self.connectionCount(role: role, state: "idle", namespace: namespace)
            }
        }
    }

    /// `db.client.connection.count`'s label and dimensions for `role` and `state`.
    private static func connectionCount(role: PoolReleaseEvent.Role, state: String, namespace: String)
        -> (String, [(String, String)]) {
        ("db.client.connection.count", [system, ("db.client.connection.pool.name", namespace),
                                        ("db.client.connection.state", state),
                                        ("sqlcipherkit.connection.role", role.rawValue)])
    }

    /// Sets `db.client.connection.pending_requests` to `value`, unless a figure read after it is set already.
    func recordPendingRequests(_ value: Int, namespace: String, sequence: UInt64) {
        ordered.withLock { ordered in
            ordered.record(Key(kind: .pendingRequests, namespace: namespace), value, sequence: sequence,
                           factory: factory) {
                ("db.client.connection.pending_requests",
                 [Self.system, ("db.client.connection.pool.name", namespace)])
            }
        }
    }

    func transactionDuration(_ outcome: TransactionEvent.Outcome, namespace: String) -> Metrics.Timer {
        timer(Key(kind: .transactionDuration, namespace: namespace, first: outcome.rawValue)) {
            ("sqlcipherkit.transaction.duration", [Self.system, ("db.namespace", namespace),
                                                   ("sqlcipherkit.transaction.outcome", outcome.rawValue)])
        }
    }

    func commitDuration(namespace: String) -> Metrics.Timer {
        timer(Key(kind: .commitDuration, namespace: namespace)) {
            ("sqlcipherkit.transaction.commit.duration", [Self.system, ("db.namespace", namespace)])
        }
    }

    func walFrames(namespace: String) -> Gauge {
        gauge(Key(kind: .walFrames, namespace: namespace)) {
            ("sqlcipherkit.wal.frames", [Self.system, ("db.namespace", namespace)])
        }
    }

    func walBytes(namespace: String) -> Gauge {
        gauge(Key(kind: .walBytes, namespace: namespace)) {
            ("sqlcipherkit.wal.size", [Self.system, ("db.namespace", namespace)])
        }
    }

    func checkpointDuration(namespace: String) -> Metrics.Timer {
        timer(Key(kind: .checkpointDuration, namespace: namespace)) {
            ("sqlcipherkit.checkpoint.duration", [Self.system, ("db.namespace", namespace)])
        }
    }

    func checkpointedFrames(namespace: String) -> Counter {
        counter(Key(kind: .checkpointedFrames, namespace: namespace)) {
            ("sqlcipherkit.checkpoint.frames", [Self.system, ("db.namespace", namespace)])
        }
    }

    func busyRetries(namespace: String) -> Counter {
        counter(Key(kind: .busyRetries, namespace: namespace)) {
            ("sqlcipherkit.busy.retries", [Self.system, ("db.namespace", namespace)])
        }
    }

    /// The timer `key` names; `labels` gives its label and dimensions the first time.
    private func timer(_ key: Key, _ labels: () -> (String, [(String, String)])) -> Metrics.Timer {
        made.withLock { made in
            if let timer = made.timers[key] { return timer }
            let (label, dimensions) = labels()
            let timer = Metrics.Timer(label: label, dimensions: dimensions, factory: factory)
            made.timers[key] = timer
            return timer
        }
    }

    private func gauge(_ key: Key, _ labels: () -> (String, [(String, String)])) -> Gauge {
        made.withLock { made in
            if let gauge = made.gauges[key] { return gauge }
            let (label, dimensions) = labels()
            let gauge = Gauge(label: label, dimensions: dimensions, factory: factory)
            made.gauges[key] = gauge
            return gauge
        }
    }

    /// The pool's gauges, set in the order their figures were read: a pool reads its figures under its locks, but
    /// reports them after, from several threads, so an older figure can arrive last (a reader's release overtaken
    /// by the next acquire), and would stay until the next event. The check and the set share the lock (its own,
    /// apart from the statements' lookups in `made`), so the last set is the newest figure.
    private struct Ordered {
        var gauges: [Key: Gauge] = [:]
        /// The number of the figure each gauge shows.
        var shown: [Key: UInt64] = [:]

        /// Sets the gauge `key` names to `value` when `sequence` is larger than the one of the figure it shows.
        mutating func record(_ key: Key, _ value: Int, sequence: UInt64, factory: any MetricsFactory,
                             _ labels: () -> (String, [(String, String)])) {
            if let shown = shown[key], shown >= sequence { return }
            shown[key] = sequence
            let gauge: Gauge
            if let existing = gauges[key] {
                gauge = existing
            } else {
                let (label, dimensions) = labels()
                gauge = Gauge(label: label, dimensions: dimensions, factory: factory)
                gauges[key] = gauge
            }
            gauge.record(value)
        }
    }

    private let ordered = Mutex(Ordered())

    private func counter(_ key: Key, _ labels: () -> (String, [(String, String)])) -> Counter {
        made.withLock { made in
            if let counter = made.counters[key] { return counter }
            let (label, dimensions) = labels()
            let counter = Counter(label: label, dimensions: dimensions, factory: factory)
            made.counters[key] = counter
            return counter
        }
    }
}
