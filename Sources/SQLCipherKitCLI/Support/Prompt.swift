import Foundation
import SQLCipherKit

#if canImport(Glibc)
import Glibc
#endif

/// Asks for a secret on the controlling terminal, without echo.
enum Prompt {
    /// The terminal's settings while echo is off, for the signal handler that puts them back. Written before the
    /// handlers are installed and read only by them (`tcsetattr` is async-signal-safe).
    private nonisolated(unsafe) static var saved = termios()

    /// The signals that end the process at the prompt: each puts the terminal back before it takes its course.
    private static let endingSignals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// The bytes typed, with the newline that ended them (the key's line-end rule drops it, as for every source),
    /// or nil when standard input is not a terminal. Echo is restored however the prompt ends: return, throw, or
    /// a signal that ends the process (Ctrl-C, SIGTERM, SIGHUP, Ctrl-\).
    static func readSecret(_ prompt: String) throws -> [UInt8]? {
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        StandardError.write(prompt)
        var original = termios()
        tcgetattr(STDIN_FILENO, &original)
        saved = original
        var previous: [Int32: sigaction] = [:]
        for number in endingSignals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                tcsetattr(STDIN_FILENO, TCSANOW, &Prompt.saved)
                signal(number, SIG_DFL)
                raise(number)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = Int32(truncatingIfNeeded: SA_RESETHAND)
            var old = sigaction()
            sigaction(number, &action, &old)
            previous[number] = old
        }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSANOW, &original)
            for (number, action) in previous {
                var action = action
                sigaction(number, &action, nil)
            }
            StandardError.write("\n")
        }
        // Room for any passphrase up front: growing the array would leave unwiped copies behind.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4096)
        var byte: UInt8 = 0
        while bytes.count < 4095, read(STDIN_FILENO, &byte, 1) == 1 {
            bytes.append(byte)
            if byte == UInt8(ascii: "\n") { break }
        }
        withUnsafeMutableBytes(of: &byte) { KeyMemory.wipe($0) }
        return bytes
    }
}
