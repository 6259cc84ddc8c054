import SQLCipherKit
import Tracing

extension ServerObserver {
    /// The context a span of an event with `context` gets as its parent; nil: no span.
    private func parent(_ context: (any Sendable)?) -> ServiceContext? {
        if let context = Self.serviceContext(context) { return context }
        return configuration.tracesWithoutParent ? .topLevel : nil
    }

    /// A client span for the statement, from its first step to its end.
    func trace(_ event: StatementEvent, errorType: String?) {
        guard let tracer = configuration.tracer, let parent = parent(event.context) else { return }
        let span = tracer.startSpan(event.operation, context: parent, ofKind: .client,
                                    at: DefaultTracerClock.Timestamp(nanosecondsSinceEpoch: event.startTime),
                                    function: #function, file: #fileID, line: #line)
        // One update, not one per attribute: a recording span guards its attributes with a lock, and each
        // subscript assignment reads and writes the whole set under it. A span the sampler dropped records nothing.
        if span.isRecording {
            let namespace = namespace(for: event.path)
            let queryText = configuration.queryText
            span.updateAttributes { attributes in
                attributes["db.system.name"] = "sqlite"
                attributes["db.namespace"] = namespace
                attributes["db.operation.name"] = event.operation
                attributes["db.response.returned_rows"] = event.rows
                attributes["sqlcipherkit.rows_changed"] = event.changes
                switch queryText {
                case .off: break
                case .operationOnly: attributes["db.query.summary"] = event.operation
                case .exact: attributes["db.query.text"] = event.sql
                }
                if let errorType {
                    attributes["error.type"] = errorType
                    attributes["db.response.status_code"] = "\(event.resultCode)"
                }
            }
            if errorType != nil { span.setStatus(SpanStatus(code: .error)) }
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
        if span.isRecording {
            let namespace = namespace(for: event.path)
            span.updateAttributes { attributes in
                attributes["db.system.name"] = "sqlite"
                attributes["db.namespace"] = namespace
                attributes["sqlcipherkit.transaction.outcome"] = event.outcome.rawValue
                attributes["sqlcipherkit.transaction.wrote"] = event.wrote
                attributes["sqlcipherkit.transaction.commit_duration_ns"] = event.commitDuration.nanoseconds
            }
        }
        span.end(at: DefaultTracerClock.Timestamp(
            nanosecondsSinceEpoch: event.startTime &+ UInt64(max(0, event.duration.nanoseconds))))
    }
}
