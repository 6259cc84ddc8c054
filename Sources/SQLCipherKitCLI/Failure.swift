import ArgumentParser
import SQLCipherKit

#if canImport(Glibc)
import Glibc
#endif

/// The exit statuses other tools script against.
enum ExitStatus {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let wrongKeyOrNotADatabase: Int32 = 3
    static let integrityFailure: Int32 = 4
    static let usage: Int32 = 64
}

/// A failure the CLI reports itself, as one sentence on standard error, with its exit status.
struct CommandFailure: Error {
    let message: String
    let status: Int32
}

/// Runs a command's work and turns every error into one sentence on standard error and the documented exit
/// status. Error texts come from SQLCipherKit, which never puts key material in them.
func reportingFailures(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as CommandFailure {
        printError(error.message)
        throw ExitCode(error.status)
    } catch let error as SQLCipherError {
        printError(error.description)
        throw ExitCode(status(for: error))
    } catch let error as ExitCode {
        throw error
    } catch {
        printError("\(error)")
        throw ExitCode(ExitStatus.failure)
    }
}

private func status(for error: SQLCipherError) -> Int32 {
    switch error.kind {
    case .wrongKeyOrNotADatabase: ExitStatus.wrongKeyOrNotADatabase
    case .corrupt: ExitStatus.integrityFailure
    case .invalidKey, .invalidArgument: ExitStatus.usage
    default: ExitStatus.failure
    }
}

/// Writes `message` to standard error, prefixed with the tool's name.
func printError(_ message: String) {
    standardError("sqlcipherkit: \(message)\n")
}

/// Writes `text` to standard error, unbuffered (the C `stderr` global is not concurrency-safe in Swift 6).
func standardError(_ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { write(STDERR_FILENO, $0.baseAddress! + offset, $0.count - offset) }
        guard written > 0 else { return }
        offset += written
    }
}
