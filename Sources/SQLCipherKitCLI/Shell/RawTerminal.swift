import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The terminal on standard input in raw mode, for the line editor, and the way back to its own settings.
///
/// Raw mode lasts while one line is read (``withRawMode(_:)``): a statement runs with the terminal's own
/// settings, so Ctrl-C is the terminal's SIGINT there (it cancels the statement), while at the prompt it is a
/// byte the editor reads (it discards the line). The settings are put back however reading ends: a return,
/// a throw, or a signal (``ShellSignals`` calls ``restoreAfterSignal()`` before it ends the process).
enum RawTerminal {
    /// The terminal's settings before raw mode, for ``restoreAfterSignal()``. Written by the main thread before
    /// ``isRaw`` is set (release), read by the signal thread only after it reads ``isRaw`` as true (acquire).
    private nonisolated(unsafe) static var saved = termios()
    /// Whether raw mode is on (and ``saved`` holds the settings to put back).
    private static let isRaw = Atomic<Bool>(false)

    /// Runs `body` with standard input's terminal in raw mode (no echo, no line buffering, no signal keys, no
    /// flow control; output processing kept, so "\n" still starts a new line), then puts the settings back.
    /// Without a terminal, or when its settings cannot be read, `body` runs as it is.
    static func withRawMode<R>(_ body: () throws -> R) rethrows -> R {
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else { return try body() }
        saved = original
        var raw = original
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | INLCR | IGNCR | ISTRIP)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        isRaw.store(true, ordering: .releasing)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        defer {
            tcsetattr(STDIN_FILENO, TCSANOW, &original)
            isRaw.store(false, ordering: .releasing)
        }
        return try body()
    }

    /// Puts the terminal's own settings back if raw mode is on: for the signal thread, before it ends the
    /// process while the main thread is still reading a line (`tcsetattr` is safe from any thread).
    static func restoreAfterSignal() {
        guard isRaw.load(ordering: .acquiring) else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    }
}
