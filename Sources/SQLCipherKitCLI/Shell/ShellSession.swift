import Foundation
import SQLCipherKit

#if canImport(Glibc)
import Glibc
#endif

/// One shell session on an open database: reads lines, gathers them into statements, runs them and the dot
/// commands, prints the rows.
///
/// SQL goes to the library as typed, through the same SQL guard as every connection: a refused statement
/// (a key pragma, `ATTACH … KEY`, a cipher setting) prints the library's message and the session goes on.
final class ShellSession {
    /// How a session, or a part of it (a `.read` file), ended.
    enum Ending: Equatable {
        /// The input ended (Ctrl-D, the end of piped input or of a `.read` file).
        case endOfInput
        /// `.quit` or `.exit`.
        case quit
        /// An ending signal (SIGTERM, SIGHUP, SIGQUIT) came.
        case signal(Int32)
        /// Piped input was interrupted (SIGINT), or `--bail` stopped at an error.
        case stopped
    }

    let database: Database
    let path: String
    let key: Key
    let cipher: CipherSettings
    let history: ShellHistory
    /// Whether a person types at a terminal (prompts, line editing, history) rather than a script feeding
    /// standard input.
    let isInteractive: Bool
    /// Stop at the first error (`--bail`).
    let bail: Bool

    /// `.mode`.
    var format: RowFormat = .table
    /// `.headers`.
    var headers = true
    /// `.timer`.
    var timer = false
    /// Where rows go: standard output, or the file `.output` named.
    var output = OutputWriter.standardOutput
    /// How many statements or commands failed: piped input with any failure exits 1.
    private(set) var failures = 0
    /// Whether the last failure was Ctrl-C (SIGINT): piped input stops there, a person goes on.
    private(set) var lastFailureWasInterruption = false
    /// How deep `.read` files are nested (a file that reads itself stops at ``maximumReadDepth``).
    var readDepth = 0
    static let maximumReadDepth = 16

    static let prompt = "sqlcipherkit> "
    static let continuationPrompt = "   ...> "

    init(database: Database, path: String, key: Key, cipher: CipherSettings, history: ShellHistory,
         isInteractive: Bool, bail: Bool) {
        self.database = database
        self.path = path
        self.key = key
        self.cipher = cipher
        self.history = history
        self.isInteractive = isInteractive
        self.bail = bail
    }

    /// Runs lines from `source` until it ends, `.quit`, a signal, or (`--bail`) an error.
    ///
    /// - Parameters:
    ///   - recording: Whether typed lines go into the history (lines from a `.read` file do not).
    ///   - script: Whether the lines are a script (piped input, a `.read` file), which Ctrl-C stops, rather
    ///     than typed ones, where Ctrl-C cancels only the statement.
    func run(_ source: LineSource, recording: Bool, script: Bool) -> Ending {
        var pending: [String] = []
        let interrupts = ShellSignals.interrupts.load(ordering: .sequentiallyConsistent)
        while true {
            if let signal = endingSignal { return .signal(signal) }
            // A script stops at Ctrl-C, also one that came between two of its statements.
            if script && ShellSignals.interrupts.load(ordering: .sequentiallyConsistent) != interrupts {
                if !lastFailureWasInterruption { fail(Interrupted()) }
                return .stopped
            }
            ShellSignals.drainWakeups()
            let event = source.readLine(prompt: pending.isEmpty ? Self.prompt : Self.continuationPrompt)
            switch event {
            case .line(let line):
                if let ending = take(line, pending: &pending, recording: recording, script: script) {
                    return ending
                }
            case .cancelled:
                pending = []
                if script { return .stopped }
            case .ended:
                return .signal(endingSignal ?? SIGTERM)
            case .end:
                // Piped SQL may end without a last ';': run what is left, as SQLite reads a script.
                let rest = pending.joined(separator: "\n")
                if !SQLCompleteness.isBlank(rest) {
                    if recording { record(pending) }
                    if !execute(rest) && bail { return .stopped }
                }
                return .endOfInput
            }
        }
    }

    /// Adds `line` to the statement being gathered and runs it once it is complete; runs a dot command at the
    /// start of a statement. Returns how the session ends, or nil to go on.
    private func take(_ line: String, pending: inout [String], recording: Bool, script: Bool) -> Ending? {
        let stops = { self.bail || (script && self.lastFailureWasInterruption) }
        if pending.isEmpty {
            if SQLCompleteness.isBlank(line) { return nil }
            if line.drop(while: \.isWhitespace).first == "." {
                if recording { record([line]) }
                let result = runDotCommand(line)
                if case .failed = result, stops() { return .stopped }
                if case .end(let ending) = result { return ending }
                return nil
            }
        }
        pending.append(line)
        let sql = pending.joined(separator: "\n")
        guard SQLCompleteness.isComplete(sql) else { return nil }
        if recording { record(pending) }
        pending = []
        if !execute(sql) && stops() { return .stopped }
        if let signal = endingSignal { return .signal(signal) }
        return nil
    }

    /// Records the lines of one statement, or none of them when the statement as a whole may not be kept.
    private func record(_ lines: [String]) {
        guard history.allows(lines.joined(separator: "\n")) else { return }
        for line in lines { history.add(line) }
    }

    /// The ending signal received, if any.
    var endingSignal: Int32? {
        let signal = ShellSignals.endingSignal.load(ordering: .sequentiallyConsistent)
        return signal == 0 ? nil : signal
    }

    /// A statement stopped by Ctrl-C between two of its parts.
    private struct Interrupted: Error {}

    /// Runs the statements of `sql`, printing each one's rows. Returns whether all of them ran.
    @discardableResult
    func execute(_ sql: String) -> Bool {
        let started = ContinuousClock.now
        let usage = Self.processTimes()
        let interrupts = ShellSignals.interrupts.load(ordering: .sequentiallyConsistent)
        func stopIfInterrupted() throws {
            if ShellSignals.interrupts.load(ordering: .sequentiallyConsistent) != interrupts
                || endingSignal != nil { throw Interrupted() }
        }
        defer { if timer { reportTime(since: started, usage: usage) } }
        do {
            try database.forEachStatement(in: sql) { statement, cursor in
                try stopIfInterrupted()
                guard statement.columnCount > 0 else {
                    while try cursor.next() != nil {}
                    return
                }
                try RowPrinter(format: format, columns: statement.columnNames, headers: headers, output: output)
                    .print(cursor)
            }
            try stopIfInterrupted()
            return true
        } catch {
            fail(error)
            return false
        }
    }

    /// Reports `error` on standard error ("interrupted" for a cancelled statement) and counts it.
    func fail(_ error: any Error) {
        failures += 1
        lastFailureWasInterruption = error is Interrupted || (error as? SQLCipherError)?.kind == .interrupted
        let message: String
        switch error {
        case is Interrupted: message = "interrupted"
        case let error as SQLCipherError where error.kind == .interrupted: message = "interrupted"
        case let error as SQLCipherError: message = "error: \(error.description)"
        case let error as CommandFailure: message = "error: \(error.message)"
        default: message = "error: \(error)"
        }
        // Rows printed before the error come first.
        try? output.flush()
        StandardError.write(message + "\n")
    }

    /// Reports a problem of the shell's own (a dot command's usage) and counts it.
    func fail(_ message: String) {
        fail(CommandFailure(message: message, status: .usage))
    }

    /// `.timer on`: the statement's wall-clock time and the process's user and system time.
    private func reportTime(since started: ContinuousClock.Instant, usage: (user: Double, system: Double)) {
        let elapsed = ContinuousClock.now - started
        let real = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let now = Self.processTimes()
        let text = String(format: "Run Time: real %.3f user %.6f sys %.6f", real, now.user - usage.user,
                          now.system - usage.system)
        do {
            try output.line(text)
            try output.flush()
        } catch {
            fail(error)
        }
    }

    private static func processTimes() -> (user: Double, system: Double) {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return (seconds(usage.ru_utime), seconds(usage.ru_stime))
    }

    /// Writes what `.output` buffered and closes its file.
    func finish() {
        do {
            try output.close()
        } catch {
            fail(error)
        }
    }
}
