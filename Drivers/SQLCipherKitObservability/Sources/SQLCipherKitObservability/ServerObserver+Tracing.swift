import SQLCipherKit
import Tracing

extension ServerObserver {
    /// The context a span of an event with `context` gets as its parent; nil: no span.
    private func parent(_ context: (any Sendable)?) -> ServiceContext? {
        if let context = context as? ServiceContext { return context }
        return configuration.tracesWithoutParent ? .topLevel : nil
    }

    /// A client span for the statement, from its first step to its end.
    func trace(_ event: StatementEvent, errorType: String?) {
        guard let tracer = configuration.tracer, let parent = parent(event.context) else { return }
        let span = tracer.startSpan(event.operation, context: parent, ofKind: .client,
                                    at: DefaultTracerClock.Timestamp(nanosecondsSinceEpoch: event.startTime),
                                    function: #function, file: #fileID, line: #line)
        span.attributes["db.system.name"] = "sqlite"
        span.attributes["db.namespace"] = namespace(for: event.path)
        span.attributes["db.operation.name"] = event.operation
        span.attributes["db.response.returned_rows"] = event.rows
        span.attributes["sqlcipherkit.rows_changed"] = event.changes
        switch configuration.queryText {
        case .off: break
        case .operationOnly: span.attributes["db.query.summary"] = event.operation
        case .exact: span.attributes["db.query.text"] = event.sql
        }
        if let errorType {
            span.attributes["error.type"] = errorType
            span.attributes["db.response.status_code"] = "\(event.resultCode)"
            span.setStatus(SpanStatus(code: .error))
        }
        span.end(at: DefaultTracerClock.Timestamp(
            nanosecondsSinceEpoch: event.startTime &+ UInt64(max(0, event.duration.nanoseconds))))
    }

    /// A span for the transaction, from `BEGIN` to the end of `COMMIT` or `ROLLBACK`.
    func trace(_ event: TransactionEvent) {
        guard let tracer = configuration.tracer, let parent = parent(event.context) else { return }
        let span = tracer.startSpan("transaction", context: parent, ofKind: .internal,
                                    at: DefaultTracerClock.Timestamp(nanosecondsSinceEpoch: event.startTime),
                                    function: #function, file: #fileID, line: #line)
        span.attributes["db.system.name"] = "sqlite"
        span.attributes["db.namespace"] = namespace(for: event.path)
        span.attributes["sqlcipherkit.transaction.outcome"] = event.outcome.rawValue
        span.attributes["sqlcipherkit.transaction.wrote"] = event.wrote
        span.attributes["sqlcipherkit.transaction.commit_duration_ns"] = event.commitDuration.nanoseconds
        span.end(at: DefaultTracerClock.Timestamp(
            nanosecondsSinceEpoch: event.startTime &+ UInt64(max(0, event.duration.nanoseconds))))
    }
}
