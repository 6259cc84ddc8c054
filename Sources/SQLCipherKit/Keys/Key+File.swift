import Glibc

extension Key {
    /// Reads a key from a file that only this process's user can access, as OpenSSH reads a private key.
    ///
    /// ```swift
    /// let key = try Key.fromFile("/etc/app/db-key", format: .rawHex)
    /// ```
    ///
    /// The file is opened first and then checked through the open descriptor (no window in which it could be
    /// swapped): it must be a regular file on a real file system (not procfs or sysfs; a symbolic link to one is
    /// followed only when no other user could have replaced the link), owned by the user this process
    /// runs as, and give its group and others no access at all (mode `0600` or `0400`). Its bytes are read
    /// into memory that is wiped afterwards and never become a `String`.
    ///
    /// - Parameters:
    ///   - path: The key file.
    ///   - format: How to read its bytes: ``KeyFileFormat/passphrase`` or ``KeyFileFormat/rawHex``.
    /// - Throws: ``KeySourceError``: ``KeySourceError/Kind/notFound``, ``KeySourceError/Kind/unreadable``,
    ///   ``KeySourceError/Kind/notAFile``, ``KeySourceError/Kind/foreignOwner`` (naming the `chown` that fixes
    ///   it), ``KeySourceError/Kind/unprotected`` (naming the `chmod`), ``KeySourceError/Kind/tooLarge`` or
    ///   ``KeySourceError/Kind/invalidKey``. No message holds a byte of the file.
    public static func fromFile(_ path: String, format: KeyFileFormat) throws(KeySourceError) -> Key {
        let what = "the key file '\(path)'"
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            // Not found: the path is not repeated, since an operator may have typed the key itself where its
            // file's path belongs.
            throw KeySourceError(kind: code == ENOENT ? .notFound : .unreadable, source: path,
                                 message: code == ENOENT ? "no such key file (nothing at the path given): give the "
                                    + "path of the file that holds the key, never the key itself"
                                    : "cannot open the key file at the path given (\(KeyReading.errnoText(code))); the "
                                    + "user this process runs as (uid \(geteuid())) must be able to read it")
        }
        defer { close(descriptor) }
        let status = try KeyFileCheck.regularFileStatus(descriptor, source: path, what: what)
        try KeyPathSafety.requireSafeLinks(path, opened: status, source: path, what: what)
        let user = geteuid()
        guard status.st_uid == user else {
            throw KeySourceError(kind: .foreignOwner, source: path,
                                 message: "\(what) belongs to uid \(status.st_uid), not to uid \(user) that this "
                                    + "process runs as, so that user could change the key: run "
                                    + "`chown \(user) \(KeyFileCheck.shellQuoted(path))` (as root), or keep the key "
                                    + "in a file of this user's own")
        }
        let access = status.st_mode & 0o077
        guard access == 0 else {
            throw KeySourceError(kind: .unprotected, source: path,
                                 message: "\(what) is open to other users (mode "
                                    + "\(KeyFileCheck.octal(status.st_mode & 0o777)): "
                                    + "\(KeyFileCheck.describe(access))): run `chmod go-rwx "
                                    + "\(KeyFileCheck.shellQuoted(path))` (for a mounted secret, give it mode 0400 "
                                    + "in the mount); a key file must be readable by its owner only")
        }
        return try KeyReading.key(readingToEnd: descriptor, format: format, source: path, what: what)
    }
}

/// The checks on a key file's status that ``Key/fromFile(_:format:)`` and ``Key/fromCredential(_:format:)``
/// share, and the words of their messages.
enum KeyFileCheck {
    /// The status of the open file `descriptor` (fstat: what was opened, not a path looked up again), which must
    /// be a regular file on a real file system (not procfs, sysfs…: ``KeyPathSafety``).
    static func regularFileStatus(_ descriptor: Int32, source: String, what: String) throws(KeySourceError) -> stat {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw KeySourceError(kind: .unreadable, source: source,
                                 message: "cannot inspect \(what): \(KeyReading.errnoText())")
        }
        try requireRegularFile(status, source: source, what: what)
        try KeyPathSafety.requireRealFileSystem(descriptor, source: source, what: what)
        return status
    }

    /// Throws ``KeySourceError/Kind/notAFile`` unless `status` is a regular file's.
    static func requireRegularFile(_ status: stat, source: String, what: String) throws(KeySourceError) {
        let type = status.st_mode & S_IFMT
        guard type == S_IFREG else {
            let name = switch type {
            case S_IFDIR: "a directory"
            case S_IFIFO: "a FIFO"
            case S_IFSOCK: "a socket"
            case S_IFCHR, S_IFBLK: "a device"
            default: "not a regular file"
            }
            throw KeySourceError(kind: .notAFile, source: source,
                                 message: "\(what) is \(name), not a regular file: give the path of the file that "
                                    + "holds the key")
        }
    }

    /// `0644`.
    static func octal(_ mode: mode_t) -> String {
        "0" + String(mode, radix: 8)
    }

    /// Who may do what, from the group and other bits of a mode: "group: read; others: read, write".
    static func describe(_ bits: mode_t) -> String {
        func rights(_ triple: mode_t) -> String {
            [(mode_t(4), "read"), (2, "write"), (1, "execute")].filter { triple & $0.0 != 0 }.map(\.1)
                .joined(separator: ", ")
        }
        return [("group", (bits >> 3) & 7), ("others", bits & 7)].filter { $0.1 != 0 }
            .map { "\($0.0): \(rights($0.1))" }.joined(separator: "; ")
    }

    /// `path` quoted for a POSIX shell, for a command the message suggests.
    static func shellQuoted(_ path: String) -> String {
        path.quoted(by: "'", escapingAs: "'\\''")
    }
}
