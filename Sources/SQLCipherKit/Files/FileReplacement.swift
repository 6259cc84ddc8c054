import Foundation
import Glibc
#if DEBUG
import Synchronization
#endif

/// A new file this process is writing, inside a private folder of its own beside its target, reached only through
/// descriptors this object holds.
///
/// The folder is made by `mkdtemp` (mode 0700, this user's) next to the target, so the final rename stays on one
/// file system; it is opened at once and held, and locked with `flock` for as long as the object lives, which
/// tells a later run that it is not a leftover. SQLite opens the file as ``path``: `/proc/self/fd/N/database`,
/// through the held folder descriptor, so nobody who can write to the target's folder can redirect it, not even
/// by renaming the private folder away and putting one of their own under its name (issue 44). The engine keeps
/// such a path as given (the pin's local change `proc-fd-path-kept`) rather than resolving the link to the
/// folder's name. Where `/proc` is not mounted, no file is written (there is no such path). The rename itself is `renameat` from the held folder to the held target
/// folder. Dropping the object removes whatever is left inside the folder, and the folder.
final class TemporaryFile {
    /// The file's name inside the private folder.
    static let fileName = "database"
    /// An empty file the library puts in every private folder it makes: what tells leftover cleanup that a folder
    /// is one of its own. Nobody else can create it there (the folder is 0700 from the start), so a folder of the
    /// user's that someone renamed to look like a leftover is never emptied (issue 44's review).
    static let markerName = ".sqlcipherkit-private"

    /// The path to give SQLite (see the type's discussion).
    let path: String
    /// The private folder, held open and `flock`ed.
    let folderDescriptor: Int32
    /// The new file, created there with `O_EXCL`: the device and inode the final rename must find. Replaced only
    /// by ``FileReplacement/adoptRenamedFile(_:)``, when the engine itself renamed a file of its own over it
    /// inside the private folder.
    private(set) var fileDescriptor: Int32
    /// The target's folder, held open: the rename goes into it, and it is synced afterwards.
    let targetFolderDescriptor: Int32
    /// The private folder's name in the target's folder.
    let folderName: String

    init(path: String, folderDescriptor: Int32, fileDescriptor: Int32, targetFolderDescriptor: Int32,
         folderName: String) {
        self.path = path
        self.folderDescriptor = folderDescriptor
        self.fileDescriptor = fileDescriptor
        self.targetFolderDescriptor = targetFolderDescriptor
        self.folderName = folderName
    }

    /// Takes the file now named ``fileName`` in the private folder as the new file (see ``fileDescriptor``).
    func adopt(_ descriptor: Int32) {
        close(fileDescriptor)
        fileDescriptor = descriptor
    }

    /// Whether `status` and `other` are the same file (device and inode).
    static func sameFile(_ status: stat, _ other: stat) -> Bool {
        status.st_dev == other.st_dev && status.st_ino == other.st_ino
    }

    /// Empties the private folder (only the regular files this user owns: the new file if it was not moved, and the
    /// journals SQLite may have left) and removes it, wherever it now is.
    deinit {
        FileReplacement.emptyPrivateFolder(folderDescriptor)
        var held = stat()
        if fstat(folderDescriptor, &held) == 0 {
            // Normally still under its own name; if someone renamed it, /proc tells where it went.
            var named = stat()
            if fstatat(targetFolderDescriptor, folderName, &named, AT_SYMLINK_NOFOLLOW) == 0,
               Self.sameFile(named, held) {
                unlinkat(targetFolderDescriptor, folderName, AT_REMOVEDIR)
            } else if let moved = FileReplacement.currentPath(of: folderDescriptor),
                      lstat(moved, &named) == 0, Self.sameFile(named, held) {
                rmdir(moved)
            }
        }
        close(fileDescriptor)
        close(folderDescriptor)
        close(targetFolderDescriptor)
    }
}

/// Writing a file beside another and renaming it into place, so a path never holds half a file.
enum FileReplacement {
    /// The part of a private folder's name after the target's name; `mkdtemp` replaces the X's.
    static let folderMarker = ".sqlcipherkit-"

    /// The mode for a new file holding `source`'s data: never more open than the source file (a `:memory:` or
    /// vanished source counts as 0600), and at most 0600 when it is plaintext. The process's umask narrows it
    /// further when the file is created.
    static func mode(from source: String, plaintext: Bool) -> mode_t {
        var status = stat()
        let sourceMode = stat(source, &status) == 0 ? status.st_mode & 0o666 : 0o600
        return plaintext ? sourceMode & 0o600 : sourceMode
    }

    /// The folder holding `path` and `path`'s last component, by the last `/` (`.` when there is none, `/` for a
    /// file at the root). No Foundation path call: `NSString.deletingLastPathComponent` crashed on ".".
    static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = String(path[..<slash])
        return (folder.isEmpty ? "/" : folder, String(path[path.index(after: slash)...]))
    }

    /// Throws ``SQLCipherError/Kind/invalidArgument`` unless `path` names a file (not empty, not ending in `/`,
    /// not `.` or `..`).
    static func requireFileName(_ path: String) throws(SQLCipherError) {
        let name = split(path).name
        guard !name.isEmpty, name != ".", name != ".." else {
            throw .api(.invalidArgument, "'\(path)' names a folder, not a file: give the path of the file to write",
                       path: path)
        }
    }

    /// Creates a private folder (0700) beside `path` and a new, empty file in it with `mode` (narrowed by the
    /// umask), held and locked while this process writes it; first removes the leftovers of earlier runs in that
    /// folder that no live process holds (a run that was killed leaves its files, possibly plaintext, behind).
    static func createTemporary(near path: String, mode: mode_t) throws(SQLCipherError) -> TemporaryFile {
        try requireFileName(path)
        removeLeftovers(inFolderOf: path)
        // Someone who can write to the folder can swap a new private folder before it is opened; that attempt is
        // refused, and a few more are made before giving up.
        for _ in 0..<3 {
            do throws(SQLCipherError) {
                return try createPrivateFolder(near: path, mode: mode)
            } catch where error.kind == .cannotOpen && error.message.contains("was replaced") {
                continue
            }
        }
        return try createPrivateFolder(near: path, mode: mode)
    }

    /// One attempt of ``createTemporary(near:mode:)``.
    private static func createPrivateFolder(near path: String, mode: mode_t) throws(SQLCipherError) -> TemporaryFile {
        let (folder, name) = split(path)
        let targetFolder = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard targetFolder >= 0 else {
            throw .api(.cannotOpen, "cannot open the folder of '\(path)': \(errnoText())", path: path)
        }
        // The target's name, shortened so that the folder's name fits NAME_MAX (255 bytes) with the marker.
        var prefix = Substring(name)
        while prefix.utf8.count > 200 { prefix = prefix.dropLast() }
        var template = Array((folder + "/" + prefix + folderMarker + "XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            let reason = errnoText()
            close(targetFolder)
            throw .api(errno == ENOSPC ? .full : .cannotOpen,
                       "cannot create a private folder beside '\(path)': \(reason)", path: path)
        }
        let folderPath = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let folderName = (folderPath as NSString).lastPathComponent
        // Held at once; mkdtemp made it 0700, so only this user (and root) can put anything in it from now on.
        let privateFolder = openat(targetFolder, folderName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        var held = stat()
        guard privateFolder >= 0, fstat(privateFolder, &held) == 0, held.st_uid == geteuid(),
              held.st_mode & 0o077 == 0, flock(privateFolder, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errnoText()
            if privateFolder >= 0 { close(privateFolder) }
            close(targetFolder)
            throw .api(.cannotOpen, "the private folder made beside '\(path)' was replaced before it could be "
                + "opened (\(reason)): someone else can write to that folder; write to a folder only you can write "
                + "to", path: path)
        }
        let marker = openat(privateFolder, TemporaryFile.markerName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                            0o600)
        if marker >= 0 { close(marker) }
        let file = marker < 0 ? -1 : openat(privateFolder, TemporaryFile.fileName,
                                            O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard file >= 0 else {
            let reason = errnoText()
            let full = errno == ENOSPC
            emptyPrivateFolder(privateFolder)
            unlinkat(targetFolder, folderName, AT_REMOVEDIR)
            close(privateFolder)
            close(targetFolder)
            throw .api(full ? .full : .cannotOpen, "cannot create a file beside '\(path)': \(reason)", path: path)
        }
        // The path SQLite opens: through the held descriptor, so that no rename can redirect it. Without /proc there
        // is no such path, and a path by name could be redirected (to a file of someone else's, which would get the
        // engine's writes): refused.
        let pinned = "/proc/self/fd/\(privateFolder)"
        var viaProc = stat()
        guard stat(pinned, &viaProc) == 0, TemporaryFile.sameFile(viaProc, held) else {
            let temporary = TemporaryFile(path: folderPath + "/" + TemporaryFile.fileName,
                                          folderDescriptor: privateFolder, fileDescriptor: file,
                                          targetFolderDescriptor: targetFolder, folderName: folderName)
            withExtendedLifetime(temporary) {}
            throw .api(.cannotOpen, "SQLCipherKit writes a new file only through a folder descriptor it holds "
                + "(/proc/self/fd), and /proc is not mounted here: mount /proc (every container and systemd "
                + "unit has it; ProtectProc= and ProcSubset=pid keep /proc/self)", path: path)
        }
        return TemporaryFile(path: pinned + "/" + TemporaryFile.fileName, folderDescriptor: privateFolder,
                             fileDescriptor: file, targetFolderDescriptor: targetFolder, folderName: folderName)
    }

    /// Removes every leftover of an earlier run in the folder of `path`, for any target: a private folder
    /// (`NAME.sqlcipherkit-XXXXXX`) or an older run's temporary file (`NAME.sqlcipherkit-XXXXXXXX.tmp` and its
    /// journals) that this user owns and no live process holds locked. Nothing here blocks or follows a link:
    /// every entry is opened with `O_NONBLOCK | O_NOFOLLOW` and handled only if it is a folder or regular file of
    /// this user's (a FIFO planted under such a name is left alone).
    static func removeLeftovers(inFolderOf path: String) {
        let folder = split(path).folder
        let parent = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard parent >= 0 else { return }
        defer { close(parent) }
        for name in entries(of: parent) where name.contains(folderMarker) {
            let descriptor = openat(parent, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            var status = stat()
            guard fstat(descriptor, &status) == 0, status.st_uid == geteuid() else { continue }
            let isFolder = status.st_mode & S_IFMT == S_IFDIR
            guard isFolder || (status.st_mode & S_IFMT == S_IFREG && name.hasSuffix(".tmp")) else { continue }
            // A folder only if the library made it (its marker inside); see TemporaryFile.markerName.
            var marker = stat()
            if isFolder {
                guard fstatat(descriptor, TemporaryFile.markerName, &marker, AT_SYMLINK_NOFOLLOW) == 0,
                      marker.st_mode & S_IFMT == S_IFREG, marker.st_uid == geteuid() else { continue }
            }
            // A live run holds its lock: leave its files alone.
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { continue }
            var named = stat()
            guard fstatat(parent, name, &named, AT_SYMLINK_NOFOLLOW) == 0, TemporaryFile.sameFile(named, status) else {
                continue
            }
            if isFolder {
                emptyPrivateFolder(descriptor)
                unlinkat(parent, name, AT_REMOVEDIR)
            } else {
                unlinkat(parent, name, 0)
                // Its journals too, but only regular files of this user's (never a link or someone else's file).
                for suffix in ["-journal", "-wal", "-shm"] {
                    var side = stat()
                    if fstatat(parent, name + suffix, &side, AT_SYMLINK_NOFOLLOW) == 0, side.st_uid == geteuid(),
                       side.st_mode & S_IFMT == S_IFREG {
                        unlinkat(parent, name + suffix, 0)
                    }
                }
            }
        }
    }

    /// The names in the folder `descriptor` is open on (without `.` and `..`).
    static func entries(of descriptor: Int32) -> [String] {
        let copy = dup(descriptor)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return []
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes the regular files this user owns from the private folder `descriptor` is open on.
    static func emptyPrivateFolder(_ descriptor: Int32) {
        for name in entries(of: descriptor) {
            var status = stat()
            guard fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0, status.st_uid == geteuid(),
                  status.st_mode & S_IFMT == S_IFREG else { continue }
            unlinkat(descriptor, name, 0)
        }
    }

    /// Where the folder `descriptor` is open on is now, as /proc tells it (nil without /proc).
    static func currentPath(of descriptor: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
        guard count > 0, buffer[0] == CChar(UInt8(ascii: "/")) else { return nil }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    #if DEBUG
    /// Test hooks (debug builds only), by target path: the hook of a path runs right before a finished temporary
    /// file is renamed to it; a throw there stands for any failure at the last moment. One per path, so that tests
    /// running at the same time cannot replace each other's hook.
    static let beforeRename = Mutex<[String: @Sendable (String) throws(SQLCipherError) -> Void]>([:])
    #endif

    /// Renames the finished `temporary` to `path` (replacing it, or only where nothing is, with `replacing` false),
    /// from the held private folder into the held folder of `path`, after checking that the name in the private
    /// folder is still the file it created; then syncs that folder so the rename is durable. On failure `path` is
    /// untouched (and `temporary` is removed when it is dropped).
    static func move(_ temporary: TemporaryFile, to path: String, replacing: Bool = true) throws(SQLCipherError) {
        let name = split(path).name
        #if DEBUG
        if let hook = beforeRename.withLock({ $0[path] }) { try hook(path) }
        #endif
        var created = stat(), named = stat()
        guard fstat(temporary.fileDescriptor, &created) == 0,
              fstatat(temporary.folderDescriptor, TemporaryFile.fileName, &named, AT_SYMLINK_NOFOLLOW) == 0,
              TemporaryFile.sameFile(created, named) else {
            throw .api(.ioError, "the new file was replaced in its private folder before it could be renamed into "
                + "place: nothing was written to '\(path)'", path: path)
        }
        if replacing {
            guard renameat(temporary.folderDescriptor, TemporaryFile.fileName,
                           temporary.targetFolderDescriptor, name) == 0 else {
                throw .api(errno == ENOSPC ? .full : .ioError,
                           "cannot rename the new file into place: \(errnoText())", path: path)
            }
        } else {
            // linkat() fails if the target exists: a file that appeared since the check is never replaced.
            guard linkat(temporary.folderDescriptor, TemporaryFile.fileName,
                         temporary.targetFolderDescriptor, name, 0) == 0 else {
                let exists = errno == EEXIST
                throw SQLCipherError.api(exists ? .invalidArgument : .ioError,
                                         exists ? "'\(path)' already exists (a file or a link): it is replaced "
                                            + "only when asked to (replacing: true; --force)"
                                            : "cannot link the new file into place: \(errnoText())", path: path)
            }
            unlinkat(temporary.folderDescriptor, TemporaryFile.fileName, 0)
        }
        guard fsync(temporary.targetFolderDescriptor) == 0 else {
            throw .api(.ioError, "cannot sync the folder of '\(path)' after renaming the new file into it: "
                + "\(errnoText())", path: path)
        }
    }

    /// Flushes the new file's data to the disk (through the descriptor that created it: the same file SQLite
    /// wrote).
    static func sync(_ temporary: TemporaryFile) throws(SQLCipherError) {
        guard fsync(temporary.fileDescriptor) == 0 else {
            throw .api(errno == ENOSPC ? .full : .ioError, "cannot sync the new file: \(errnoText())",
                       path: temporary.path)
        }
    }

    /// Copies the bytes of the file at `path` into the new, empty file of `temporary`; returns the source's status
    /// as it was read (to see later whether anyone wrote to it meanwhile).
    static func copyContents(of path: String, into temporary: TemporaryFile) throws(SQLCipherError) -> stat {
        let source = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard source >= 0 else {
            throw .api(.cannotOpen, "cannot open '\(path)' to copy it: \(errnoText())", path: path)
        }
        defer { close(source) }
        var status = stat()
        guard fstat(source, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw .api(.cannotOpen, "'\(path)' is not a regular file", path: path)
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw .api(.ioError, "cannot read '\(path)': \(errnoText())", path: path) }
            if got == 0 { break }
            var written = 0
            while written < got {
                let put = buffer.withUnsafeBytes { write(temporary.fileDescriptor, $0.baseAddress! + written, got - written) }
                if put < 0 && errno == EINTR { continue }
                guard put > 0 else {
                    throw .api(errno == ENOSPC ? .full : .ioError, "cannot copy '\(path)': \(errnoText())", path: path)
                }
                written += put
            }
        }
        return status
    }

    /// After the engine renamed a file of its own over the new file inside the private folder (cipher_migrate
    /// does), takes that file as the one ``move(_:to:replacing:)`` renames into place. The folder is private
    /// (0700, this user's), so the name can only hold what this process put there; the file must still be a
    /// regular file of this user's.
    static func adoptRenamedFile(_ temporary: TemporaryFile) throws(SQLCipherError) {
        let descriptor = openat(temporary.folderDescriptor, TemporaryFile.fileName,
                                O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        var status = stat()
        guard descriptor >= 0, fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
              status.st_uid == geteuid() else {
            if descriptor >= 0 { close(descriptor) }
            throw .api(.ioError, "the migrated file is missing from its private folder", path: temporary.path)
        }
        temporary.adopt(descriptor)
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
