import ArgumentParser
import Foundation
import SQLCipherKit

struct Check: ReportingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a database's page authentication (cipher_integrity_check) and structure (integrity_check).",
        discussion: """
            Exits \(ExitStatus.integrityFailure.rawValue) when a page fails its HMAC or the structure is damaged, naming the pages.

            Example:
              sqlcipherkit check app.db --key-file /run/secrets/app-db-key
            """
    )

    @Argument(help: "The database file.") var database: String
    @OptionGroup var key: KeyOptions
    @OptionGroup var cipher: CipherOptions

    var databasePath: String? { database }

    func perform() throws {
        try requireDatabaseFile(database)
        // The library's check leaves the folder as it found it (no -wal or -shm left behind).
        let report = try Database.checkIntegrity(path: database,
                                                 key: key.source.key(prompt: "Key for \(database): "),
                                                 cipher: cipher.settings())
        for note in report.notes { try printOutput("note: \(note)") }
        let failures = report.failures
        guard failures.isEmpty else {
            for failure in failures { try printOutput(failure) }
            throw CommandFailure(message: "\(database) failed its integrity check (\(failures.count) "
                + "problem\(failures.count == 1 ? "" : "s")): it was tampered with or is corrupt; restore it from a backup",
                status: .integrityFailure)
        }
        try printOutput("ok")
    }
}
