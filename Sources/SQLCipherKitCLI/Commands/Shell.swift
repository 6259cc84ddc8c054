import ArgumentParser
import Foundation
import SQLCipherKit

#if canImport(Glibc)
import Glibc
#endif

struct Shell: ReportingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run SQL interactively on an encrypted database, with dot commands (.tables, .schema, .mode …).",
        discussion: """
            On a terminal: line editing (arrows, Home/End, Ctrl-A/E/U/K), history (Up/Down; kept in \
            $SQLCIPHERKIT_HISTORY or ~/.sqlcipherkit_history, mode 600, never a line that carries key material), \
            statements over several lines (end them with ;). Ctrl-C cancels the running statement or drops the \
            line being typed; Ctrl-D on an empty line or .quit leaves. Enter .help for the dot commands. \
            SQL goes through the same guard as every command: key pragmas and ATTACH … KEY are refused.

            Without a terminal, SQL and dot commands are read from standard input (a script); the exit status \
            is 1 if any of them failed (--bail: stop at the first). SIGTERM, SIGHUP and SIGQUIT interrupt the \
            statement, roll back an open transaction and end the shell with status 1.

            Examples:
              sqlcipherkit shell app.db --key-env APP_DB_KEY
              echo "SELECT count(*) FROM note;" | sqlcipherkit shell app.db --key-env K
            """
    )

    @Argument(help: "The database file.") var database: String
    @Flag(help: "Create the database (encrypted with the key) if it does not exist.") var create = false
    @Flag(help: "Stop at the first error.") var bail = false
    @OptionGroup var key: KeyOptions
    @OptionGroup var cipher: CipherOptions

    func validate() throws {
        guard !key.standardInput else {
            throw ValidationError("the shell reads SQL from standard input, so the key cannot come from there: "
                + "use --key-env NAME, --key-file PATH, --key-credential NAME or --key-command COMMAND, or type "
                + "it at the prompt")
        }
    }

    func perform() throws {
        try requireDatabaseFile(database)
        let sessionKey = try key.source.key(prompt: "Key for \(database): ")
        let settings = try cipher.settings()
        let isNew = create && access(database, F_OK) != 0
        let db = try Database(path: database, key: sessionKey,
                              configuration: .init(mode: create ? .readWriteCreate : .readWrite, cipher: settings))
        defer { db.close() }
        // A new database gets its first page now: SQLite writes nothing until the first change, and a session
        // that changed nothing would leave a 0-byte file, which the next run takes for a truncated database.
        if isNew { try db.execute("PRAGMA user_version = 0") }
        try ShellSignals.start(interrupting: db.interruptHandle)

        let interactive = isatty(STDIN_FILENO) == 1
        let filter = HistoryFilter(key: sessionKey)
        let history = interactive
            ? ShellHistory(path: ShellHistory.defaultPath(), filter: filter) { reportError("warning: \($0)") }
            : ShellHistory(filter: filter)
        let session = ShellSession(database: db, path: database, key: sessionKey, cipher: settings,
                                   history: history, isInteractive: interactive, bail: bail)
        let source: LineSource
        if interactive {
            StandardError.write("SQLCipherKit shell on \(database). Enter .help for the dot commands, .quit or "
                + "Ctrl-D to leave.\n", toDescriptor: isatty(STDOUT_FILENO) == 1 ? STDOUT_FILENO : STDERR_FILENO)
            source = LineEditor(history: history)
        } else {
            source = PlainLineSource()
        }
        let ending = session.run(source, recording: interactive, script: !interactive)
        session.finish()
        switch ending {
        case .signal(let number):
            throw CommandFailure(message: "ended by \(Interruption.name(of: number)): a running statement was "
                + "interrupted and any open transaction rolled back", status: .failure)
        case .stopped:
            throw ExitStatus.failure.exitCode
        case .quit, .endOfInput:
            if !interactive && session.failures > 0 { throw ExitStatus.failure.exitCode }
        }
    }

}
