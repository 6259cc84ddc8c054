import ArgumentParser
import SQLCipherKit

/// A failure the CLI reports itself, as one sentence on standard error, with its exit status.
struct CommandFailure: Error {
    let message: String
    let status: ExitStatus
}

/// A subcommand whose every failure ends as one sentence on standard error and the documented exit status.
///
/// A command implements ``perform()``; this protocol's `run()` calls it and does the reporting. Error texts
/// come from SQLCipherKit, which never puts key material in them.
protocol ReportingCommand: ParsableCommand {
    /// The command's work (options already parsed and validated).
    func perform() throws
}

extension ReportingCommand {
    func run() throws {
        do {
            try perform()
        } catch let error as CommandFailure {
            reportError(error.message)
            throw error.status.exitCode
        } catch let error as SQLCipherError {
            reportError(error.description)
            throw ExitStatus(for: error).exitCode
        } catch let error as ExitCode {
            throw error
        } catch {
            reportError("\(error)")
            throw ExitStatus.failure.exitCode
        }
    }
}

/// Writes `message` to standard error, prefixed with the tool's name.
func reportError(_ message: String) {
    StandardError.write("sqlcipherkit: \(message)\n")
}
