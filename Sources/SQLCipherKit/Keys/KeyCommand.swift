import Glibc

/// One run of a key command (``Key/fromCommand(_:arguments:format:timeout:environment:)``): spawned with
/// `posix_spawnp`, its standard output a pipe read into a wiped buffer, waited for within a deadline, killed past it.
struct KeyCommand {
    let executable: String
    let arguments: [String]
    let timeout: Duration
    /// The command's environment; nil: this process's.
    var environment: [String: String]? = nil

    /// The signals held while the command runs (``run(format:)``): one that arrives kills the command's group first.
    static let endingSignals = [SIGINT, SIGTERM, SIGHUP]

    /// How the command is named in messages (its arguments are no secret: a key never belongs there).
    var name: String { ([executable] + arguments).joined(separator: " ") }

    func run(format: KeyFileFormat) throws(KeySourceError) -> Key {
        let what = "the output of the key command `\(name)`"
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw failure(.commandFailed, "cannot create a pipe for the key command `\(name)`: \(KeyReading.errnoText())")
        }
        // Neither end may outlive the command in another child (Glibc's module has no pipe2 to set this atomically).
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let output = ends[0]
        defer { close(output) }
        let pid: pid_t
        // Without a terminal the command gets a process group of its own, so that a timeout kills whatever it
        // started too (`sh -c 'sleep 60'`: an orphaned sleep would hold this process's standard error open). On a
        // terminal it stays in the foreground group, where it may prompt (a background group reading the
        // terminal would be stopped), and Ctrl-C reaches it.
        let ownGroup = isatty(STDIN_FILENO) == 0
        do throws(KeySourceError) {
            pid = try spawn(writingTo: ends[1], ownGroup: ownGroup)
        } catch {
            close(ends[1])
            throw error
        }
        close(ends[1])
        let deadline = Self.now() + max(0, timeout.milliseconds)
        // A signal that would end this process must not leave the command running (in its own group, nothing else
        // would end it): hold them while it runs, kill it when one is pending, then let the signal through.
        var held = sigset_t(), previous = sigset_t()
        sigemptyset(&held)
        for number in Self.endingSignals { sigaddset(&held, number) }
        pthread_sigmask(SIG_BLOCK, &held, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        func endingSignalPending() -> Bool {
            var pending = sigset_t()
            sigpending(&pending)
            return Self.endingSignals.contains { sigismember(&pending, $0) == 1 }
        }

        return try KeyReading.withWipedBuffer { (buffer) throws(KeySourceError) in
            var count = 0
            var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            while true {
                let remaining = deadline - Self.now()
                guard remaining > 0 else { throw timedOut(pid, group: ownGroup) }
                if endingSignalPending() { throw interrupted(pid, group: ownGroup) }
                let ready = poll(&descriptor, 1, Int32(clamping: min(remaining, 50)))
                if ready < 0 && errno == EINTR { continue }
                if ready == 0 { continue }
                let got = read(output, buffer.baseAddress! + count, buffer.count - count)
                if got < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                guard got >= 0 else {
                    Self.killAndReap(pid, group: ownGroup)
                    throw failure(.commandFailed, "cannot read \(what): \(KeyReading.errnoText())")
                }
                if got == 0 { break }
                count += got
                guard count <= KeyReading.limit else {
                    Self.killAndReap(pid, group: ownGroup)
                    throw failure(.tooLarge, "\(what) is longer than \(KeyReading.limit) bytes, more than any key: "
                        + "the command must print the key only (it was killed)")
                }
            }
            // The output has ended; the command must exit, with status 0, before the deadline too.
            var status: Int32 = 0
            while true {
                let reaped = waitpid(pid, &status, WNOHANG)
                if reaped == pid { break }
                if reaped < 0 && errno != EINTR {
                    throw failure(.commandFailed, "cannot wait for the key command `\(name)`: \(KeyReading.errnoText())")
                }
                guard Self.now() < deadline else { throw timedOut(pid, group: ownGroup) }
                if endingSignalPending() { throw interrupted(pid, group: ownGroup) }
                usleep(2_000)
            }
            let signal = status & 0x7f
            guard signal == 0 else {
                throw failure(.commandFailed, "the key command `\(name)` was killed by signal \(signal); its output "
                    + "was discarded")
            }
            let exitStatus = (status >> 8) & 0xff
            guard exitStatus == 0 else {
                throw failure(.commandFailed, "the key command `\(name)` exited with status \(exitStatus) (its own "
                    + "messages are on standard error above); its output was discarded: run it by hand to see "
                    + "what it needs")
            }
            return try KeyReading.key(from: UnsafeRawBufferPointer(rebasing: buffer[0..<count]), format: format,
                                      source: name, what: what)
        }
    }

    /// Starts the command with `writeEnd` as its standard output; standard input and error are this process's.
    private func spawn(writingTo writeEnd: Int32, ownGroup: Bool) throws(KeySourceError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, writeEnd, STDOUT_FILENO)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The command starts with default signal handling and no blocked signals, whatever this process set up
        // (a tool that ignores SIGINT or SIGPIPE would otherwise pass that on).
        var defaults = sigset_t(), empty = sigset_t()
        sigemptyset(&defaults)
        sigemptyset(&empty)
        for number in [SIGINT, SIGTERM, SIGQUIT, SIGPIPE, SIGHUP] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        if ownGroup { posix_spawnattr_setpgroup(&attributes, 0) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
            | (ownGroup ? POSIX_SPAWN_SETPGROUP : 0)))

        let argv = ([executable] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } }
        defer { envp?.forEach { free($0) } }
        var pid: pid_t = 0
        let code = (argv + [nil]).withUnsafeBufferPointer { pointers in
            guard let envp else {
                return posix_spawnp(&pid, executable, &actions, &attributes,
                                    UnsafeMutablePointer(mutating: pointers.baseAddress!), environ)
            }
            return (envp + [nil]).withUnsafeBufferPointer { variables in
                posix_spawnp(&pid, executable, &actions, &attributes,
                             UnsafeMutablePointer(mutating: pointers.baseAddress!),
                             UnsafeMutablePointer(mutating: variables.baseAddress!))
            }
        }
        guard code == 0 else {
            throw failure(.commandFailed, "cannot start the key command `\(name)`: \(KeyReading.errnoText(code)); "
                + "check the program's name or path")
        }
        return pid
    }

    private func timedOut(_ pid: pid_t, group: Bool) -> KeySourceError {
        Self.killAndReap(pid, group: group)
        return failure(.commandTimedOut, "the key command `\(name)` did not finish within \(timeout.milliseconds) ms "
            + "and was killed; its output was discarded: check that it does not wait for input, or allow it more time")
    }

    private func interrupted(_ pid: pid_t, group: Bool) -> KeySourceError {
        Self.killAndReap(pid, group: group)
        return failure(.commandFailed, "the key command `\(name)` was stopped: this process was asked to end while it ran")
    }

    private func failure(_ kind: KeySourceError.Kind, _ message: String) -> KeySourceError {
        KeySourceError(kind: kind, source: name, message: message)
    }

    /// Kills the command (and its process group, when it has its own) and waits for it.
    private static func killAndReap(_ pid: pid_t, group: Bool) {
        kill(group ? -pid : pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    /// Milliseconds on the monotonic clock.
    private static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}
