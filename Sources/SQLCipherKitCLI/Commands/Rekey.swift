import ArgumentParser
import SQLCipherKit

struct Rekey: ReportingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Re-encrypt a database in place with a new key.",
        discussion: """
            The old key comes from the key options, the new one from --new-key-env or --new-key-file (or a \
            prompt, typed twice). Either may be a raw key with --raw / --new-raw.

            Example:
              sqlcipherkit rekey app.db --key-env OLD_KEY --new-key-env NEW_KEY
            """
    )

    @Argument(help: "The database file.") var database: String
    @OptionGroup var key: KeyOptions
    @OptionGroup var newKey: NewKeyOptions
    @OptionGroup var cipher: CipherOptions

    var stateAfterInterruption: String {
        "the rekey rolled back: \(database) keeps its OLD key"
    }

    var stateAfterLateSignal: String {
        "the rekey had committed when the signal came: \(database) is under the NEW key"
    }

    var databasePath: String? { database }

    func perform() throws {
        let db = try Database(path: database, key: key.source.key(prompt: "Current key for \(database): "),
                              configuration: .init(mode: .readWrite, cipher: cipher.settings()))
        let replacement = try newKey.source.key(prompt: "New key for \(database): ", confirm: true)
        let bar = ProgressBar("rekey")
        Interruption.route(to: db.interruptHandle)
        try Interruption.stopIfSignalled("the rekey did not start: \(database) keeps its OLD key")
        try bar.spinning { try db.rekey(to: replacement) }
        bar.finish()
    }
}
