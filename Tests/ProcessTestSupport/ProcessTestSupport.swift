import Foundation

// What the test targets that spawn processes share (CLITests, InteropTests): running a child to completion
// with both pipes drained, and a temporary folder. A library target, not a test target: test targets cannot
// import each other.

/// What a child process did.
public struct ProcessResult: CustomStringConvertible, Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }

    public var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }

    /// The last lines of the output, for a one-paragraph reason.
    public var tail: String {
        (stdout + "\n" + stderr).split(separator: "\n").suffix(8).joined(separator: "\n")
    }
}

/// A child that did not finish in time (it was terminated).
public struct ProcessTimeout: Error, CustomStringConvertible {
    public let description: String
}

/// Runs `executable` with `arguments`, `input` on its standard input (empty: no terminal, so nothing can
/// prompt), and waits, terminating it after `timeout` seconds. `environment` replaces this process's own.
public func runProcess(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                       input: Data = Data(), timeout: TimeInterval = 600) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let stdout = Pipe(), stderr = Pipe(), stdin = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    process.standardInput = stdin
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    try process.run()
    // Both pipes drain on their own threads so that neither can fill up and block the child.
    let output = PipeCollector(stdout.fileHandleForReading)
    let errors = PipeCollector(stderr.fileHandleForReading)
    stdin.fileHandleForWriting.write(input)
    try stdin.fileHandleForWriting.close()
    if exited.wait(timeout: .now() + timeout) == .timedOut {
        process.terminate()
        exited.wait()
        throw ProcessTimeout(description: "\(executable) \(arguments.first ?? "") did not finish within \(Int(timeout)) s")
    }
    return ProcessResult(status: process.terminationStatus, stdout: String(decoding: output.wait(), as: UTF8.self),
                         stderr: String(decoding: errors.wait(), as: UTF8.self))
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

/// A fresh folder under the system temporary directory, removed when released.
public final class TemporaryDirectory {
    public let path: String

    public init(prefix: String = "Tests") throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The path of `name` inside the folder.
    public func file(_ name: String) -> String { path + "/" + name }

    /// The names of the files in the folder, sorted.
    public func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }
}

/// The path of the `sqlcipherkit` executable SwiftPM builds next to the test bundle (for targets that depend on
/// SQLCipherKitCLI).
public let builtCLIExecutable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    .appendingPathComponent("sqlcipherkit").path
