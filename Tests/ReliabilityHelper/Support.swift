#if canImport(Glibc)
import Glibc
#endif
import ReliabilitySupport
import SQLCipherKit

/// Writes one line to standard output, unbuffered.
func report(_ line: String) {
    writeLine(line, to: 1)
}

/// Writes `line` and a newline to file descriptor `descriptor` with write(2), bypassing stdio buffers; exits
/// with status 70 when the parent has stopped reading.
func writeLine(_ line: String, to descriptor: Int32) {
    guard StandardError.write(line + "\n", toDescriptor: descriptor) else { exit(70) }
}

/// Reports a failure on standard error and exits with status 70 (EX_SOFTWARE).
func fail(_ message: String) -> Never {
    writeLine("ReliabilityHelper: \(message)", to: 2)
    exit(70)
}

/// Reports a usage error and exits with status 64 (EX_USAGE).
func fail(usage: String) -> Never {
    writeLine("ReliabilityHelper: \(usage)", to: 2)
    exit(64)
}

/// Reads one line from standard input (the parent's "go on"); exits quietly when the parent has gone.
func awaitParent() {
    guard readLine() != nil else { exit(0) }
}

/// The raw key named by the environment variable `name` (64 hex digits).
func environmentKey(_ name: String) -> Key {
    guard let hex = getenv(name).map({ String(cString: $0) }) else { fail("\(name) is not set") }
    do {
        return try Key.rawKey(hex: Array(hex.utf8))
    } catch {
        fail("\(name) holds no valid raw key: \(error.kind)")
    }
}

/// Runs `body`, turning any thrown error into a failure report (the error's kind and message; never a key).
func orFail<R>(_ what: String, _ body: () throws -> R) -> R {
    do {
        return try body()
    } catch {
        fail("\(what): \(error)")
    }
}

/// The seed from RELIABILITY_SEED, or 1.
func environmentSeed() -> UInt64 {
    getenv("RELIABILITY_SEED").flatMap { UInt64(String(cString: $0)) } ?? 1
}

/// Parses a journal mode name ("wal", "delete"; "off" only for the tests' negative controls).
func journalMode(_ text: String) -> Database.JournalMode {
    guard let mode = Database.JournalMode(rawValue: text) else { fail(usage: "unknown journal mode \(text)") }
    return mode
}
