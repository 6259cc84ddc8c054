import Foundation
import SQLCipherKit

#if canImport(Glibc)
import Glibc
#endif

/// Asks for a secret on the controlling terminal, without echo.
enum Prompt {
    /// The bytes typed, with the newline that ended them (the key's line-end rule drops it, as for every source),
    /// or nil when standard input is not a terminal.
    static func readSecret(_ prompt: String) throws -> [UInt8]? {
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        StandardError.write(prompt)
        var original = termios()
        tcgetattr(STDIN_FILENO, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSANOW, &original)
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
