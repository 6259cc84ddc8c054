import ArgumentParser
import Foundation
import SQLCipherKit

struct Info: ReportingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a database's format (SQLCipher 4/3/2/1 or plain), cipher settings and page layout.",
        discussion: """
            A plain SQLite file needs no key; an encrypted one does. --json prints one JSON object.

            Example:
              sqlcipherkit info app.db --key-file key.txt --json
            """
    )

    @Argument(help: "The database file.") var database: String
    @Flag(help: "Print JSON.") var json = false
    @OptionGroup var key: KeyOptions
    @OptionGroup var cipher: CipherOptions

    var databasePath: String? { database }

    func perform() throws {
        guard FileManager.default.fileExists(atPath: database) else {
            throw CommandFailure(message: "\(database) does not exist: check the path", status: .failure)
        }
        try requireDatabaseFile(database)
        let info: DatabaseInfo
        if !key.source.isGiven, let plain = try? Database.inspect(path: database, key: nil) {
            info = plain
        } else {
            info = try Database.inspect(path: database, key: key.source.key(prompt: "Key for \(database): "),
                                        cipher: cipher.settings())
        }
        try printOutput(json ? try jsonText(info) : info.textLines.joined(separator: "\n"))
    }

    private func jsonText(_ info: DatabaseInfo) throws -> String {
        var object: [String: Any] = [
            "path": database,
            "format": info.formatVersion.map { String($0) } ?? "plain",
            "pageSize": info.pageSize,
            "pageCount": info.pageCount,
            "fileSize": info.fileSize,
            "plaintextHeaderSize": info.plaintextHeaderSize,
            "cipherStatus": info.cipherStatus,
        ]
        if let settings = info.cipherSettings {
            object["cipher"] = [
                "kdfIterations": settings.kdfIterations as Any,
                "usesHMAC": settings.usesHMAC as Any,
                "hmacAlgorithm": settings.hmacAlgorithm?.rawValue as Any,
                "kdfAlgorithm": settings.kdfAlgorithm?.rawValue as Any,
            ]
        }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}
