import Foundation
import SQLCipherKit

/// A fresh folder under the system temporary directory, removed when released.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("SQLCipherKitTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The path of `name` inside the folder.
    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    /// The names of the files in the folder, sorted.
    func fileNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }
}

/// The bytes of the file at `path`.
func contents(of path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
}

/// Whether `haystack` contains the UTF-8 bytes of `needle` anywhere.
func data(_ haystack: Data, contains needle: String) -> Bool {
    haystack.range(of: Data(needle.utf8)) != nil
}

/// The ``SQLCipherError`` that `body` throws, or nil when it throws nothing (or another error).
func thrownError<R>(_ body: () throws -> R) -> SQLCipherError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? SQLCipherError
    }
}
