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
        print(json ? try jsonText(info) : text(info))
    }

    private func version(_ format: DatabaseFormat) -> Int? {
        if case .sqlcipher(let version) = format { return version }
        return nil
    }

    private func text(_ info: DatabaseInfo) -> String {
        var lines = [
            "format: \(version(info.format).map(String.init) ?? "plain")  (\(info.format))",
            "page_size: \(info.pageSize)",
            "page_count: \(info.pageCount)",
            "file_size: \(info.fileSize)",
            "plaintext_header_size: \(info.plaintextHeaderSize)",
            "cipher_status: \(info.cipherStatus ? 1 : 0)",
        ]
        if let settings = info.cipherSettings {
            lines += [
                "kdf_iter: \(settings.kdfIterations.map(String.init) ?? "?")",
                "cipher_use_hmac: \(settings.usesHMAC.map { $0 ? "1" : "0" } ?? "?")",
                "cipher_hmac_algorithm: \(settings.hmacAlgorithm?.rawValue ?? "?")",
                "cipher_kdf_algorithm: \(settings.kdfAlgorithm?.rawValue ?? "?")",
            ]
        }
        return lines.joined(separator: "\n")
    }

    private func jsonText(_ info: DatabaseInfo) throws -> String {
        var object: [String: Any] = [
            "path": database,
            "format": version(info.format).map { String($0) } ?? "plain",
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
