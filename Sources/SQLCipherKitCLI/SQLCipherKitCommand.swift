import ArgumentParser
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
        // The engine's own word, not a copy of the pin (Vendor/sqlcipher.pin is the one place that names it).
        version: "sqlcipherkit 0.1.0 (SQLCipherKit, SQLCipher \(Engine.cipherVersion ?? "not found") on SQLite "
            + "\(Engine.sqliteVersion))",
        // One command per file in Commands/; the key and cipher options they share are the option groups in Options/.
        subcommands: [SelfCheck.self, Check.self, Encrypt.self, Decrypt.self, Rekey.self, Migrate.self, Backup.self,
                      Info.self, Query.self, Shell.self]
    )

    /// Before anything else, and so before any key is read: no core file may hold a key (a crash, or SIGABRT
    /// mid-backup, dumped both keys), and no other process of this user may read this one's memory.
    static func main() {
        // A closed pipe on standard output (`… | head`) is a write error the command reports, not a silent death
        // that would leave a half-written output's private folder behind.
        signal(SIGPIPE, SIG_IGN)
        do {
            try CoreDumps.disable()
        } catch {
            _ = StandardError.write("sqlcipherkit: \(error.message)\n")
            exit(withError: ExitCode(ExitStatus.failure.rawValue))
        }
        main(nil)
    }
}
