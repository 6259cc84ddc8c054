import Foundation
import ProcessTestSupport

/// SQLCipher's own sample databases, from the pinned source tarball's `sqlcipher-resources/` folder (never
/// committed here: extracted at test time from the tarball build-sqlcipher.sh cached).
enum Fixtures {
    /// The folder holding the extracted `sqlcipher-*-testkey.db` files (under .build/, gitignored).
    static let resources: Result<URL, any Error> = Result {
        let tarball = URL(fileURLWithPath: try Pin.current.get().cachedTarball)
        guard FileManager.default.fileExists(atPath: tarball.path) else {
            throw MissingTarball(path: tarball.path)
        }
        let folder = Repository.root.appendingPathComponent(".build/test-fixtures/sqlcipher-resources")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let tar = Process()
        tar.executableURL = URL(fileURLWithPath: "/bin/tar")
        tar.arguments = ["-xzf", tarball.path, "-C", folder.path, "--strip-components=2", "--wildcards",
                         "*/sqlcipher-resources/*.db"]
        try tar.run()
        tar.waitUntilExit()
        guard tar.terminationStatus == 0 else { throw MissingTarball(path: tarball.path) }
        return folder
    }

    struct MissingTarball: Error, CustomStringConvertible {
        let path: String
        var description: String { "cannot extract fixtures from \(path): run ./build-sqlcipher.sh first" }
    }

    /// A private copy of fixture `name` in `folder` (tests may change it).
    static func copy(_ name: String, into folder: TemporaryDirectory) throws -> String {
        let source = try resources.get().appendingPathComponent(name)
        let target = folder.file(name)
        try FileManager.default.copyItem(atPath: source.path, toPath: target)
        return target
    }
}
