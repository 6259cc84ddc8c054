import Logging
import Metrics
import SQLCipherKit
import Tracing

/// A ``SQLCipherKit/DatabaseObserver`` that reports to swift-log, swift-metrics and swift-distributed-tracing, with
/// OpenTelemetry's names for database clients.
///
/// ```swift
/// let observer = ServerObserver(.init(logger: app.logger, queryText: .operationOnly))
/// let pool = try DatabasePool(path: path, key: key,
///                             configuration: .init(database: .init(observer: observer)))
/// ```
///
/// - **Logs** (``Configuration/logger``): a statement slower than ``Configuration/slowStatementThreshold`` at
///   `warning`, a failed one at ``Configuration/failureLogLevel``, with `db.*` metadata.
/// - **Metrics** (``Configuration/metricsFactory``): `db.client.operation.duration` by `db.operation.name` (a word
///   from a fixed set, never SQL text) and `error.type`; the pool's `db.client.connection.count` (by `state`),
///   `db.client.connection.wait_time` and `db.client.connection.pending_requests`; and `sqlcipherkit.*` figures for
///   transactions, the write-ahead log, checkpoints and busy retries. Every label but `db.namespace` (the file's
///   name, or ``Configuration/namespace``) comes from a fixed set; no label holds SQL text.
/// - **Traces** (``Configuration/tracer``): a client span per statement and per transaction, a child of the
///   caller's `ServiceContext`, also when a pool's thread runs the work. The SQL text goes into a span only as
///   ``QueryTextPolicy`` allows.
///
/// Nothing secret reaches any of them: statements are reported as prepared, so bound values are not in them, and
/// SQLCipherKit never puts a key into SQL text.
public struct ServerObserver: DatabaseObserver {
    /// What the observer reports, and where.
    public struct Configuration: Sendable {
        /// Where slow and failed statements are logged; nil: no logs. Default: nil. A statement's line also carries
        /// the metadata of the logger the caller bound for the work with swift-log's `withLogger`
        /// (FluentSQLCipherDriver binds each Fluent database's: in a Vapor handler, `req.logger`, with the request's
        /// `request-id`), but never under a key of the line's own (`db.*`, `error.*`, `sqlcipherkit.*`) or the
        /// trace's (`trace_id`, `span_id`, `trace_flags`), in any case. Bootstrap swift-log before the observer's
        /// first statement: swift-log fixes its default task-local logger when it is first read.
        public var logger: Logger?
        /// A statement at least this slow is logged at `warning`. Default: 100 ms.
        public var slowStatementThreshold: Duration
        /// The level of a failed statement's log line (the caller also gets the error). Default: `info`.
        public var failureLogLevel: Logger.Level
        /// Where metrics go; nil: no metrics. Default: `MetricsSystem.factory` when the configuration is made: make it
        /// after the app bootstraps its metrics.
        public var metricsFactory: (any MetricsFactory)?
        /// Where spans go; nil: no spans. Default: `InstrumentationSystem.tracer` when the configuration is made: make
        /// it after the app bootstraps its tracing.
        public var tracer: (any Tracer)?
        /// Whether work the caller runs without a `ServiceContext` gets spans (each statement then starts a trace of
        /// its own). Default: false. Any `ServiceContext` the caller carries is taken as the parent, one with
        /// baggage only included.
        public var tracesWithoutParent: Bool
        /// How much of the SQL text spans and logs carry. Default: ``QueryTextPolicy/operationOnly``.
        public var queryText: QueryTextPolicy
        /// The `db.namespace` attribute and label; nil: the database file's name (the path's last component). Set it
        /// when the app opens many files (one per tenant): each file's name would make series of its own.
        public var namespace: String?

        public init(logger: Logger? = nil, slowStatementThreshold: Duration = .milliseconds(100),
                    failureLogLevel: Logger.Level = .info,
                    metricsFactory: (any MetricsFactory)? = MetricsSystem.factory,
                    tracer: (any Tracer)? = InstrumentationSystem.tracer, tracesWithoutParent: Bool = false,
                    queryText: QueryTextPolicy = .operationOnly, namespace: String? = nil) {
            self.logger = logger
            self.slowStatementThreshold = slowStatementThreshold
            self.failureLogLevel = failureLogLevel
            self.metricsFactory = metricsFactory
            self.tracer = tracer
            self.tracesWithoutParent = tracesWithoutParent
            self.queryText = queryText
            self.namespace = namespace
        }
    }

    public let configuration: Configuration
    let instruments: Instruments?

    public init(_ configuration: Configuration = .init()) {
        self.configuration = configuration
        instruments = configuration.metricsFactory.map { Instruments(factory: $0) }
    }

    /// The caller's `ServiceContext` and, when the observer logs, the logger the caller bound with swift-log's
    /// `withLogger`: a pool's `async` call takes them on the caller's task, so that the spans of work a pool
    /// thread runs are children of the caller's span, and its log lines carry the caller's logger's metadata.
    public func currentContext() -> (any Sendable)? {
        let service = ServiceContext.current
        guard configuration.logger != nil else { return service }
        // Its metadata is all a line takes from it: a logger without any (swift-log's default, where nothing is
        // bound) is not kept.
        let metadata = Logger.current.handler.metadata
        guard !metadata.isEmpty else { return service }
        return CallerContext(service: service, metadata: metadata)
    }

    /// The `ServiceContext` in a context ``currentContext()`` returned.
    static func serviceContext(_ context: (any Sendable)?) -> ServiceContext? {
        if let service = context as? ServiceContext { return service }
        return (context as? CallerContext)?.service
    }

    /// `db.namespace` for a database at `path`.
    func namespace(for path: String) -> String {
        if let namespace = configuration.namespace { return namespace }
        // By UTF-8 bytes: every event asks, and a search by characters (grapheme breaking) took a sixth of the
        // observer's samples in a profile of the load benchmark's server with metrics only. A name up to 15 bytes
        // is stored in the string itself, without an allocation.
        let bytes = path.utf8
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(Substring(bytes[bytes.index(after: slash)...]))
    }

    public func statementFinished(_ event: StatementEvent) {
        let failed = event.resultCode != 0
        let errorType = failed ? ResultCodeName.errorType(event.resultCode) : nil
        instruments?.operationDuration(event.operation, namespace: namespace(for: event.path), errorType: errorType)
            .recordNanoseconds(event.duration.nanoseconds)
        log(event, errorType: errorType)
        trace(event, errorType: errorType)
    }

    public func transactionFinished(_ event: TransactionEvent) {
        instruments?.transactionDuration(event.outcome, namespace: namespace(for: event.path))
            .recordNanoseconds(event.duration.nanoseconds)
        // A read transaction's COMMIT syncs nothing: only writes tell how long the disk takes.
        if event.outcome == .committed, event.wrote {
            instruments?.commitDuration(namespace: namespace(for: event.path))
                .recordNanoseconds(event.commitDuration.nanoseconds)
        }
        trace(event)
    }

    public func walCommitted(_ event: WALEvent) {
        instruments?.walFrames(namespace: namespace(for: event.path)).record(event.frames)
        instruments?.walBytes(namespace: namespace(for: event.path)).record(event.fileBytes)
    }

    public func checkpointFinished(_ event: CheckpointEvent) {
        instruments?.checkpointDuration(namespace: namespace(for: event.path))
            .recordNanoseconds(event.duration.nanoseconds)
        if event.checkpointed > 0 {
            instruments?.checkpointedFrames(namespace: namespace(for: event.path)).increment(by: event.checkpointed)
        }
        if event.resultCode != 0 {
            configuration.logger?.debug("SQLite checkpoint stopped early", metadata: [
                "db.namespace": "\(namespace(for: event.path))", "db.response.status_code": "\(event.resultCode)",
                "sqlcipherkit.checkpoint.frames": "\(event.frames)",
                "sqlcipherkit.checkpoint.checkpointed": "\(event.checkpointed)",
            ])
        }
    }

    public func busyRetried(_ event: BusyEvent) {
        instruments?.busyRetries(namespace: namespace(for: event.path)).increment()
    }

    public func writerQueueChanged(_ event: PoolQueueEvent) {
        instruments?.recordPendingRequests(event.queueDepth, namespace: namespace(for: event.path),
                                           sequence: event.sequence)
    }

    public func writerAcquired(_ event: PoolWaitEvent) {
        guard let instruments else { return }
        let namespace = namespace(for: event.path)
        instruments.connectionWait(role: .writer, namespace: namespace).recordNanoseconds(event.wait.nanoseconds)
        instruments.recordPendingRequests(event.queueDepth, namespace: namespace, sequence: event.sequence)
        recordConnections(role: .writer, inUse: event.inUse, capacity: event.capacity, sequence: event.sequence,
                          namespace: namespace)
    }

    public func readerAcquired(_ event: PoolWaitEvent) {
        guard let instruments else { return }
        let namespace = namespace(for: event.path)
        instruments.connectionWait(role: .reader, namespace: namespace).recordNanoseconds(event.wait.nanoseconds)
        recordConnections(role: .reader, inUse: event.inUse, capacity: event.capacity, sequence: event.sequence,
                          namespace: namespace)
    }

    public func connectionReleased(_ event: PoolReleaseEvent) {
        recordConnections(role: event.role, inUse: event.inUse, capacity: event.capacity, sequence: event.sequence,
                          namespace: namespace(for: event.path))
    }

    private func recordConnections(role: PoolReleaseEvent.Role, inUse: Int, capacity: Int, sequence: UInt64,
                                   namespace: String) {
        instruments?.recordConnectionCounts(used: inUse, idle: capacity - inUse, role: role, namespace: namespace,
                                            sequence: sequence)
    }
}

extension Duration {
    /// The whole duration in nanoseconds (saturating).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole &+ attoseconds / 1_000_000_000
    }
}

/// What ``ServerObserver/currentContext()`` takes on the caller's task when the caller bound a logger with
/// metadata.
struct CallerContext: Sendable {
    let service: ServiceContext?
    /// The bound logger's metadata.
    let metadata: Logger.Metadata
}
