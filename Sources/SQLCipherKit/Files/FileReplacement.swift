import Foundation
import Glibc
#if DEBUG
import Synchronization
#endif

/// A temporary file this process created beside its target and is writing: its path, and a descriptor that holds
/// an advisory lock (`flock`) on it for as long as the object lives, which tells a later run that the file is not
/// a leftover. The lock is `flock`'s, which never touches the `fcntl` locks SQLite takes on the same file; the
/// descriptor is closed only after SQLite has closed the file.
final class TemporaryFile {
    let path: String
    private let descriptor: Int32

    init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }
}

/// Writing a file beside another and renaming it into place, so a path never holds half a file.
enum FileReplacement {
    /// A fresh path in the folder of `path` (the same file system, so rename is atomic).
    static func temporaryPath(near path: String) -> String {
        path + ".sqlcipherkit-\(UUID().uuidString.prefix(8)).tmp"
    }

    /// The mode for a new file holding `source`'s data: never more open than the source file (a `:memory:` or
    /// vanished source counts as 0600), and at most 0600 when it is plaintext. The process's umask narrows it
    /// further when the file is created.
    static func mode(from source: String, plaintext: Bool) -> mode_t {
        var status = stat()
        let sourceMode = stat(source, &status) == 0 ? status.st_mode & 0o666 : 0o600
        return plaintext ? sourceMode & 0o600 : sourceMode
    }

    /// Creates a new, empty temporary file beside `path` with `mode` (narrowed by the umask), locked while this
    /// process writes it; first removes the leftovers of earlier runs for the same `path` that no live process
    /// holds (a run that was killed leaves its temporary file, possibly plaintext, behind).
    static func createTemporary(near path: String, mode: mode_t) throws(SQLCipherError) -> TemporaryFile {
        removeLeftovers(near: path)
        for _ in 0..<8 {
            let temporary = temporaryPath(near: path)
            let descriptor = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if descriptor < 0 {
                if errno == EEXIST { continue }
                throw .api(.cannotOpen, "cannot create a temporary file beside '\(path)': \(errnoText())", path: path)
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                close(descriptor)
                unlink(temporary)
                throw .api(.ioError, "cannot lock the temporary file '\(temporary)': \(errnoText())", path: path)
            }
            return TemporaryFile(path: temporary, descriptor: descriptor)
        }
        throw .api(.ioError, "cannot find a free temporary file name beside '\(path)'", path: path)
    }

    /// Removes every `PATH.sqlcipherkit-XXXXXXXX.tmp` (and its journal, WAL and shared-memory files) beside `path`
    /// that no process holds locked: what a run killed before it could clean up left behind.
    static func removeLeftovers(near path: String) {
        let folder = (path as NSString).deletingLastPathComponent
        let prefix = (path as NSString).lastPathComponent + ".sqlcipherkit-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder)) ?? []
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            let leftover = folder.isEmpty ? name : folder + "/" + name
            let descriptor = open(leftover, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            // A live run holds its lock: leave its file alone.
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { continue }
            remove(leftover)
        }
    }

    #if DEBUG
    /// Test hook (debug builds only): runs right before a finished temporary file is renamed into place; a
    /// throw here stands for any failure at the last moment.
    static let beforeRename = Mutex<(@Sendable (String) throws(SQLCipherError) -> Void)?>(nil)
    #endif

    /// Renames the finished `temporary` to `path` (replacing it), then syncs the folder so the rename is
    /// durable. On failure `temporary` is removed and `path` is untouched.
    static func move(_ temporary: String, to path: String, replacing: Bool = true) throws(SQLCipherError) {
        do throws(SQLCipherError) {
            #if DEBUG
            if let hook = beforeRename.withLock({ $0 }) { try hook(temporary) }
            #endif
            if replacing {
                guard rename(temporary, path) == 0 else {
                    throw SQLCipherError.api(.ioError, "cannot rename the new file into place: \(errnoText())", path: path)
                }
            } else {
                // link() fails if the target exists: a file that appeared since the check is never replaced.
                guard link(temporary, path) == 0 else {
                    let exists = errno == EEXIST
                    throw SQLCipherError.api(exists ? .invalidArgument : .ioError,
                                             exists ? "'\(path)' already exists (a file or a link): it is replaced "
                                                + "only when asked to (replacing: true; --force)"
                                                    : "cannot link the new file into place: \(errnoText())", path: path)
                }
                unlink(temporary)
            }
        } catch {
            remove(temporary)
            throw error
        }
        try syncFolder(of: path)
    }

    /// Flushes `path`'s data to the disk.
    static func sync(_ path: String) throws(SQLCipherError) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw .api(.ioError, "cannot open the new file to sync it: \(errnoText())", path: path)
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else {
            throw .api(.ioError, "cannot sync the new file: \(errnoText())", path: path)
        }
    }

    /// Flushes the folder holding `path`, so a rename in it survives a crash.
    static func syncFolder(of path: String) throws(SQLCipherError) {
        let folder = (path as NSString).deletingLastPathComponent
        try sync(folder.isEmpty ? "." : folder)
    }

    /// Removes `path` and any journal SQLite may have left beside it.
    static func remove(_ path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            unlink(path + suffix)
        }
    }

    static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}
