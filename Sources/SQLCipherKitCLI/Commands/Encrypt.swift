import ArgumentParser
import SQLCipherKit

struct Encrypt: ReportingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write an encrypted copy of a plaintext SQLite database.",
        discussion: """
            The key options give the output's key; --compat, --plaintext-header and --salt its settings. OUT \
            appears only when complete, and is never overwritten without --force.

            Example:
              sqlcipherkit encrypt plain.db secret.db --key-env APP_DB_KEY
            """
    )

    @Argument(help: "The plaintext database.") var input: String
    @Argument(help: "The encrypted database to write.") var output: String
    @Flag(help: "Replace OUT if it exists.") var force = false
    @OptionGroup var key: KeyOptions
    @OptionGroup var cipher: CipherOptions

    var stateAfterInterruption: String {
        "\(output) was not written (its partial copy was removed); the source is unchanged"
    }

    var stateAfterLateSignal: String {
        "the copy was complete when the signal came: \(output) is complete and kept"
    }

    func perform() throws {
        let newKey = try key.source.key(prompt: "Key for \(output): ", confirm: true)
        let source = try Database(unencryptedPath: input, configuration: .init(mode: .readWrite))
        try Transfer.export(source, to: output, key: newKey, cipher: cipher.settings(), force: force,
                            label: "encrypt")
    }
}
