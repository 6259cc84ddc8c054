import ArgumentParser
import SQLCipherKit

struct Decrypt: ReportingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a plaintext copy of an encrypted database.",
        discussion: """
            The key and settings options describe IN. OUT appears only when complete, and is never overwritten \
            without --force.

            Example:
              sqlcipherkit decrypt secret.db plain.db --key-file key.txt
            """
    )

    @Argument(help: "The encrypted database.") var input: String
    @Argument(help: "The plaintext database to write.") var output: String
    @Flag(help: "Replace OUT if it exists.") var force = false
    @OptionGroup var key: KeyOptions
    @OptionGroup var cipher: CipherOptions

    var stateAfterInterruption: String {
        "\(output) was not written (its partial copy was removed); the source is unchanged"
    }

    var stateAfterLateSignal: String {
        "the copy was complete when the signal came: \(output) is complete and kept"
    }

    var databasePath: String? { input }

    func perform() throws {
        let source = try Database(path: input, key: key.source.key(prompt: "Key for \(input): "),
                                  configuration: .init(mode: .readWrite, cipher: cipher.settings()))
        try Transfer.export(source, to: output, key: nil, cipher: CipherSettings(), force: force,
                            label: "decrypt")
    }
}
