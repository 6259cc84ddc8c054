import Foundation

/// Runs the built `sqlcipherkit` executable (SwiftPM builds it next to the test bundle).
enum CLI {
    static let executable: String = {
        let folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return folder.appendingPathComponent("sqlcipherkit").path
    }()

    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct Result: CustomStringConvertible {
        let status: Int32
        let stdout: String
        let stderr: String
        var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
    }

    /// Runs the CLI with `arguments`, extra `environment` and `input` on standard input (empty by default: no
    /// terminal, so the CLI can never prompt).
    static func run(_ arguments: [String], environment: [String: String] = [:], input: Data = Data()) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let stdout = Pipe(), stderr = Pipe(), stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        // Drain stderr on another thread so neither pipe can fill up and block the child.
        let errorData = ErrorCollector(stderr.fileHandleForReading)
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: output, as: UTF8.self),
                      stderr: String(decoding: errorData.wait(), as: UTF8.self))
    }
}

/// Reads a pipe to its end on a background thread.
final class ErrorCollector: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}

/// A fresh folder under the system temporary directory, removed when released.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("CLITests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }
}

func contents(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
}
