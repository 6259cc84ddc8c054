import Foundation
import SQLCipherKit

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

/// A truer account of a failure to open the database at `path` than the engine's, where the file says more: a
/// hot journal beside it (a write cut short, which a read-only open cannot roll back: the engine calls that "can
/// only be read" or a wrong key), or a plaintext SQLite file given to a command that needs an encrypted one.
/// Nil when the engine's account stands.
func explainOpenFailure(_ error: SQLCipherError, path: String) -> CommandFailure? {
    guard [.wrongKeyOrNotADatabase, .readOnly, .cannotOpen, .corrupt].contains(error.kind) else { return nil }
    if hasHotJournal(path) {
        return CommandFailure(message: "\(path) has a hot journal beside it (\(path)-journal): a write was cut short "
            + "(a crash, or a kill during a rekey or a write), and the file is consistent again only once the journal "
            + "rolls back, which takes one read-write open with the key it was written under (after an interrupted "
            + "rekey, the OLD key). Run `sqlcipherkit query \(path) 'PRAGMA quick_check' --key-…` once with that "
            + "key, then check again; keep the journal until then", status: .failure)
    }
    if error.kind == .wrongKeyOrNotADatabase, let info = try? Database.inspect(path: path, key: nil),
       info.format == .plaintext {
        return CommandFailure(message: "\(path) is a plaintext SQLite database, not an encrypted one: encrypt it "
            + "with `sqlcipherkit encrypt \(path) OUT --key-env NAME` (then use OUT), or read it as it is with "
            + "sqlite3", status: .wrongKeyOrNotADatabase)
    }
    return nil
}

/// Whether `path-journal` is a rollback journal with a header: what a write cut short leaves ("hot" as SQLite
/// says, once no connection holds the database locked). Read without following a link or blocking on a FIFO.
func hasHotJournal(_ path: String) -> Bool {
    let descriptor = open(path + "-journal", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size >= 8 else { return false }
    var magic = [UInt8](repeating: 0, count: 8)
    guard read(descriptor, &magic, 8) == 8 else { return false }
    return magic == [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]
}
