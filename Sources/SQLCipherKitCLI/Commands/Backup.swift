import ArgumentParser
import Foundation
import SQLCipherKit

struct Backup: ReportingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a live database, encrypted, while other processes keep writing.",
        discussion: """
            The copy is the database at one moment (a read snapshot; in WAL mode writers go on meanwhile), \
            encrypted with the same key or, with --new-key-env/--new-key-file/--new-key-credential, a new one. \
            It is never written in plaintext, appears under OUT only when complete, and never replaces OUT \
            without --force.

            Example (in a systemd unit with LoadCredentialEncrypted=db-key):
              sqlcipherkit backup /var/lib/app/app.db /var/backups/app/app.db.new \\
                --key-credential db-key --raw --force
            """
    )

    @Argument(help: "The database to copy.") var database: String
    @Argument(help: "The copy to write.") var output: String
    @Flag(help: "Replace OUT if it exists.") var force = false
    @OptionGroup var key: KeyOptions
    @OptionGroup var newKey: NewKeyOptions
    @OptionGroup var cipher: CipherOptions

    var stateAfterInterruption: String {
        "\(output) was not written (its partial copy was removed); the source is unchanged"
    }

    var stateAfterLateSignal: String {
        "the copy was complete when the signal came: \(output) is complete and kept"
    }

    var databasePath: String? { database }

    func perform() throws {
        try requireDatabaseFile(database)
        let sourceKey = try key.source.key(prompt: "Key for \(database): ")
        // Read-write so that a WAL database can be read while its writers run; the backup itself only reads.
        let source = try Database(path: database, key: sourceKey,
                                  configuration: .init(mode: .readWrite, cipher: cipher.settings()))
        let copyKey = newKey.source.isGiven
            ? try newKey.source.key(prompt: "Key for \(output): ", confirm: true) : sourceKey
        let bar = ProgressBar("backup")
        Interruption.route(to: source.interruptHandle)
        try Interruption.stopIfSignalled("nothing was written")
        do {
            try source.backup(to: output, key: copyKey, replacing: force, progress: bar.update)
        } catch {
            guard error.kind == .invalidArgument, !force, FileManager.default.fileExists(atPath: output) else {
                throw error
            }
            throw CommandFailure(message: "\(output) already exists: pass --force to replace it", status: .failure)
        }
        source.close()
        bar.finish()
    }
}
