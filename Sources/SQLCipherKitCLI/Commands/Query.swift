import ArgumentParser
import Foundation
import SQLCipherKit

struct Query: ReportingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run SQL and print the rows.",
        discussion: """
            With --create, a missing database is created, encrypted with the key. The SQL arguments are joined with spaces; several statements run in order, each printing its rows. \
            Blobs print as hex (x'…'); NULL as NULL (table), an empty field (csv) or null (json). \
            JSON is an array of objects, one per row, keys in column order; a repeated column name gets :1, :2, \
            … (SELECT 1 AS a, 2 AS a prints [{"a":1,"a:1":2}]). Output that cannot be written (a full disk) \
            fails the command. For an interactive session, see sqlcipherkit shell.

            Example:
              sqlcipherkit query app.db "SELECT id, body FROM note LIMIT 5" \\
                --key-env APP_DB_KEY --format csv
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, csv, json
    }

    @Argument(help: "The database file.") var database: String
    @Argument(help: "The SQL to run.") var sql: [String]
    @Option(help: "Output format: table, csv or json.") var format: Format = .table
    @Flag(help: "Create the database (encrypted with the key) if it does not exist.") var create = false
    @OptionGroup var key: KeyOptions
    @OptionGroup var cipher: CipherOptions

    func validate() throws {
        guard !sql.joined().trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ValidationError("give the SQL to run after the database path")
        }
    }

    var stateAfterInterruption: String {
        "the running statement was rolled back (statements before it had completed)"
    }

    var stateAfterLateSignal: String {
        "every statement had completed when the signal came"
    }

    var databasePath: String? { database }

    func perform() throws {
        let db = try Database(path: database, key: key.source.key(prompt: "Key for \(database): "),
                              configuration: .init(mode: create ? .readWriteCreate : .readWrite,
                                                   cipher: cipher.settings()))
        Interruption.route(to: db.interruptHandle)
        try Interruption.stopIfSignalled("no statement ran")
        try db.forEachStatement(in: sql.joined(separator: " ")) { statement, cursor in
            // A signal between two statements interrupts neither: stop before the next one.
            try Interruption.stopIfSignalled("the statements before this one had completed; the rest did not run")
            guard statement.columnCount > 0 else {
                while try cursor.next() != nil {}
                return
            }
            try RowPrinter(format: format, columns: statement.columnNames).print(cursor)
        }
    }
}
