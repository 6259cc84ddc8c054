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
        defer { KeyMemory.wipe(&bytes) }
        return raw ? try Key.rawKey(hex: bytes) : try Key.passphrase(bytes: bytes)
    }

    private func material(prompt: String, confirm: Bool) throws -> [UInt8] {
        if let environmentVariable {
            // The environment's own copy cannot be wiped; this one is, by the caller.
            guard let value = ProcessInfo.processInfo.environment[environmentVariable] else {
                throw CommandFailure(message: "the environment variable \(environmentVariable) is not set",
                                     status: .usage)
            }
            return Array(value.utf8)
        }
        if let file {
            guard var data = FileManager.default.contents(atPath: file) else {
                throw CommandFailure(message: "cannot read the key file \(file)", status: .usage)
            }
            return takingBytes(of: &data)
        }
        if standardInput {
            var data = FileHandle.standardInput.readDataToEndOfFile()
            return takingBytes(of: &data)
        }
        guard var typed = try Prompt.readSecret(prompt) else {
            throw CommandFailure(message: "no key given and no terminal to ask on: use --key-env NAME, "
                + "--key-file PATH or --key-stdin", status: .usage)
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
