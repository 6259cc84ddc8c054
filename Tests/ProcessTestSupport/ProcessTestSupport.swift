import Foundation

// What the test targets share (running a child to completion with its pipes drained, the repository root, the
// temporary folder, file reading and writing, the built CLI, the pin). A library target, not a test target:
// test targets cannot import each other.

/// What a child process did: the one process-result type of the test targets.
public struct ProcessResult: CustomStringConvertible, Sendable {
    public let status: Int32
    /// Standard output; with `mergingStandardError`, standard output and standard error interleaved as written.
    public let stdout: String
    /// Standard error (empty with `mergingStandardError`).
    public let stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }

    public var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }

    /// Everything the child printed: standard output, then standard error (interleaved as written when the
    /// run merged them).
    public var output: String { stdout + stderr }

    /// The last lines of the output, for a one-paragraph reason.
    public var tail: String {
        (stdout + "\n" + stderr).split(separator: "\n").suffix(8).joined(separator: "\n")
    }
}

/// A child that did not finish in time (it was terminated).
public struct ProcessTimeout: Error, CustomStringConvertible {
    public let description: String
}

/// Runs `executable` with `arguments` and waits for it: the one way the test targets run a child to completion.
///
/// - Parameters:
///   - environment: Replaces this process's own (nil: inherit it).
///   - input: The child's standard input (empty: no terminal, so nothing can prompt).
///   - directory: The child's working directory (nil: this process's).
///   - mergingStandardError: Send standard error into the standard output pipe, so that
///     ``ProcessResult/stdout`` holds both, interleaved as written.
///   - timeout: Seconds after which the child is terminated and this throws ``ProcessTimeout`` (nil: none).
///
/// The child gets a TMPDIR of its own, removed once it has exited, unless `environment` names another TMPDIR
/// than this process's: the Swift driver (every `swift build` and `swiftc`) leaves a `TemporaryDirectory.XXXXXX`
/// folder in TMPDIR on every run, which would otherwise pile up in /tmp.
public func runProcess(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                       input: Data = Data(), in directory: String? = nil, mergingStandardError: Bool = false,
                       timeout: TimeInterval? = 600) throws -> ProcessResult {
    let inherited = ProcessInfo.processInfo.environment
    var childEnvironment = environment ?? inherited
    var scratch: TemporaryDirectory?
    if childEnvironment["TMPDIR"] == inherited["TMPDIR"] {
        let folder = try TemporaryDirectory(prefix: "child-tmp")
        childEnvironment["TMPDIR"] = folder.path
        scratch = folder
    }
    defer { withExtendedLifetime(scratch) {} }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = childEnvironment
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let stdout = Pipe(), stdin = Pipe()
    let stderr = mergingStandardError ? stdout : Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    process.standardInput = stdin
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    try process.run()
    // Both pipes drain on their own threads so that neither can fill up and block the child.
    let output = PipeCollector(stdout.fileHandleForReading)
    let errors = mergingStandardError ? nil : PipeCollector(stderr.fileHandleForReading)
    stdin.fileHandleForWriting.write(input)
    try stdin.fileHandleForWriting.close()
    if let timeout, exited.wait(timeout: .now() + timeout) == .timedOut {
        process.terminate()
        exited.wait()
        throw ProcessTimeout(description: "\(executable) \(arguments.first ?? "") did not finish within \(Int(timeout)) s")
    }
    if timeout == nil { exited.wait() }
    return ProcessResult(status: process.terminationStatus, stdout: String(decoding: output.wait(), as: UTF8.self),
                         stderr: String(decoding: errors?.wait() ?? Data(), as: UTF8.self))
}

/// Reads a pipe to its end on a background thread.
public final class PipeCollector: @unchecked Sendable {
    // Written once by the reading thread before `done` is signalled, read only after waiting on it.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    public init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    /// The whole of what was read, once the pipe has ended.
    public func wait() -> Data {
        done.wait()
        return data
    }
}
