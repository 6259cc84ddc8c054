import Foundation
import Logging
import OTel
import Vapor
import VaporTodo

/// `vapor-todo serve [--hostname H] [--port P]` (or any Vapor command) with the settings from the environment
/// (``TodoSettings``), metrics at `/metrics` and, with an OTLP endpoint set, traces (``TodoTelemetry``). A boot that fails prints why on standard error and exits with status 1.
@main
enum Entrypoint {
    static func main() async throws {
        var environment = try Environment.detect()
        // Vapor's log lines, at the level `--log`/`LOG_LEVEL` give, with the current span's `trace_id` and `span_id`
        // (swift-otel's metadata provider): a slow or failed statement's line names its request's trace.
        try LoggingSystem.bootstrap(from: &environment) { level in
            { label in
                var handler = StreamLogHandler.standardOutput(label: label,
                                                              metadataProvider: OTel.makeLoggingMetadataProvider())
                handler.logLevel = level
                return handler
            }
        }
        let app = try await Application.make(environment)
        let telemetry: TodoTelemetry
        do {
            telemetry = try TodoTelemetry(environment: ProcessInfo.processInfo.environment, logger: app.logger)
        } catch {
            FileHandle.standardError.write(Data("vapor-todo: cannot start the traces' exporter: \(error)\n".utf8))
            try? await app.asyncShutdown()
            exit(1)
        }
        do {
            try await configure(app, settings: TodoSettings(environment: ProcessInfo.processInfo.environment),
                                observability: telemetry.observability)
            try await app.execute()
            // Vapor's own shutdown closes the databases (Fluent's lifecycle handler) before it stops the HTTP
            // server (the serve command, kept in the app's storage): under load, a request that comes in between
            // finds no database, and Fluent's `req.db` traps (SIGILL instead of exit status 0 on a SIGTERM, seen by
            // Tests/Examples/load-safety.py). So the server stops first: it takes no new connection and lets the
            // requests in flight answer (its shutdownTimeout, 10 seconds), and then the databases close.
            await app.server.shutdown()
        } catch {
            FileHandle.standardError.write(Data("vapor-todo: \(error)\n".utf8))
            try? await app.asyncShutdown()
            await telemetry.shutdown()
            exit(1)
        }
        try await app.asyncShutdown()
        // Last: the last requests' spans are exported before the process ends.
        await telemetry.shutdown()
    }
}
