import Foundation

/// The repository the tests belong to: the one place that finds it (from this file's location, which no test
/// reorganisation moves), for every test target.
public enum Repository {
    /// The repository's root folder (this file is `Tests/ProcessTestSupport/Repository.swift`).
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The absolute path of `relative`, a path inside the repository.
    public static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }
}
