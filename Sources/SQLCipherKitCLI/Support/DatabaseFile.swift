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
/// journal or log beside it that the engine refuses (someone else's, or not a file), a hot journal (a write cut
/// short, which a read-only open cannot roll back: the engine calls that "can only be read" or a wrong key), or a
/// plaintext SQLite file given to a command that needs an encrypted one. Nil when the engine's account stands.
func explainOpenFailure(_ error: SQLCipherError, path: String) -> CommandFailure? {
    guard [.wrongKeyOrNotADatabase, .readOnly, .cannotOpen, .corrupt].contains(error.kind) else { return nil }
    for suffix in ["-journal", "-wal"] {
        switch sideFile(path + suffix, owner: owner(of: path)) {
        case .foreign(let uid):
            return CommandFailure(message: "\(path + suffix) belongs to uid \(uid), not to the database's owner: "
                + "SQLCipherKit never plays back a journal or log that someone else could have written (it could roll "
                + "the database back to an old copy, or mix two keys). If you did not expect it, move it away (keep it "
                + "to inspect), then open the database again", status: .failure)
        case .notAFile:
            return CommandFailure(message: "\(path + suffix) is not a regular file (a FIFO, a link, a folder…): "
                + "someone put it there; move it away, then open the database again", status: .failure)
        case .hot where suffix == "-journal":
            return CommandFailure(message: "\(path) has a hot journal beside it (\(path)-journal): a write was cut "
                + "short (a crash, or a kill during a rekey or a write), and the file is consistent again only once the "
                + "journal rolls back, which takes one read-write open with the key it was written under (after an "
                + "interrupted rekey, the OLD key). Run `sqlcipherkit query \(path) 'PRAGMA quick_check' --key-…` once "
                + "with that key, then check again; keep the journal until then", status: .failure)
        default:
            continue
        }
    }
    if error.kind == .wrongKeyOrNotADatabase, let info = try? Database.inspect(path: path, key: nil),
       info.format == .plaintext {
        return CommandFailure(message: "\(path) is a plaintext SQLite database, not an encrypted one: encrypt it "
            + "with `sqlcipherkit encrypt \(path) OUT --key-env NAME` (then use OUT), or read it as it is with "
            + "sqlite3", status: .wrongKeyOrNotADatabase)
    }
    return nil
}

/// What lies at a journal's or log's path, as far as explaining a failure goes.
enum SideFile {
    case absent
    /// A regular file of the database's owner (or this user's) whose header is a rollback journal's: hot.
    case hot
    /// A regular file of the database's owner, not (or not yet) hot.
    case idle
    /// A regular file of another user.
    case foreign(uid_t)
    /// Anything but a regular file.
    case notAFile
}

/// The owner of the file at `path` (nil when it cannot be read).
func owner(of path: String) -> uid_t? {
    var status = stat()
    return stat(path, &status) == 0 ? status.st_uid : nil
}

/// What is at `path` (a journal or log beside a database owned by `owner`), read without following a link or
/// blocking on a FIFO.
func sideFile(_ path: String, owner: uid_t?) -> SideFile {
    var named = stat()
    guard lstat(path, &named) == 0 else { return .absent }
    guard named.st_mode & S_IFMT == S_IFREG else { return .notAFile }
    if named.st_uid != geteuid() && named.st_uid != owner { return .foreign(named.st_uid) }
    let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
    guard descriptor >= 0 else { return .idle }
    defer { close(descriptor) }
    var magic = [UInt8](repeating: 0, count: 8)
    guard read(descriptor, &magic, 8) == 8 else { return .idle }
    return magic == [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7] ? .hot : .idle
}
