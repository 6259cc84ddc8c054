import Logging
import SQLCipherKit
import Tracing

extension ServerObserver {
    /// A slow statement at `warning`, a failed one at ``Configuration/failureLogLevel``, logged with the caller's
    /// `ServiceContext` current (a pool's thread runs the statement, where no task-local of the caller's is): the
    /// logger's metadata provider (swift-otel's adds `trace_id` and `span_id`) then ties the line to the request.
    /// The line also carries the metadata of the logger the caller bound (``currentContext()``): a request's
    /// `request-id`, never under a key of the line's own or the trace's (``isReservedLogKey(_:)``).
    func log(_ event: StatementEvent, errorType: String?) {
        guard let logger = configuration.logger else { return }
        let slow = event.duration >= configuration.slowStatementThreshold
        guard slow || errorType != nil else { return }
        var metadata: Logger.Metadata = [
            "db.system.name": "sqlite",
            "db.namespace": "\(namespace(for: event.path))",
            "db.operation.name": "\(event.operation)",
            "db.response.returned_rows": "\(event.rows)",
            "sqlcipherkit.duration_ms": "\(Double(event.duration.nanoseconds) / 1e6)",
        ]
        switch configuration.queryText {
        case .off: break
        case .operationOnly: metadata["db.query.summary"] = "\(event.operation)"
        case .exact: metadata["db.query.text"] = "\(event.sql)"
        }
        if let caller = event.context as? CallerContext {
            // The caller's own metadata (a request's `request-id`), never under a key the line could carry: a
            // caller's `error.type` on a slow line would make it look failed, its `db.query.text` would put text
            // into a line whose policy keeps it out, its `trace_id` would hide the trace's.
            for (key, value) in caller.metadata where !Self.isReservedLogKey(key) {
                metadata[key] = value
            }
        }
        ServiceContext.withValue(Self.serviceContext(event.context) ?? ServiceContext.current) {
            if let errorType {
                metadata["error.type"] = "\(errorType)"
                metadata["db.response.status_code"] = "\(event.resultCode)"
                logger.log(level: configuration.failureLogLevel, "SQLite statement failed", metadata: metadata)
            } else {
                logger.warning("slow SQLite statement", metadata: metadata)
            }
        }
    }

    /// Whether a caller's metadata key is one the observer's lines keep for themselves: `db.*`, `error.*`,
    /// `sqlcipherkit.*`, and the trace's `trace_id`, `span_id` and `trace_flags` (swift-otel's metadata provider),
    /// in any case.
    static func isReservedLogKey(_ key: String) -> Bool {
        let key = key.lowercased()
        return key.hasPrefix("db.") || key.hasPrefix("error.") || key.hasPrefix("sqlcipherkit.")
            || ["trace_id", "span_id", "trace_flags"].contains(key)
    }
}
