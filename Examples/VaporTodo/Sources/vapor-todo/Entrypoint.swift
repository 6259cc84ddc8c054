import Foundation
import Logging
import Vapor
import VaporTodo

/// `vapor-todo serve [--hostname H] [--port P]` (or any Vapor command) with the settings from the environment
/// (``TodoSettings``). A boot that fails prints why on standard error and exits with status 1.
@main
enum Entrypoint {
    static func main() async throws {
        var environment = try Environment.detect()
        try LoggingSystem.bootstrap(from: &environment)
        let app = try await Application.make(environment)
        do {
            try await configure(app, settings: TodoSettings(environment: ProcessInfo.processInfo.environment))
            try await app.execute()
        } catch {
            FileHandle.standardError.write(Data("vapor-todo: \(error)\n".utf8))
            try? await app.asyncShutdown()
            exit(1)
        }
        try await app.asyncShutdown()
    }
}
