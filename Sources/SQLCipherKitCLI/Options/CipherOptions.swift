import ArgumentParser
import SQLCipherKit

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
            guard let bytes = Hex.bytes(salt), bytes.count == 16 else {
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
