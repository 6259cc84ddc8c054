import Foundation
import Synchronization
import SQLCipherKit

#if canImport(Glibc)
import Glibc
#endif

/// A progress bar on standard error when it is a terminal; silent otherwise (logs and pipes stay clean).
final class ProgressBar: Sendable {
    private let label: String
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private let lastPercent = Mutex(-1)

    init(_ label: String) {
        self.label = label
    }

    /// Shows `fraction` (0...1) of the work done.
    func update(_ fraction: Double) {
        guard isTerminal else { return }
        let percent = Int((fraction * 100).rounded(.down))
        let changed = lastPercent.withLock { last in
            defer { last = percent }
            return last != percent
        }
        guard changed else { return }
        let width = 30
        let filled = width * percent / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        StandardError.write("\r\(label) [\(bar)] \(percent)%")
    }

    /// Runs `body`, showing an indeterminate spinner with the elapsed time while it works (for steps that
    /// report no fraction, such as a rekey).
    func spinning<Result>(_ body: () throws -> Result) rethrows -> Result {
        guard isTerminal else { return try body() }
        let running = RunningFlag()
        let label = self.label
        let spinner = Thread {
            let frames = ["|", "/", "-", "\\"]
            var tick = 0
            let start = Date()
            while running.isRunning {
                let seconds = Int(Date().timeIntervalSince(start))
                StandardError.write("\r\(label) \(frames[tick % frames.count]) \(seconds)s")
                tick += 1
                usleep(100_000)
            }
        }
        spinner.start()
        defer {
            running.stop()
            usleep(120_000)
        }
        return try body()
    }

    /// Ends the bar's line.
    func finish() {
        guard isTerminal else { return }
        StandardError.write("\r\(label) done\(String(repeating: " ", count: 40))\n")
    }
}

/// Tells the spinner thread when to stop.
private final class RunningFlag: Sendable {
    private let running = Mutex(true)
    var isRunning: Bool { running.withLock { $0 } }
    func stop() { running.withLock { $0 = false } }
}
