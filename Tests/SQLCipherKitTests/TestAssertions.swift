import Foundation
import SQLCipherKit

// The assertion helpers only this target uses. The temporary folder, the repository root and file reading and writing
// are ProcessTestSupport's (TemporaryDirectory, Repository, contents(of:), writeFile), shared by every test
// target.

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
