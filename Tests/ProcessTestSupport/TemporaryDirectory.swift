import Foundation

/// A fresh folder under the system temporary directory (TMPDIR), removed with everything in it when released:
/// the one temporary-folder type of the test targets.
public final class TemporaryDirectory {
    /// The folder's absolute path.
    public let path: String

    /// The folder's location, for the APIs that take a URL.
    public var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    /// Creates `TMPDIR/PREFIX-UUID`.
    /// A new folder under `parent` (default: the temporary folder).
    public init(prefix: String = "SQLCipherKitTests", in parent: String? = nil) throws {
        let base = parent.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? FileManager.default.temporaryDirectory
        path = base.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The path of `name` (a file or a relative path) inside the folder.
    public func file(_ name: String) -> String { path + "/" + name }

    /// The names of the entries in the folder, sorted.
    public func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }
}
