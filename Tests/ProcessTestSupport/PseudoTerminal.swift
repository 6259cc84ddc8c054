import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process whose standard input, output and error are a new pseudo-terminal, which is also its
/// controlling terminal (it leads a session of its own): the keyboard's Ctrl-C reaches it as SIGINT, as it would
/// at a real terminal. The test types with ``send(_:)`` and reads what the terminal shows with
/// ``waitFor(_:timeout:)``; every wait is bounded, so a hang fails the test instead of blocking it.
///
/// Synchronous (no task, no thread): call it from a synchronous test.
public final class PseudoTerminalProcess {
    /// The child's process id.
    public let pid: pid_t
    private let master: Int32
    /// The terminal's other side, kept open here so that its settings can still be read after the child exited.
    private let slave: Int32
    /// Everything the terminal showed so far.
    public private(set) var output: [UInt8] = []
    /// Where ``waitFor(_:timeout:)`` starts looking: moved past each match, and to the end by ``send(_:)``.
    public private(set) var mark = 0
    private var exitStatus: Int32?

    /// Starts `executable` with `arguments` and `environment` (the whole environment, not added to this
    /// process's own) on a new pseudo-terminal.
    public init(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
        // posix_openpt, unlockpt and ptsname by hand: Swift's Glibc module leaves the XSI functions out. Linux's
        // ioctl numbers (asm-generic/ioctls.h): TIOCSPTLCK unlocks the terminal, TIOCGPTN gives its number.
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlock: CInt = 0
        var number: CUnsignedInt = 0
        guard master >= 0, ioctl(master, UInt(0x4004_5431), &unlock) == 0,
              ioctl(master, UInt(0x8004_5430), &number) == 0 else {
            let reason = String(cString: strerror(errno))
            if master >= 0 { close(master) }
            throw PseudoTerminalError(description: "no pseudo-terminal: \(reason)")
        }
        let slavePath = "/dev/pts/\(number)"
        let slave = open(slavePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else {
            close(master)
            throw PseudoTerminalError(description: "cannot open \(slavePath): \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // After setsid (the spawn does it first), opening the terminal makes it the controlling terminal.
        posix_spawn_file_actions_addopen(&actions, 0, slavePath, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // No signal blocked or ignored (the test runner's own mask is not the child's business).
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        // POSIX_SPAWN_SETSID (glibc's spawn.h: 0x80), which the Glibc module does not export.
        let setsid: Int32 = 0x80
        posix_spawnattr_setflags(&attributes, Int16(setsid | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            close(master)
            close(slave)
            throw PseudoTerminalError(description: "cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        self.pid = child
        self.master = master
        self.slave = slave
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        close(master)
        close(slave)
    }

    /// Types `text` (its UTF-8 bytes, control characters included: "\r" is Enter, "\u{03}" Ctrl-C), and moves
    /// ``mark`` to the end of what was shown so far: a later wait sees only what comes after.
    public func send(_ text: String) {
        drain(timeout: 0)
        mark = output.count
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(master, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Waits until the terminal shows `text` after ``mark``, within `timeout` seconds; true when it did, and
    /// ``mark`` then moves past it.
    @discardableResult
    public func waitFor(_ text: String, timeout: Double = 15) -> Bool {
        let needle = Array(text.utf8)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let range = find(needle) {
                mark = range
                return true
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            drain(timeout: min(left, 0.1))
        }
    }

    /// What the terminal showed after ``mark``, as text (escape sequences and all), for failure messages.
    public var recent: String { String(decoding: output[min(mark, output.count)...], as: UTF8.self) }

    /// Everything the terminal showed, as text.
    public var transcript: String { String(decoding: output, as: UTF8.self) }

    /// Waits up to `timeout` seconds for the child to exit; its exit status, or nil when it did not exit (it
    /// is then killed) or was killed by a signal (-signal).
    public func waitForExit(timeout: Double = 15) -> Int32? {
        if let exitStatus { return exitStatus }
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            drain(timeout: 0.05)
            guard deadline.timeIntervalSinceNow > 0 else {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                exitStatus = -SIGKILL
                return nil
            }
        }
        drain(timeout: 0)
        let signal = status & 0x7f
        exitStatus = signal == 0 ? (status >> 8) & 0xff : -signal
        return exitStatus
    }

    /// The terminal's settings now (the child may have changed them).
    public func attributes() -> termios {
        var settings = termios()
        tcgetattr(slave, &settings)
        return settings
    }

    private func find(_ needle: [UInt8]) -> Int? {
        guard !needle.isEmpty, output.count - mark >= needle.count else { return nil }
        for start in mark...(output.count - needle.count) where output[start] == needle[0] {
            if output[start..<(start + needle.count)].elementsEqual(needle) { return start + needle.count }
        }
        return nil
    }

    /// Reads whatever the terminal has to show, waiting up to `timeout` seconds for the first of it.
    private func drain(timeout: Double) {
        var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        var wait = Int32(timeout * 1000)
        while poll(&descriptor, 1, wait) > 0 {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(master, &chunk, chunk.count)
            guard count > 0 else { return }
            output.append(contentsOf: chunk[..<count])
            wait = 0
        }
    }
}

/// A pseudo-terminal could not be set up.
public struct PseudoTerminalError: Error, CustomStringConvertible {
    public let description: String
}
