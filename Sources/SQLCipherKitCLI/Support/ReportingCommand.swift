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

    /// The database the command opens, if one: a failure to open it is explained from the file where the
    /// engine's words would mislead (``explainOpenFailure(_:path:)``). Default: none.
    var databasePath: String? { get }

    /// What a signal that stopped the command's work left behind, for the operator (issue 44: say which key a
    /// rekey left). Default: nothing was changed.
    var stateAfterInterruption: String { get }

    /// What the command's work left when the signal came only after it was done. Default: the result is
    /// complete and kept.
    var stateAfterLateSignal: String { get }
}

extension ReportingCommand {
    var databasePath: String? { nil }

    var stateAfterInterruption: String {
        "nothing was changed, and no temporary file was left"
    }

    var stateAfterLateSignal: String {
        "the command had finished its work when the signal came: its result is complete and kept"
    }

    func run() throws {
        // What a killed run left beside the database (a private folder with a plaintext copy, say) goes first.
        if let databasePath { Database.removeLeftoverFiles(besides: databasePath) }
        do {
            try perform()
            try Interruption.stopIfSignalled(stateAfterLateSignal)
        } catch let error as CommandFailure {
            reportError(error.message)
            throw error.status.exitCode
        } catch let error as SQLCipherError {
            // After a signal, a failure is the interruption's (the engine does not always call it so:
            // sqlcipher_export reports an interrupt as a plain error); the engine's words follow.
            if let signal = Interruption.signal {
                reportError("stopped by \(Interruption.name(of: signal)): \(stateAfterInterruption) (\(error.message))")
                throw ExitStatus.interrupted.exitCode
            }
            if let path = databasePath, let better = explainOpenFailure(error, path: path) {
                reportError(better.message)
                throw better.status.exitCode
            }
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
