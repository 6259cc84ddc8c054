import ArgumentParser
import Foundation
import SQLCipherKit

#if canImport(Glibc)
import Glibc
#endif

/// `sqlcipherkit`: SQLCipher databases from the command line, for operators and CI.
///
/// A thin layer over SQLCipherKit: every command parses its options, asks the library to do the work and
/// reports the outcome. Keys come from the environment, a file, standard input or a no-echo prompt, never
/// from an argument.
@main
struct SQLCipherKitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sqlcipherkit",
        abstract: "Check, encrypt, decrypt, rekey, migrate, back up, inspect and query SQLCipher databases.",
        discussion: """
            Keys are never arguments: give them with --key-env NAME, --key-file PATH (owned by this user, mode \
            600), --key-credential NAME (a systemd credential), --key-command COMMAND (prints the key) or \
            --key-stdin, or type them at the prompt (a terminal is needed). --raw reads the key material as hex (64 digits: raw key; \
            96: raw key and salt).

            Exit status: \(ExitStatus.success.rawValue) success, \(ExitStatus.wrongKeyOrNotADatabase.rawValue) wrong \
            key or not a database, \(ExitStatus.integrityFailure.rawValue) integrity failure (tampered or corrupt), \
            \(ExitStatus.usage.rawValue) usage error, \(ExitStatus.interrupted.rawValue) stopped by SIGINT, SIGTERM, \
            SIGHUP or SIGQUIT (the message says what was left), \(ExitStatus.failure.rawValue) any other failure.
            """,
        // The library's own version (Engine+Release.swift is the one place that names it) and the engine's own
        // word, not a copy of the pin (Vendor/sqlcipher.pin is the one place that names the engine).
        version: "sqlcipherkit \(Engine.sqlcipherKitVersion) (SQLCipherKit, SQLCipher "
            + "\(Engine.cipherVersion ?? "not found") on SQLite \(Engine.sqliteVersion))",
        // One command per file in Commands/; the key and cipher options they share are the option groups in Options/.
        subcommands: [SelfCheck.self, Check.self, Encrypt.self, Decrypt.self, Rekey.self, Migrate.self, Backup.self,
                      Info.self, Query.self, Shell.self]
    )

    /// Before anything else, and so before any key is read: no core file may hold a key (a crash, or SIGABRT
    /// mid-backup, dumped both keys), and no other process of this user may read this one's memory.
    static func main() {
        // Without /proc the Swift runtime sees no arguments (it reads /proc/self/cmdline), so every command would
        // print the help and exit 0 (a `check` in a chroot would always pass), and no new file can be written
        // through a held folder descriptor: stop, and say why.
        guard access("/proc/self/fd", F_OK) == 0 else {
            _ = StandardError.write("sqlcipherkit: /proc is not mounted: it is needed to read the command line and "
                + "to write files safely; mount it (every container and systemd unit has it; ProtectProc= and "
                + "ProcSubset=pid keep /proc/self)\n")
            exit(withError: ExitCode(ExitStatus.failure.rawValue))
        }
        // A closed pipe on standard output (`… | head`) is a write error the command reports, not a silent death
        // that would leave a half-written output's private folder behind.
        signal(SIGPIPE, SIG_IGN)
        do {
            try CoreDumps.disable()
        } catch {
            _ = StandardError.write("sqlcipherkit: \(error.message)\n")
            exit(withError: ExitCode(ExitStatus.failure.rawValue))
        }
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            // ArgumentParser's own messages quote what it could not place ("Unexpected argument 'X'", "Unknown
            // option '-kX'"), which may be a key typed where it does not belong: never repeated (issue 44).
            let status = exitCode(for: error)
            let message = status == .success ? fullMessage(for: error)
                : withoutArgumentValues(fullMessage(for: error), arguments: arguments)
            if !message.isEmpty {
                if status == .success { print(message) } else { _ = StandardError.write(message + "\n") }
            }
            exit(withError: status)
        }
    }

    /// `message` with every quoted argument of `arguments` that is not an option's name (`--key-env`) replaced by
    /// a placeholder.
    static func withoutArgumentValues(_ message: String, arguments: [String]) -> String {
        let optionName = /^(--[a-z][a-z0-9-]*|-[a-zA-Z])$/
        var text = message
        for argument in Set(arguments) where !argument.isEmpty && argument.wholeMatch(of: optionName) == nil {
            text = text.replacingOccurrences(of: "'\(argument)'", with: "'(a value, not repeated)'")
        }
        return text
    }
}
