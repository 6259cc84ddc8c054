import ArgumentParser
import Foundation
import SQLCipherKit
import Synchronization

/// Where a key comes from. The key itself is never an argument value.
struct KeySource {
    var environmentVariable: String?
    var file: String?
    var credential: String?
    var command: String?
    var commandTimeout = KeySource.defaultCommandTimeout
    var standardInput = false
    var raw = false
    /// "" for the key options, "new-" for the new key's: how messages name the options.
    var flagPrefix = ""

    /// What `--key`, `--password` and `-k` answer: a key given as an argument is in `ps`, `/proc/PID/cmdline` and the
    /// shell's history before any check could run. The value is never repeated.
    static func noKeyArguments(flagPrefix: String) -> String {
        "keys never go on the command line (every user sees them in ps, and the shell keeps them in its history): "
            + "use --\(flagPrefix)key-env NAME, --\(flagPrefix)key-file PATH, --\(flagPrefix)key-credential NAME"
            + (flagPrefix.isEmpty ? ", --key-command COMMAND, --key-stdin" : "")
            + ", or leave them out to be asked on the terminal"
    }

    /// How long `--key-command` may take, in seconds, unless `--key-command-timeout` says otherwise.
    static let defaultCommandTimeout = 30

    var isGiven: Bool { environmentVariable != nil || file != nil || credential != nil || command != nil || standardInput }

    /// How the library reads a file, a credential or a command's output.
    var format: KeyFileFormat { raw ? .rawHex : .passphrase }

    /// The environment variables this invocation reads keys from (`--key-env`, `--new-key-env`), registered by
    /// ``validate(flagPrefix:)`` while the arguments are parsed, before any key is read: a key command's
    /// environment leaves them out, so it never sees the other key.
    static let keyVariables = Mutex<Set<String>>([])

    /// Checks that at most one source is named.
    func validate(flagPrefix: String) throws {
        if let environmentVariable { Self.keyVariables.withLock { _ = $0.insert(environmentVariable) } }
        let count = [environmentVariable != nil, file != nil, credential != nil, command != nil, standardInput]
            .filter { $0 }.count
        guard count <= 1 else {
            let options = ["env", "file", "credential"].map { "--\(flagPrefix)key-\($0)" }
                + (flagPrefix.isEmpty ? ["--key-command", "--key-stdin"] : [])
            throw ValidationError("give the \(flagPrefix)key one way only: "
                + options.dropLast().joined(separator: ", ") + " or " + options.last!)
        }
        guard commandTimeout > 0 else {
            throw ValidationError("--key-command-timeout takes a number of seconds above 0")
        }
    }

    /// The key, from the source named. A file, a credential and a command are read by SQLCipherKit (permission
    /// checks, wiped buffers); the environment, standard input and the prompt here, as a passphrase or, with
    /// --raw, as hex. The bytes read are wiped once the key holds its own copy.
    func key(prompt: String, confirm: Bool = false) throws -> Key {
        do {
            if let file { return try Key.fromFile(file, format: format) }
            if let credential { return try Key.fromCredential(credential, format: format) }
            if let command {
                // Through the shell, as PostgreSQL's ssl_passphrase_command: 'pass show db' or a pipeline.
                // Without the variables that hold this invocation's other keys.
                let hidden = Self.keyVariables.withLock { $0 }
                return try Key.fromCommand("/bin/sh", arguments: ["-c", command], format: format,
                                           timeout: .seconds(commandTimeout),
                                           environment: ProcessInfo.processInfo.environment
                                               .filter { !hidden.contains($0.key) })
            }
        } catch {
            throw CommandFailure(message: error.message, status: .usage)
        }
        var bytes = try material(prompt: prompt, confirm: confirm)
        defer { KeyMemory.wipe(&bytes) }
        // The library's one rule for the line end (one trailing \n or \r\n dropped), as for a file or a command.
        return try bytes.withUnsafeBytes { (buffer) throws(SQLCipherError) in try format.key(from: buffer) }
    }

    private func material(prompt: String, confirm: Bool) throws -> [UInt8] {
        if let environmentVariable {
            // The environment's own copy cannot be wiped; this one is, by the caller.
            guard let value = ProcessInfo.processInfo.environment[environmentVariable] else {
                // The name given is not repeated: an operator may have typed the key itself (--key-env "$DB_KEY").
                throw CommandFailure(message: "no environment variable of the name given to --\(flagPrefix)key-env "
                    + "is set: give the variable's NAME (--\(flagPrefix)key-env DB_KEY), never its value", status: .usage)
            }
            return Array(value.utf8)
        }
        if standardInput {
            var data = FileHandle.standardInput.readDataToEndOfFile()
            let bytes = [UInt8](data)
            data.withUnsafeMutableBytes { KeyMemory.wipe($0) }
            return bytes
        }
        guard var typed = try Prompt.readSecret(prompt) else {
            throw CommandFailure(message: "no key given and no terminal to ask on: use --key-env NAME, "
                + "--key-file PATH, --key-credential NAME, --key-command COMMAND or --key-stdin", status: .usage)
        }
        if confirm {
            var again = try Prompt.readSecret("Repeat to confirm: ") ?? []
            defer { KeyMemory.wipe(&again) }
            guard again == typed else {
                KeyMemory.wipe(&typed)
                throw CommandFailure(message: "the two entries differ; nothing was changed", status: .usage)
            }
        }
        return typed
    }

}
