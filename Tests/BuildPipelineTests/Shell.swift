import Foundation
import ProcessTestSupport

/// The build's files in the repository (``Repository`` finds the repository itself).
extension Repository {
    static let buildScript = path("build-sqlcipher.sh")
    static let verifyScript = path("verify-symbols.sh")
    static let dist = path("dist/SQLCipherKit")
    static let mergedArchive = dist + "/lib/libSQLCipherKit.a"
    static let engineArchive = dist + "/lib/libsqlcipher.a"
    /// The verified tarball the build cached (its name is the pin's).
    static let cachedTarball = (try? Pin.current.get().cachedTarball)
        ?? path("Vendor/build/pin.json (missing or unreadable: run ./build-sqlcipher.sh)")
    static let amalgamation = path("Vendor/build/amalgamation/sqlite3.c")

    /// Fails with the fix when the artifact these tests inspect has not been built.
    static func requireBuild() throws {
        for file in [mergedArchive, engineArchive, cachedTarball, amalgamation]
        where !FileManager.default.fileExists(atPath: file) {
            throw MissingBuild(file: file)
        }
    }

    struct MissingBuild: Error, CustomStringConvertible {
        let file: String
        var description: String {
            "\(file) is missing: run ./build-sqlcipher.sh first (the README's test command does)"
        }
    }
}

/// Runs `executable` with `arguments` to completion, with no time limit, and returns its exit status and its
/// output (``ProcessResult/output``: standard output and standard error interleaved as written).
///
/// - Parameter environment: Variables added to (or, with an empty value, removed from) this process's own.
@discardableResult
func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
         in directory: String? = nil) throws -> ProcessResult {
    var merged = ProcessInfo.processInfo.environment
    for (name, value) in environment {
        merged[name] = value.isEmpty ? nil : value
    }
    return try runProcess(executable, arguments, environment: merged, in: directory, mergingStandardError: true,
                          timeout: nil)
}

/// Runs a bash command line (for pipelines and tools found on PATH); `arguments` are its `$1`, `$2`, ….
@discardableResult
func shell(_ command: String, _ arguments: String..., environment: [String: String] = [:]) throws
    -> ProcessResult {
    try run("/bin/bash", ["-c", command, "bash"] + arguments, environment: environment)
}

/// The SHA-256 of a file, as sha256sum prints it.
func sha256(_ path: String) throws -> String {
    try shell(#"sha256sum "$1" | cut -d' ' -f1"#, path).output.trimmingCharacters(in: .whitespacesAndNewlines)
}
