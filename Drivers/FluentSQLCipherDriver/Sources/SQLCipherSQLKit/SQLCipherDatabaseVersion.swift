import SQLCipherKit
import SQLKit

/// The SQLite version of SQLCipherKit's engine, as SQLKit compares versions.
public struct SQLCipherDatabaseVersion: SQLDatabaseReportedVersion {
    /// The major version (3).
    public let major: Int
    /// The minor version.
    public let minor: Int
    /// The patch version.
    public let patch: Int

    /// The version of the SQLite inside the linked SQLCipher (`sqlite_version()`).
    public static let engine = SQLCipherDatabaseVersion(parsing: Engine.sqliteVersion)

    /// A version from its parts.
    public init(major: Int, minor: Int, patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// A version from SQLite's text, `3.46.1`; missing or unreadable parts count as 0.
    public init(parsing text: String) {
        let parts = text.split(separator: ".").map { Int($0.prefix { $0.isNumber }) ?? 0 }
        self.init(major: parts.count > 0 ? parts[0] : 0, minor: parts.count > 1 ? parts[1] : 0,
                  patch: parts.count > 2 ? parts[2] : 0)
    }

    /// `major.minor.patch`.
    public var stringValue: String { "\(major).\(minor).\(patch)" }

    /// Whether `otherVersion` is an SQLCipher version with the same parts.
    public func isEqual(to otherVersion: any SQLDatabaseReportedVersion) -> Bool {
        guard let other = otherVersion as? Self else { return false }
        return (major, minor, patch) == (other.major, other.minor, other.patch)
    }

    /// Whether this version comes before `otherVersion` (an SQLCipher version; other kinds do not compare).
    public func isOlder(than otherVersion: any SQLDatabaseReportedVersion) -> Bool {
        guard let other = otherVersion as? Self else { return false }
        return (major, minor, patch) < (other.major, other.minor, other.patch)
    }
}
