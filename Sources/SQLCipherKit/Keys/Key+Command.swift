extension Key {
    /// Runs a program that prints the key on its standard output, and reads the key from that output: the
    /// pattern of PostgreSQL's `ssl_passphrase_command` and SOPS, for keys kept in a password manager, a
    /// hardware token or a secrets manager's client (`pass show db-key`, `systemd-ask-password`, `vault kv get …`).
    ///
    /// ```swift
    /// let key = try Key.fromCommand("pass", arguments: ["show", "app/db-key"], format: .passphrase)
    /// ```
    ///
    /// The program is found on `PATH` unless `executable` is a path; it inherits this process's environment,
    /// standard input and standard error (its messages and prompts reach the user), and is run without a shell
    /// (pass `"/bin/sh", arguments: ["-c", text]` for one). Its output is read into memory that is wiped
    /// afterwards, and used only if it exits with status 0 within `timeout`; otherwise it is killed (`SIGKILL`)
    /// and the output is wiped unused. Without a terminal on standard input (a service, a script), the program
    /// runs in a process group of its own, and a timeout kills the whole group (a shell's children too); on a
    /// terminal it stays in the foreground, where it may prompt. Never put the key itself in `arguments`: other users can read a
    /// process's arguments. While it runs, SIGINT, SIGTERM and SIGHUP sent to this thread's process are held: if one
    /// arrives, the command (its whole group) is killed first, then the signal takes its course.
    ///
    /// - Parameters:
    ///   - executable: The program, a name looked up on `PATH` or a path.
    ///   - arguments: Its arguments.
    ///   - format: How to read its output: ``KeyFileFormat/passphrase`` or ``KeyFileFormat/rawHex``.
    ///   - timeout: How long it may take. Default: 30 seconds.
    ///   - environment: The command's environment; nil (the default) passes this process's on. Leave out what it
    ///     must not see, such as variables that hold other keys: the `sqlcipherkit` tool passes its environment
    ///     without the variables it reads keys from (`--key-env`, `--new-key-env`).
    /// - Throws: ``KeySourceError``: ``KeySourceError/Kind/commandFailed`` when it cannot start, exits non-zero
    ///   or is killed by a signal; ``KeySourceError/Kind/commandTimedOut``; ``KeySourceError/Kind/tooLarge`` or
    ///   ``KeySourceError/Kind/invalidKey`` for its output. No message holds a byte of the output.
    public static func fromCommand(_ executable: String, arguments: [String] = [], format: KeyFileFormat,
                                   timeout: Duration = .seconds(30),
                                   environment: [String: String]? = nil) throws(KeySourceError) -> Key {
        try KeyCommand(executable: executable, arguments: arguments, timeout: timeout, environment: environment)
            .run(format: format)
    }
}
