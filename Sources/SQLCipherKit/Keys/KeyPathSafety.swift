import CSQLCipher
import Glibc

/// Where a key file or a credentials directory may be: on a real file system, and reached through no symbolic link
/// that anyone but this user or root could replace.
///
/// Both checks close the same hole (issue 44): `/proc/self/personality` is a regular file, mode 0400, owned by the
/// caller, that reads `00000000\n`; a link to it planted where someone else can write (or
/// `CREDENTIALS_DIRECTORY=/proc/self`) passed every other check, and gave a key that someone else knows.
enum KeyPathSafety {
    /// File systems whose files the kernel writes (`statfs.f_type`, from `linux/magic.h`): what they hold is no
    /// secret, and not a key anyone chose.
    static let pseudoFileSystems: [Int: String] = [
        0x9fa0: "procfs", 0x6265_6572: "sysfs", 0x6462_6720: "debugfs", 0x7472_6163: "tracefs",
        0x7363_6673: "securityfs", 0x0027_e0eb: "cgroup", 0x6367_7270: "cgroup2", 0xcafe_4a11: "bpf",
        0x6265_6570: "configfs", 0xde5e_81e4: "efivarfs", 0x6165_676c: "pstore", 0xf97c_ff8c: "selinuxfs",
        0x4249_4e4d: "binfmt_misc", 0x6573_5543: "fusectl", 0x1cd1: "devpts", 0x6e73_6673: "nsfs",
        0x6759_6969: "rpc_pipefs",
    ]

    /// Throws ``KeySourceError/Kind/notAFile`` when the open `descriptor` is on a pseudo file system.
    static func requireRealFileSystem(_ descriptor: Int32, source: String, what: String) throws(KeySourceError) {
        let type = sqlcipherkit_file_system_type(descriptor)
        guard type != -1 else {
            throw KeySourceError(kind: .unreadable, source: source,
                                 message: "cannot inspect the file system of \(what): \(KeyReading.errnoText())")
        }
        if let name = pseudoFileSystems[type] {
            throw KeySourceError(kind: .notAFile, source: source,
                                 message: "\(what) is on \(name), a pseudo file system whose files the kernel "
                                    + "writes (what they hold is no secret): keep the key in a regular file")
        }
    }

    /// Whether `uid` is one a key's path may trust: this process's user, or root.
    static func trusted(_ uid: uid_t) -> Bool { uid == geteuid() || uid == 0 }

    /// Follows `path` component by component, as the kernel would, and throws ``KeySourceError/Kind/unprotected``
    /// at the first symbolic link that another user could replace: one owned by another user than this one or
    /// root, or in a folder that such a user owns or that group or others can write (unless it is sticky).
    /// Then requires the path to lead where `opened` (the status of the descriptor already open on it) is, so
    /// that a swap between the open and this walk is seen too.
    static func requireSafeLinks(_ path: String, opened: stat, source: String, what: String) throws(KeySourceError) {
        var pending = Array(path.split(separator: "/", omittingEmptySubsequences: true).map(String.init).reversed())
        var current = "/"
        if !path.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            guard getcwd(&buffer, buffer.count) != nil else {
                throw KeySourceError(kind: .unreadable, source: source,
                                     message: "cannot find the current folder to resolve \(what): "
                                        + KeyReading.errnoText())
            }
            current = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        var links = 0
        while let component = pending.popLast() {
            if component == "." { continue }
            if component == ".." {
                current = parent(of: current)
                continue
            }
            let candidate = current == "/" ? "/" + component : current + "/" + component
            var status = stat()
            guard lstat(candidate, &status) == 0 else { break }
            guard status.st_mode & S_IFMT == S_IFLNK else {
                current = candidate
                continue
            }
            links += 1
            var folder = stat()
            let folderKnown = lstat(current, &folder) == 0
            let folderSafe = folderKnown && trusted(folder.st_uid)
                && (folder.st_mode & 0o022 == 0 || folder.st_mode & S_ISVTX != 0)
            guard links <= 40, trusted(status.st_uid), folderSafe else {
                let who = !trusted(status.st_uid) ? "the link belongs to uid \(status.st_uid)"
                    : folderKnown && !trusted(folder.st_uid) ? "its folder \(current) belongs to uid \(folder.st_uid)"
                    : "its folder \(current) can be written by others (mode \(KeyFileCheck.octal(folder.st_mode & 0o7777)))"
                throw KeySourceError(kind: .unprotected, source: source,
                                     message: "\(what) is reached through the symbolic link \(candidate), which "
                                        + "someone else could point at another file (\(who)): give the path of the "
                                        + "file itself, or keep the link in a folder that only you can write")
            }
            var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(candidate, &target, target.count - 1)
            guard count > 0 else { break }
            let text = String(decoding: target.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("/") { current = "/" }
            pending.append(contentsOf: text.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
                .reversed())
        }
        var reached = stat()
        guard stat(path, &reached) == 0, reached.st_dev == opened.st_dev, reached.st_ino == opened.st_ino else {
            throw KeySourceError(kind: .unprotected, source: source,
                                 message: "\(what) was replaced while it was being read: someone else can change "
                                    + "the path; keep the key in a folder that only you can write")
        }
    }

    /// The folder holding `path` ("/" for "/").
    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}
