import Foundation
import ArgumentParser
import SQLCipherKit

struct Encrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write an encrypted copy of a plaintext SQLite database.",
        discussion: """
            The key options give the output's key; --compat, --plaintext-header and --salt its settings. OUT \
            appears only when complete, and is never overwritten without --force.

            Example:
              APP_DB_KEY=… sqlcipherkit encrypt plain.db secret.db --key-env APP_DB_KEY
            """
    )

    @Argument(help: "The plaintext database.") var input: String
    @Argument(help: "The encrypted database to write.") var output: String
    @Flag(help: "Replace OUT if it exists.") var force = false
    @OptionGroup var key: KeyOptions
    @OptionGroup var cipher: CipherOptions

    func run() throws {
        try reportingFailures {
            let newKey = try key.source.key(prompt: "Key for \(output): ", confirm: true)
            let source = try Database(unencryptedPath: input, configuration: .init(mode: .readWrite))
            try Transfer.export(source, to: output, key: newKey, cipher: cipher.settings(), force: force,
                                label: "encrypt")
        }
    }
}

struct Decrypt: ParsableCommand {
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

    func run() throws {
        try reportingFailures {
            let source = try Database(path: input, key: key.source.key(prompt: "Key for \(input): "),
                                      configuration: .init(mode: .readWrite, cipher: cipher.settings()))
            try Transfer.export(source, to: output, key: nil, cipher: CipherSettings(), force: force,
                                label: "decrypt")
        }
    }
}

/// The shared part of encrypt and decrypt: refuse to overwrite, export with a progress bar.
enum Transfer {
    static func export(_ source: Database, to output: String, key: Key?, cipher: CipherSettings, force: Bool,
                       label: String) throws {
        let bar = ProgressBar(label)
        Interruption.route(to: source.interruptHandle)
        do {
            try source.export(to: output, key: key, cipher: cipher, replacing: force, progress: bar.update)
        } catch {
            guard error.kind == .invalidArgument, !force, FileManager.default.fileExists(atPath: output) else {
                throw error
            }
            throw CommandFailure(message: "\(output) already exists: pass --force to replace it",
                                 status: ExitStatus.failure)
        }
        bar.finish()
    }
}
