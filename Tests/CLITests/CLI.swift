import Foundation
import ProcessTestSupport

/// Runs the built `sqlcipherkit` executable (SwiftPM builds it next to the test bundle).
enum CLI {
    static let executable = builtCLIExecutable

    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    typealias Result = ProcessResult

    /// Runs the CLI with `arguments`, extra `environment` and `input` on standard input (empty by default: no
    /// terminal, so the CLI can never prompt).
    static func run(_ arguments: [String], environment: [String: String] = [:], input: Data = Data()) throws -> Result {
        try runProcess(executable, arguments,
                       environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, input: input)
    }
}

func contents(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
}
