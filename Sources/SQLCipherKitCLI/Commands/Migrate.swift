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

    func perform() throws {
        let databaseKey = try key.source.key(prompt: "Key for \(database): ")
        let bar = ProgressBar("migrate")
        try bar.spinning { try Database.migrate(path: database, key: databaseKey) }
        bar.finish()
        print("migrated to SQLCipher 4")
    }
}
