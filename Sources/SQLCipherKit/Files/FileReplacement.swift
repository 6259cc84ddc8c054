import Foundation
import Glibc
#if DEBUG
import Synchronization
#endif

/// Writing a file beside another and renaming it into place, so a path never holds half a file.
enum FileReplacement {
    /// A fresh path in the folder of `path` (the same file system, so rename is atomic).
    static func temporaryPath(near path: String) -> String {
        path + ".sqlcipherkit-\(UUID().uuidString.prefix(8)).tmp"
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
                                             exists ? "'\(path)' already exists: export writes a new file"
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
