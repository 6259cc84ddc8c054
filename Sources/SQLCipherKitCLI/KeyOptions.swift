import ArgumentParser
import Foundation
import SQLCipherKit

/// Where a key comes from. The key itself is never an argument value.
struct KeySource {
    var environmentVariable: String?
    var file: String?
    var standardInput = false
    var raw = false

    var isGiven: Bool { environmentVariable != nil || file != nil || standardInput }

    /// Checks that at most one source is named.
    func validate(flagPrefix: String) throws {
        let count = [environmentVariable != nil, file != nil, standardInput].filter { $0 }.count
        guard count <= 1 else {
            throw ValidationError("give the \(flagPrefix)key one way only: --\(flagPrefix)key-env, --\(flagPrefix)key-file"
                + (flagPrefix.isEmpty ? " or --key-stdin" : ""))
        }
    }

    /// Reads the key material and hands it to SQLCipherKit as a passphrase or, with --raw, as hex. The bytes
    /// read are wiped once the key holds its own copy.
    func key(prompt: String, confirm: Bool = false) throws -> Key {
        var bytes = try material(prompt: prompt, confirm: confirm)
        defer { wipe(&bytes) }
        return raw ? try Key.rawKey(hex: bytes) : try Key.passphrase(bytes: bytes)
    }

    private func material(prompt: String, confirm: Bool) throws -> [UInt8] {
        if let environmentVariable {
            // The environment's own copy cannot be wiped; this one is, by the caller.
            guard let value = ProcessInfo.processInfo.environment[environmentVariable] else {
                throw CommandFailure(message: "the environment variable \(environmentVariable) is not set",
                                     status: ExitStatus.usage)
            }
            return Array(value.utf8)
        }
        if let file {
            guard var data = FileManager.default.contents(atPath: file) else {
                throw CommandFailure(message: "cannot read the key file \(file)", status: ExitStatus.usage)
            }
            return takingBytes(of: &data)
        }
        if standardInput {
            var data = FileHandle.standardInput.readDataToEndOfFile()
            return takingBytes(of: &data)
        }
        guard var typed = try Prompt.readSecret(prompt) else {
            throw CommandFailure(message: "no key given and no terminal to ask on: use --key-env NAME, "
                + "--key-file PATH or --key-stdin", status: ExitStatus.usage)
        }
        if confirm {
            var again = try Prompt.readSecret("Repeat to confirm: ") ?? []
            defer { wipe(&again) }
            guard again == typed else {
                wipe(&typed)
                throw CommandFailure(message: "the two entries differ; nothing was changed", status: ExitStatus.usage)
            }
        }
        return typed
    }

    /// The bytes of `data` minus one trailing newline, in a new array; `data` is wiped.
    private func takingBytes(of data: inout Data) -> [UInt8] {
        var count = data.count
        if count > 0, data[data.startIndex + count - 1] == UInt8(ascii: "\n") { count -= 1 }
        if count > 0, data[data.startIndex + count - 1] == UInt8(ascii: "\r") { count -= 1 }
        let bytes = [UInt8](data.prefix(count))
        data.withUnsafeMutableBytes { KeyMemory.wipe($0) }
        return bytes
    }
}

/// Overwrites `bytes` with zeros (SQLCipherKit's explicit_bzero, which the optimiser may not drop), then
/// empties it.
func wipe(_ bytes: inout [UInt8]) {
    KeyMemory.wipe(&bytes)
}

/// The key options of every command that opens a database.
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("key-env"), help: ArgumentHelp("Read the key from this environment variable.",
                                                             valueName: "NAME"))
    var environmentVariable: String?

    @Option(name: .customLong("key-file"), help: ArgumentHelp("Read the key from this file (its bytes minus one trailing newline).", valueName: "PATH"))
    var file: String?

    @Flag(name: .customLong("key-stdin"), help: "Read the key from standard input.")
    var standardInput = false

    @Flag(name: .customLong("raw"), help: "The key is hex: 64 digits for a raw key, 96 for a raw key and its salt.")
    var raw = false

    var source: KeySource {
        KeySource(environmentVariable: environmentVariable, file: file, standardInput: standardInput, raw: raw)
    }

    func validate() throws {
        try source.validate(flagPrefix: "")
    }
}

/// The new key of `rekey`.
struct NewKeyOptions: ParsableArguments {
    @Option(name: .customLong("new-key-env"), help: ArgumentHelp("Read the new key from this environment variable.", valueName: "NAME"))
    var environmentVariable: String?

    @Option(name: .customLong("new-key-file"), help: ArgumentHelp("Read the new key from this file.", valueName: "PATH"))
    var file: String?

    @Flag(name: .customLong("new-raw"), help: "The new key is hex: 64 or 96 digits.")
    var raw = false

    var source: KeySource {
        KeySource(environmentVariable: environmentVariable, file: file, standardInput: false, raw: raw)
    }

    func validate() throws {
        try source.validate(flagPrefix: "new-")
    }
}

/// Cipher settings of an existing database, or of a new one.
struct CipherOptions: ParsableArguments {
    @Option(name: .customLong("compat"), help: "SQLCipher major version of the file's settings: 1, 2, 3 or 4.")
    var compatibility: Int?

    @Option(name: .customLong("plaintext-header"), help: ArgumentHelp("Plaintext header size in bytes (e.g. 32).", valueName: "N"))
    var plaintextHeaderSize: Int?

    @Option(name: .customLong("salt"), help: ArgumentHelp("The database salt, 32 hex digits (for plaintext-header files).", valueName: "HEX"))
    var salt: String?

    func validate() throws {
        _ = try settings()
    }

    /// The settings, checked by SQLCipherKit.
    func settings() throws -> CipherSettings {
        var settings = CipherSettings(compatibility: compatibility, plaintextHeaderSize: plaintextHeaderSize)
        if let salt {
            guard let bytes = SaltParser.bytes(salt) else {
                throw ValidationError("--salt takes 32 hex digits")
            }
            settings.salt = bytes
        }
        do {
            try settings.validate()
        } catch {
            throw ValidationError(error.message)
        }
        return settings
    }
}

enum SaltParser {
    /// The 16 bytes of 32 hex digits, or nil.
    static func bytes(_ hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == 32 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: 32, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        return bytes
    }
}
