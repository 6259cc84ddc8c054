import ArgumentParser
import SQLCipherKit

/// The exit statuses other tools script against: the one list (the root command's help prints it from here).
enum ExitStatus: Int32, CaseIterable {
    case success = 0
    /// Anything else: a missing file, an existing output without --force, an interrupted operation.
    case failure = 1
    case wrongKeyOrNotADatabase = 3
    /// The file was tampered with or is corrupt.
    case integrityFailure = 4
    /// A usage error (EX_USAGE). ArgumentParser gives its own validation errors this status too.
    case usage = 64
    /// Stopped by SIGINT, SIGTERM, SIGHUP or SIGQUIT (128 + SIGINT, as a shell reports Ctrl-C); the message says
    /// what state the command left.
    case interrupted = 130

    /// The status for an error SQLCipherKit threw.
    init(for error: SQLCipherError) {
        switch error.kind {
        case .wrongKeyOrNotADatabase: self = .wrongKeyOrNotADatabase
        case .corrupt: self = .integrityFailure
        case .invalidKey, .invalidArgument: self = .usage
        case .interrupted where Interruption.signal != nil: self = .interrupted
        default: self = .failure
        }
    }

    /// What ArgumentParser exits with.
    var exitCode: ExitCode { ExitCode(rawValue) }
}
