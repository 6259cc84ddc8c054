import Foundation
import SQLCipherKit
import Testing

/// A running `ReliabilityHelper` child (Tests/ReliabilityHelper): its standard output read line by line as
/// it arrives, its standard input open for "go on" lines, and SIGKILL at any moment.
///
/// Every line the child wrote, and its standard error, are checked for the secrets it was given: a key must
/// never appear in any output.
///
/// `@unchecked Sendable`: `lines`, `nextLine` and `outputEnded` are only touched under `condition`; `errorData`
/// is written once by its reading thread before `errorDone` is signalled and read only after waiting on it.
final class HelperProcess: @unchecked Sendable {
    /// SwiftPM builds the helper next to the test bundle (the test target depends on it).
    static let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("ReliabilityHelper").path

    private let process = Process()
    private let input = Pipe()
    private let condition = NSCondition()
    private var lines: [String] = []
    private var nextLine = 0
    private var outputEnded = false
    private var errorData = Data()
    private let errorDone = DispatchSemaphore(value: 0)
    private let secrets: [String]

    /// Starts the helper with `arguments`; `environment` is added to this process's own. Values of variables
    /// whose name ends in `KEY_HEX` are secrets that no output may contain.
    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        secrets = environment.filter { $0.key.hasSuffix("KEY_HEX") }.map(\.value)
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = input
        try process.run()
        let outputHandle = output.fileHandleForReading, errorHandle = error.fileHandleForReading
        Thread.detachNewThread { [self] in readLines(from: outputHandle) }
        Thread.detachNewThread { [self] in
            errorData = errorHandle.readDataToEndOfFile()
            errorDone.signal()
        }
    }

    var processIdentifier: Int32 { process.processIdentifier }

    /// The next line of output, waiting up to `timeout`; nil once the output has ended (or on timeout).
    func readLine(timeout: TimeInterval = 60) -> String? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while nextLine == lines.count && !outputEnded {
            guard condition.wait(until: deadline) else { return nil }
        }
        guard nextLine < lines.count else { return nil }
        nextLine += 1
        return lines[nextLine - 1]
    }

    /// Reads lines until one starts with `prefix`; returns it, or nil when the output ends first.
    func readLine(startingWith prefix: String, timeout: TimeInterval = 60) -> String? {
        while let line = readLine(timeout: timeout) {
            if line.hasPrefix(prefix) { return line }
        }
        return nil
    }

    /// Sends one line to the child's standard input.
    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Kills the child with SIGKILL and waits for it; returns every line it wrote that was not read yet.
    @discardableResult
    func kill() -> [String] {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
        return finish()
    }

    /// Waits for the child to exit; returns every line it wrote that was not read yet.
    @discardableResult
    func finish() -> [String] {
        process.waitUntilExit()
        errorDone.wait()
        condition.lock()
        while !outputEnded { condition.wait() }
        let unread = Array(lines[nextLine...])
        nextLine = lines.count
        let everything = lines.joined(separator: "\n") + standardError
        condition.unlock()
        for secret in secrets {
            #expect(!everything.localizedCaseInsensitiveContains(secret), "a key appeared in the helper's output")
        }
        return unread
    }

    /// Every line the child writes until its output ends, waiting up to `timeout` for each; a child that stays
    /// silent longer is killed (SIGKILL) and its lines so far returned.
    func readAll(timeout: TimeInterval = 120) -> [String] {
        var all: [String] = []
        while let line = readLine(timeout: timeout) { all.append(line) }
        return process.isRunning ? all + kill() : all + finish()
    }

    /// Whether the child ended by SIGKILL (after ``finish()``).
    var wasKilled: Bool { process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL }

    /// The exit status (after ``finish()``).
    var exitStatus: Int32 { process.terminationStatus }

    /// Everything the child wrote to standard error (after ``finish()``).
    var standardError: String { String(decoding: errorData, as: UTF8.self) }

    private func readLines(from handle: FileHandle) {
        var pending = Data()
        while true {
            let chunk = handle.availableData
            condition.lock()
            if chunk.isEmpty {
                if !pending.isEmpty { lines.append(String(decoding: pending, as: UTF8.self)) }
                outputEnded = true
                condition.broadcast()
                condition.unlock()
                return
            }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                pending.removeSubrange(pending.startIndex...newline)
            }
            condition.broadcast()
            condition.unlock()
        }
    }
}

/// A random 32-byte key as 64 hex digits.
func randomKeyHex() -> String {
    Hex.string((0..<32).map { _ in UInt8.random(in: 0...255) })
}
