import Foundation
import ProcessTestSupport

/// What a finished process left behind.
struct ProcessResult: CustomStringConvertible {
    let status: Int32
    /// Standard output and standard error, interleaved as written.
    let output: String

    var description: String { "exit \(status)\n\(output)" }
}

/// The package's files, found from this source file's location.
enum Repository {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

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

/// Runs `executable` with `arguments` to completion and returns its exit status and output.
///
/// - Parameter environment: Variables added to (or, with an empty value, removed from) this process's own.
@discardableResult
func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
         in directory: String? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    var merged = ProcessInfo.processInfo.environment
    for (name, value) in environment {
        merged[name] = value.isEmpty ? nil : value
    }
    process.environment = merged
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Read to the end before waiting, so a chatty child never blocks on a full pipe.
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
}

/// Runs a bash command line (for pipelines and tools found on PATH); `arguments` are its `$1`, `$2`, ….
@discardableResult
func shell(_ command: String, _ arguments: String..., environment: [String: String] = [:]) throws
    -> ProcessResult {
    try run("/bin/bash", ["-c", command, "bash"] + arguments, environment: environment)
}

/// A fresh folder under the system temporary directory, removed when released.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("BuildPipelineTests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    func file(_ name: String) -> String { path + "/" + name }
}

/// The SHA-256 of a file, as sha256sum prints it.
func sha256(_ path: String) throws -> String {
    try shell(#"sha256sum "$1" | cut -d' ' -f1"#, path).output.trimmingCharacters(in: .whitespacesAndNewlines)
}
