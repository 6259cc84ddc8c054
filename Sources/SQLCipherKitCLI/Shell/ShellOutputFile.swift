#if canImport(Glibc)
import Glibc
#endif

/// The file `.output FILE` sends rows to.
enum ShellOutputFile {
    /// Opens `path` for writing: a new file is created with mode 600 (`O_EXCL`: never through a link someone
    /// planted); an existing one is truncated only when it is a regular file of this user's, closed to group and
    /// others and with no other name (a process that opened it while it was readable would read the rows
    /// through its descriptor), opened without following a symbolic link and without blocking on a FIFO.
    ///
    /// - Throws: ``CommandFailure`` naming the reason, when the file cannot be used.
    static func open(_ path: String) throws -> OutputWriter {
        var descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if descriptor < 0 && errno == EEXIST {
            descriptor = Glibc.open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else { throw failure(path) }
            var status = stat()
            guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
                  status.st_uid == geteuid() else {
                close(descriptor)
                throw CommandFailure(message: "\(path) exists and is not a regular file of yours: choose another "
                    + "name for .output", status: .failure)
            }
            guard status.st_mode & 0o077 == 0, status.st_nlink == 1 else {
                close(descriptor)
                throw CommandFailure(message: "\(path) exists and others can read it (mode "
                    + "\(String(status.st_mode & 0o777, radix: 8)), or it has another name): remove it or choose "
                    + "another name for .output, which writes a new file of mode 600", status: .failure)
            }
            let flags = fcntl(descriptor, F_GETFL)
            guard ftruncate(descriptor, 0) == 0, fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) == 0 else {
                let error = failure(path)
                close(descriptor)
                throw error
            }
        }
        guard descriptor >= 0 else { throw failure(path) }
        return OutputWriter(descriptor: descriptor, ownsDescriptor: true)
    }

    private static func failure(_ path: String) -> CommandFailure {
        let reason = errno == ELOOP ? "it is a symbolic link" : String(cString: strerror(errno))
        return CommandFailure(message: "cannot write to \(path) (\(reason)): choose another file for .output",
                              status: .failure)
    }
}
