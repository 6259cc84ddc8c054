#if canImport(Glibc)
import Glibc
#endif

/// What reading one line of the shell's input gave.
enum InputEvent: Equatable {
    /// A line, without its line end.
    case line(String)
    /// Ctrl-C at the prompt (or a SIGINT while waiting for input): drop what was being typed.
    case cancelled
    /// The end of the input: Ctrl-D on an empty line, or the end of piped input.
    case end
    /// An ending signal (SIGTERM, SIGHUP, SIGQUIT) came while waiting for input.
    case ended
}

/// Where the shell's lines come from: the line editor on a terminal, plain lines otherwise.
protocol LineSource: AnyObject {
    /// Reads one line, showing `prompt` first where there is someone to show it to.
    func readLine(prompt: String) -> InputEvent
}

/// Waits until `descriptor` can be read or a signal came (``ShellSignals/wakeDescriptor``), within
/// `timeout` milliseconds (-1: no limit).
enum InputWait {
    enum Outcome { case readable, signalled, timedOut }

    static func wait(for descriptor: Int32, timeout: Int32 = -1) -> Outcome {
        var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: ShellSignals.wakeDescriptor, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&descriptors, nfds_t(ShellSignals.wakeDescriptor >= 0 ? 2 : 1), timeout)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { return .timedOut }
            if ready > 0 && descriptors[1].revents != 0 && ShellSignals.wakeDescriptor >= 0 { return .signalled }
            // Readable, or at its end, or in error: read() says which.
            return .readable
        }
    }
}

/// Lines from standard input when it is not a terminal (a pipe, a file): no prompt, no editing, no history.
final class PlainLineSource: LineSource {
    private let descriptor: Int32
    private var buffered: [UInt8] = []
    private var atEnd = false

    init(descriptor: Int32 = STDIN_FILENO) {
        self.descriptor = descriptor
    }

    func readLine(prompt: String) -> InputEvent {
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                var line = Array(buffered[..<newline])
                buffered.removeSubrange(...newline)
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return .line(String(decoding: line, as: UTF8.self))
            }
            if atEnd {
                guard !buffered.isEmpty else { return .end }
                defer { buffered.removeAll() }
                return .line(String(decoding: buffered, as: UTF8.self))
            }
            switch InputWait.wait(for: descriptor) {
            case .signalled:
                return ShellSignals.endingSignal.load(ordering: .sequentiallyConsistent) != 0 ? .ended : .cancelled
            case .timedOut, .readable:
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = read(descriptor, &chunk, chunk.count)
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                if count <= 0 {
                    atEnd = true
                } else {
                    buffered.append(contentsOf: chunk[..<count])
                }
            }
        }
    }
}
