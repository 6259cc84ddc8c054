import Foundation

// Reading and writing whole files: the one way the test targets do it.

/// The bytes of the file at `path`.
public func contents(of path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
}

/// Writes `bytes` to `path`, creating or truncating the file, in place (not through a temporary file and a
/// rename: nothing but `path` is created, and a test that needs atomicity is testing something else).
public func writeFile(_ path: String, _ bytes: some Sequence<UInt8>) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// Writes the UTF-8 of `text` to `path`, as the bytes form does.
public func writeFile(_ path: String, _ text: String) throws {
    try writeFile(path, Data(text.utf8))
}
