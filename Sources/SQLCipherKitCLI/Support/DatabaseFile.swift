import Foundation

/// Throws when `path` cannot hold a database: a directory (SQLite would say "disk I/O error"), or an empty
/// file, with exit status 4 (SQLite would open it as a new, empty database and every check would pass, but a
/// database truncated to nothing has lost everything).
func requireDatabaseFile(_ path: String) throws {
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return }
    if attributes[.type] as? FileAttributeType == .typeDirectory {
        throw CommandFailure(message: "\(path) is a directory, not a database file", status: .failure)
    }
    guard attributes[.type] as? FileAttributeType == .typeRegular, (attributes[.size] as? Int) == 0 else { return }
    throw CommandFailure(message: "\(path) is empty (0 bytes): it holds no database (truncated?); restore it from "
        + "a backup", status: .integrityFailure)
}
