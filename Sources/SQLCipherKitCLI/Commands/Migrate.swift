import ArgumentParser
import SQLCipherKit

struct Migrate: ReportingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Upgrade a SQLCipher 1, 2 or 3 database to SQLCipher 4 in place (cipher_migrate).",
        discussion: """
            Example:
              sqlcipherkit migrate old.db --key-file key.txt
            """
    )

    @Argument(help: "The database file.") var database: String
    @OptionGroup var key: KeyOptions

    var stateAfterInterruption: String {
        "the migration stopped before its result was renamed into place: \(database) is unchanged (SQLCipher 3 or "
            + "earlier), and no temporary file was left"
    }

    var stateAfterLateSignal: String {
        "the migration was complete when the signal came: \(database) is in SQLCipher 4's format"
    }

    var databasePath: String? { database }

    func perform() throws {
        let databaseKey = try key.source.key(prompt: "Key for \(database): ")
        // Before the spinner's thread exists, so that only the waiting thread takes the signals.
        Interruption.start()
        let bar = ProgressBar("migrate")
        try bar.spinning {
            try Database.migrate(path: database, key: databaseKey) { Interruption.route(to: $0) }
        }
        bar.finish()
        try printOutput("migrated to SQLCipher 4")
    }
}
