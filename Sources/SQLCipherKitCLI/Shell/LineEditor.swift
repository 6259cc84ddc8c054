import SQLCipherKit

#if canImport(Glibc)
import Glibc
#endif

/// A small line editor for the shell on a terminal: no readline, no libedit, only the terminal in raw mode.
///
/// Keys: printable characters insert at the cursor; Backspace deletes before it, Delete (and Ctrl-D on a
/// non-empty line) at it; Left/Right (Ctrl-B/Ctrl-F) move; Home/End and Ctrl-A/Ctrl-E go to the start and
/// the end; Ctrl-U deletes from the start to the cursor, Ctrl-K from the cursor to the end; Up/Down (Ctrl-P/
/// Ctrl-N) walk the history; Enter ends the line; Ctrl-D on an empty line ends the input; Ctrl-C drops the
/// line. A line is redrawn in place on every change; one wider than the terminal wraps, which the redraw does
/// not follow (the line itself stays right).
final class LineEditor: LineSource {
    private let input: Int32
    /// Where the prompt and the line are drawn: the terminal (standard output, or standard error when standard
    /// output goes elsewhere).
    private let display: Int32
    private let history: ShellHistory

    private var characters: [Character] = []
    private var cursor = 0
    /// The position in the history being shown: `history.entries.count` is the line being typed.
    private var historyIndex = 0
    /// The line being typed, kept while Up shows older ones.
    private var draft: [Character] = []

    init(history: ShellHistory, input: Int32 = STDIN_FILENO) {
        self.input = input
        self.display = isatty(STDOUT_FILENO) == 1 ? STDOUT_FILENO : STDERR_FILENO
        self.history = history
    }

    func readLine(prompt: String) -> InputEvent {
        characters = []
        cursor = 0
        draft = []
        historyIndex = history.entries.count
        return RawTerminal.withRawMode {
            show(prompt)
            var utf8: [UInt8] = []
            while true {
                guard let byte = nextByte() else { return ended() }
                if byte >= 0x80 {
                    // A UTF-8 sequence: its first byte says how many follow.
                    if byte >= 0xC0 { utf8 = [byte] } else if !utf8.isEmpty { utf8.append(byte) }
                    let length = utf8.first.map { $0 >= 0xF0 ? 4 : $0 >= 0xE0 ? 3 : 2 } ?? 0
                    if !utf8.isEmpty && utf8.count == length {
                        insert(String(decoding: utf8, as: UTF8.self))
                        utf8 = []
                        redraw(prompt)
                    }
                    continue
                }
                utf8 = []
                switch byte {
                case 0x0D, 0x0A: // Enter
                    cursor = characters.count
                    redraw(prompt)
                    write("\n")
                    return .line(String(characters))
                case 0x03: // Ctrl-C
                    write("^C\n")
                    return .cancelled
                case 0x04: // Ctrl-D
                    if characters.isEmpty {
                        write("\n")
                        return .end
                    }
                    deleteAtCursor()
                case 0x7F, 0x08: // Backspace
                    if cursor > 0 {
                        characters.remove(at: cursor - 1)
                        cursor -= 1
                    }
                case 0x01: cursor = 0                               // Ctrl-A
                case 0x05: cursor = characters.count                // Ctrl-E
                case 0x02: cursor = max(cursor - 1, 0)              // Ctrl-B
                case 0x06: cursor = min(cursor + 1, characters.count) // Ctrl-F
                case 0x15:                                          // Ctrl-U
                    characters.removeSubrange(..<cursor)
                    cursor = 0
                case 0x0B: characters.removeSubrange(cursor...)     // Ctrl-K
                case 0x10: showHistory(-1)                           // Ctrl-P
                case 0x0E: showHistory(+1)                           // Ctrl-N
                case 0x1B:
                    guard let sequence = escapeSequence() else { return ended() }
                    handle(sequence)
                case 0x20...0x7E:
                    insert(String(UnicodeScalar(byte)))
                default:
                    continue // other control keys: ignored
                }
                redraw(prompt)
            }
        }
    }

    /// The end of reading for a signal or a closed terminal.
    private func ended() -> InputEvent {
        write("\n")
        if ShellSignals.endingSignal.load(ordering: .sequentiallyConsistent) != 0 { return .ended }
        // A SIGINT (from kill, not from the keyboard, which gives a byte in raw mode): drop the line.
        return lastReadWasSignal ? .cancelled : .end
    }

    private var lastReadWasSignal = false

    /// The next byte typed; nil when a signal came or the terminal closed (``lastReadWasSignal`` says which).
    private func nextByte(timeout: Int32 = -1) -> UInt8? {
        lastReadWasSignal = false
        while true {
            switch InputWait.wait(for: input, timeout: timeout) {
            case .signalled:
                ShellSignals.drainWakeups()
                lastReadWasSignal = true
                return nil
            case .timedOut:
                return nil
            case .readable:
                var byte: UInt8 = 0
                let count = read(input, &byte, 1)
                if count == 1 { return byte }
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                return nil
            }
        }
    }

    /// What follows ESC: "[A", "OH", "[3~" and so on; "" for a lone ESC. Nil when a signal came.
    private func escapeSequence() -> String? {
        // The rest of a key's sequence arrives at once; a lone ESC is followed by nothing within 50 ms.
        guard let first = nextByte(timeout: 50) else { return lastReadWasSignal ? nil : "" }
        guard first == UInt8(ascii: "[") || first == UInt8(ascii: "O") else { return "" }
        var sequence = String(UnicodeScalar(first))
        while sequence.count < 8, let byte = nextByte(timeout: 50) {
            sequence.append(Character(UnicodeScalar(byte)))
            if (0x40...0x7E).contains(byte) { break }
        }
        return lastReadWasSignal ? nil : sequence
    }

    private func handle(_ sequence: String) {
        switch sequence {
        case "[A", "OA": showHistory(-1)
        case "[B", "OB": showHistory(+1)
        case "[C", "OC": cursor = min(cursor + 1, characters.count)
        case "[D", "OD": cursor = max(cursor - 1, 0)
        case "[H", "OH", "[1~", "[7~": cursor = 0
        case "[F", "OF", "[4~", "[8~": cursor = characters.count
        case "[3~": deleteAtCursor()
        default: break
        }
    }

    private func insert(_ text: String) {
        for character in text {
            characters.insert(character, at: cursor)
            cursor += 1
        }
    }

    private func deleteAtCursor() {
        if cursor < characters.count { characters.remove(at: cursor) }
    }

    /// Shows the history entry `step` away from the one shown (-1: older), keeping the typed line as a draft.
    private func showHistory(_ step: Int) {
        let entries = history.entries
        let target = historyIndex + step
        guard target >= 0, target <= entries.count, target != historyIndex else { return }
        if historyIndex == entries.count { draft = characters }
        historyIndex = target
        characters = target == entries.count ? draft : Array(entries[target])
        cursor = characters.count
    }

    private func show(_ prompt: String) {
        write(prompt)
    }

    /// Redraws the line: back to the first column, the prompt, the line, clear to the end, the cursor moved
    /// back to its place.
    private func redraw(_ prompt: String) {
        var text = "\r" + prompt + String(characters) + "\u{1B}[K"
        let back = characters.count - cursor
        if back > 0 { text += "\u{1B}[\(back)D" }
        write(text)
    }

    /// Writes to the terminal, ignoring failures: the prompt and the line being edited are not the command's
    /// output (a terminal that went away ends the input on the next read instead).
    private func write(_ text: String) {
        StandardError.write(text, toDescriptor: display)
    }
}
