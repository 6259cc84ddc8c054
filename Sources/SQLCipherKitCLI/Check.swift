import ArgumentParser
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
            let db = try Database(path: database, key: key.source.key(prompt: "Key for \(database): "),
                                  configuration: .init(mode: .readOnly, cipher: cipher.settings()))
            var failures: [String] = []
            for problem in try db.cipherIntegrityCheck() {
                if problem.isFailure {
                    failures.append(problem.message)
                } else {
                    print("note: \(problem.message)")
                }
            }
            failures += try db.integrityCheck()
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
