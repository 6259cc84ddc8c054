import Logging
import SQLCipherKit

extension ServerObserver {
    /// A slow statement at `warning`, a failed one at ``Configuration/failureLogLevel``.
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
        if let errorType {
            metadata["error.type"] = "\(errorType)"
            metadata["db.response.status_code"] = "\(event.resultCode)"
            logger.log(level: configuration.failureLogLevel, "SQLite statement failed", metadata: metadata)
        } else {
            logger.warning("slow SQLite statement", metadata: metadata)
        }
    }
}
