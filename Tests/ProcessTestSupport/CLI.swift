import Foundation

/// Runs the built `sqlcipherkit` executable, for the targets that depend on SQLCipherKitCLI (SwiftPM builds it
/// next to the test bundle).
public enum CLI {
    /// The path of the `sqlcipherkit` SwiftPM built next to the test bundle.
    public static let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("sqlcipherkit").path

    /// Runs the CLI with `arguments`, `environment` added to this process's own, and `input` on standard input
    /// (empty by default: no terminal, so the CLI can never prompt).
    public static func run(_ arguments: [String], environment: [String: String] = [:], input: Data = Data(),
                           timeout: TimeInterval = 600) throws -> ProcessResult {
        try runProcess(executable, arguments,
                       environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, input: input,
                       timeout: timeout)
    }
}
