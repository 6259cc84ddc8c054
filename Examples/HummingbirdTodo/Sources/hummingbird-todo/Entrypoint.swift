import Foundation
import Hummingbird
import HummingbirdTodo
import Logging

/// `hummingbird-todo [--hostname H] [--port P]` with the settings from the environment (``TodoSettings``); stops
/// on SIGTERM or SIGINT. A boot that fails prints why on standard error and exits with status 1.
@main
enum Entrypoint {
    static func main() async {
        var hostname = "127.0.0.1", port = 8080
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            switch (argument, arguments.popFirst()) {
            case ("--hostname", let value?): hostname = value
            case ("--port", let value?) where Int(value) != nil: port = Int(value) ?? port
            default: fail("usage: hummingbird-todo [--hostname HOST] [--port PORT] (settings in TODO_* variables)")
            }
        }
        var logger = Logger(label: "hummingbird-todo")
        logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        do {
            let environment = ProcessInfo.processInfo.environment
            let telemetry = try TodoTelemetry(environment: environment, logger: logger)
            let app = try await buildApplication(settings: TodoSettings(environment: environment),
                                                 server: .init(address: .hostname(hostname, port: port)), logger: logger,
                                                 telemetry: telemetry)
            try await app.runService()
        } catch {
            fail("hummingbird-todo: \(error)")
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(1)
    }
}
