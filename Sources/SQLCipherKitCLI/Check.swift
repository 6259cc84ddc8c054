import ArgumentParser
import Foundation
import SQLCipherKit

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a database's page authentication (cipher_integrity_check) and structure (integrity_check).",
        discussion: """
            Exits 4 when a page fails its HMAC or the structure is damaged, naming the pages.

            Example:
              sqlcipherkit check app.db --key-file /run/secrets/app-db-key
            """
    )

    @Argument(help: "The database file.") var database: String
    @OptionGroup var key: KeyOptions
    @OptionGroup var cipher: CipherOptions

    func run() throws {
        try reportingFailures {
            try requireDatabaseFile(database)
            // The library's check leaves the folder as it found it (no -wal or -shm left behind).
            let report = try Database.checkIntegrity(path: database,
                                                     key: key.source.key(prompt: "Key for \(database): "),
                                                     cipher: cipher.settings())
            for note in report.notes { print("note: \(note)") }
            let failures = report.failures
            guard failures.isEmpty else {
                for failure in failures { print(failure) }
                throw CommandFailure(message: "\(database) failed its integrity check (\(failures.count) "
                    + "problem\(failures.count == 1 ? "" : "s")): it was tampered with or is corrupt; restore it from a backup",
                    status: ExitStatus.integrityFailure)
            }
            print("ok")
        }
    }
}

/// Throws when `path` cannot hold a database: a directory (SQLite would say "disk I/O error"), or an empty
/// file, with exit status 4 (SQLite would open it as a new, empty database and every check would pass, but a
/// database truncated to nothing has lost everything).
func requireDatabaseFile(_ path: String) throws {
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return }
    if attributes[.type] as? FileAttributeType == .typeDirectory {
        throw CommandFailure(message: "\(path) is a directory, not a database file", status: ExitStatus.failure)
    }
    guard attributes[.type] as? FileAttributeType == .typeRegular, (attributes[.size] as? Int) == 0 else { return }
    throw CommandFailure(message: "\(path) is empty (0 bytes): it holds no database (truncated?); restore it from "
        + "a backup", status: ExitStatus.integrityFailure)
}
