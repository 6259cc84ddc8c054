import ArgumentParser
import SQLCipherKit

struct SelfCheck: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "selfcheck",
        abstract: "Prove that the engine is SQLCipher and that it encrypts what it writes.",
        discussion: """
            Prints the cipher version, crypto provider and its version, the SQLite version and the \
            cipher_status of a keyed connection (SQLCipher's word that it encrypts); writes an \
            encrypted database in a temporary folder and checks that its first bytes are not 'SQLite format 3'. \
            Exits 0 only if all of it holds.

            Example:
              sqlcipherkit selfcheck
            """
    )

    func perform() throws {
        let facts = try Engine.selfCheck()
        try printOutput("cipher_version: \(facts.cipherVersion)")
        try printOutput("cipher_provider: \(facts.provider)")
        try printOutput("cipher_provider_version: \(facts.providerVersion)")
        try printOutput("crypto_provider: \(facts.cryptoProvider) (compiled into the engine)")
        try printOutput("sqlite_version: \(facts.sqliteVersion)")
        try printOutput("cipher_status: \(facts.encryptsConnections ? 1 : 0) (a keyed connection encrypts)")
        let proof = try Engine.proveEncryptionAtRest()
        let header = Hex.string(proof.fileHeader)
        try printOutput("encrypted_at_rest: yes (first bytes \(header), not 'SQLite format 3'; \(proof.fileSize) bytes)")
    }
}
