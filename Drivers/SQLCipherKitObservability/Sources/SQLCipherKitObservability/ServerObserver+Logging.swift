import Logging
import SQLCipherKit
import Tracing

extension ServerObserver {
    /// A slow statement at `warning`, a failed one at ``Configuration/failureLogLevel``, logged with the caller's
    /// `ServiceContext` current (a pool's thread runs the statement, where no task-local of the caller's is): the
    /// logger's metadata provider (swift-otel's adds `trace_id` and `span_id`) then ties the line to the request.
    /// The line also carries the metadata of the logger the caller bound (``currentContext()``): a request's
    /// `request-id`.
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
        if let caller = (event.context as? CallerContext)?.logger {
            // The caller's own metadata, under the statement's keys (which win a clash).
            metadata.merge(caller.handler.metadata) { statement, _ in statement }
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
}
