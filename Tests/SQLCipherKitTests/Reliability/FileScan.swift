import Foundation

/// Reads every file a scan for plaintext must look at — the files under a folder and the regular files a process
/// holds open, unlinked ones included — without ever releasing a lock of this process.
///
/// POSIX advisory locks belong to a process and an inode, not to a descriptor: closing *any* descriptor on a
/// file drops every lock the process holds on it, SQLite's included
/// ([How To Corrupt An SQLite Database File, 2.2](https://sqlite.org/howtocorrupt.html#posix_advisory_locks_canceled_by_a_separate_thread_doing_close_)).
/// A scan that opened and closed this process's own database files (through `/proc/self/fd` or by path) while
/// another test had a connection open on them took that connection's shared lock away. A second process's
/// reader then believed itself the last connection, checkpointed and deleted the write-ahead log on close, and
/// the connection's next commits went to the unlinked log, where no other process saw them: SystemdExampleTests'
/// rotation test saw backups without the last row, in CI, when the scan ran beside it.
///
/// So a file this process holds open is read with `pread` on a descriptor it already has, and only a file it does
/// not hold open (by a listing of its descriptors made just before) is opened by path (and closed). Files under the
/// scanned folder belong to the test that scans them, which opens nothing while it scans. Files in folders other
/// tests share (the top of TMPDIR) are searched by a child process (``filesContaining(_:in:)``), whose closes drop
/// none of this process's locks. A scan of another process reads its descriptors through `/proc/PID/fd`: closing
/// a descriptor here drops no lock of the other process.
enum FileScan {
    /// A listed file that could not be read: the scan fails, naming it.
    struct UnreadableFile: Error, CustomStringConvertible {
        let description: String
    }

    enum FileRead {
        case contents(Data)
        /// A directory, socket, pipe, device or anonymous inode: nothing stored to scan.
        case notRegular
        /// `operation` ("examine", "open", "read") failed with errno `code`.
        case failed(operation: String, code: Int32)
    }

    /// A file's identity: its device and inode.
    struct FileID: Hashable {
        let device: UInt64, inode: UInt64
        init(_ info: stat) { device = UInt64(info.st_dev); inode = UInt64(info.st_ino) }
    }

    /// The contents of every regular file under `folder` and of every regular file process `pid` has open.
    ///
    /// A listed file that cannot be examined or read throws ``UnreadableFile`` with its name: a file left unread
    /// is a file left unscanned. The one race allowed is that of a scan of this process itself, where other tests
    /// run beside it: a descriptor closed between listing and reading is skipped (it is gone, and with it what
    /// could be read through it). Anything else that vanishes fails too: a paused child's descriptor table does not
    /// change, and nothing else writes in either caller's folder while it is scanned, so a file gone there means
    /// the scan did not see what it was meant to see.
    static func files(under folder: String, openIn pid: Int32) throws -> [(String, Data)] {
        var found: [(String, Data)] = []
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: folder])
        }
        let openHere = try OpenFiles()
        for case let name as String in enumerator {
            let path = folder + "/" + name
            switch openHere.read(path) {
            case .contents(let contents): found.append((path, contents))
            case .notRegular: continue
            case .failed(let operation, let code):
                throw UnreadableFile(description: "cannot \(operation) \(path): \(String(cString: strerror(code)))")
            }
        }
        let scanningItself = pid == getpid()
        let descriptors = "/proc/\(pid)/fd"
        // The child is paused, so its descriptor table must be readable: a failure here fails the test.
        for name in try FileManager.default.contentsOfDirectory(atPath: descriptors) {
            let link = descriptors + "/" + name
            let contents: Data
            // This process's own: through the descriptor itself. Another's: reading /proc/PID/fd/N opens the
            // file itself, even after it was unlinked.
            switch scanningItself ? openHere.read(descriptor: Int32(name) ?? -1) : readRegularFile(link) {
            case .contents(let data): contents = data
            case .notRegular: continue
            case .failed(_, let code) where scanningItself && (code == ENOENT || code == EBADF): continue  // closed meanwhile
            case .failed(let operation, let code):
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) ?? "(unknown)"
                throw UnreadableFile(description: "cannot \(operation) the open file \(target) (\(link)): "
                                     + String(cString: strerror(code)))
            }
            let target: String
            do {
                target = try FileManager.default.destinationOfSymbolicLink(atPath: link)
            } catch let error as CocoaError where error.code == .fileNoSuchFile || error.code == .fileReadNoSuchFile {
                // Closed since it was read: only a scan of this process itself sees that. Its contents were
                // read and are kept.
                guard scanningItself else { throw error }
                target = "(closed meanwhile) " + link
            }
            found.append(("open file \(target)", contents))
        }
        return found
    }

    /// The regular files this process holds open when it is made, each with the descriptors it can read through.
    ///
    /// A write-only (or `O_PATH`) descriptor is never read: SQLite opens none so, and reading its file would mean
    /// opening it again, whose close drops any lock this process holds on it.
    struct OpenFiles {
        private var readable: [FileID: [Int32]] = [:]

        init() throws {
            for name in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
                guard let descriptor = Int32(name) else { continue }
                var info = stat()
                guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
                      Self.isReadable(descriptor) else { continue }
                readable[FileID(info), default: []].append(descriptor)
            }
        }

        static func isReadable(_ descriptor: Int32) -> Bool {
            let flags = fcntl(descriptor, F_GETFL)
            return flags >= 0 && flags & O_ACCMODE != O_WRONLY && flags & Self.pathOnly == 0
        }

        /// Linux's `O_PATH` (the same on x86_64 and aarch64), which Glibc's module does not export.
        static let pathOnly: Int32 = 0o10000000

        /// The contents of file `id` through one of the descriptors listed for it that still names it; nil when
        /// none does (closed, or its number reused, since the listing).
        private func readOpen(_ id: FileID) -> FileRead? {
            for descriptor in readable[id] ?? [] {
                var now = stat()
                guard fstat(descriptor, &now) == 0, FileID(now) == id else { continue }
                let result = FileScan.readAll(descriptor)
                if case .failed(_, let code) = result, Self.changedUnderfoot.contains(code) { continue }
                return result
            }
            return nil
        }

        /// The whole of `path` if it is a regular file: through a descriptor of this process when it has the file
        /// open (so that no close drops its locks), by opening the path only when a listing made just now finds it
        /// open nowhere in this process.
        func read(_ path: String) -> FileRead {
            var info = stat()
            guard stat(path, &info) == 0 else { return .failed(operation: "examine", code: errno) }
            guard (info.st_mode & S_IFMT) == S_IFREG else { return .notRegular }
            let id = FileID(info)
            if let result = readOpen(id) { return result }
            // Not open here when this listing was made: list again, just before the open (another test may have
            // opened it since).
            guard let now = try? OpenFiles() else { return .failed(operation: "list the descriptors of", code: EIO) }
            if let result = now.readOpen(id) { return result }
            if now.readable[id] == nil, !now.isOpenWriteOnly(id) { return FileScan.readRegularFile(path) }
            return .notRegular
        }

        /// Whether a descriptor of this process that cannot be read names file `id` (listed again now).
        private func isOpenWriteOnly(_ id: FileID) -> Bool {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return names.contains { name in
                var info = stat()
                guard let descriptor = Int32(name), fstat(descriptor, &info) == 0 else { return false }
                return FileID(info) == id
            }
        }

        /// The whole of this process's open descriptor `descriptor` if it is a regular file it can read through.
        ///
        /// Other tests open and close files meanwhile: a read that fails because the number now names another file
        /// (or none) is reported as `EBADF`, a descriptor closed meanwhile. A write-only descriptor is skipped.
        func read(descriptor: Int32) -> FileRead {
            var info = stat()
            guard descriptor >= 0, fstat(descriptor, &info) == 0 else { return .failed(operation: "examine", code: EBADF) }
            guard (info.st_mode & S_IFMT) == S_IFREG, Self.isReadable(descriptor) else { return .notRegular }
            let result = FileScan.readAll(descriptor)
            guard case .failed(_, let code) = result else { return result }
            // A regular file this process reads through its own descriptor fails only when the number named something
            // else by the time of the read, even if it names the same file again now (closed, reused by a folder,
            // reopened: seen under the sanitizers): closed meanwhile. Any other error is the file's own.
            return Self.changedUnderfoot.contains(code) ? .failed(operation: "read", code: EBADF) : result
        }

        /// What `pread` answers on a descriptor that no longer names the regular file it named: closed (`EBADF`),
        /// now a folder (`EISDIR`), something that cannot be read at an offset (`ESPIPE`, `EINVAL`, `ENXIO`).
        static let changedUnderfoot: Set<Int32> = [EBADF, EISDIR, ESPIPE, EINVAL, ENXIO]
    }

    /// The whole of `path` if it is a regular file (following symbolic links, /proc's descriptor links included),
    /// opened and closed: only for a file this process does not hold open (see ``FileScan``).
    static func readRegularFile(_ path: String) -> FileRead {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failed(operation: "examine", code: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .notRegular }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failed(operation: "open", code: errno) }
        defer { close(descriptor) }
        return readAll(descriptor)
    }

    /// Everything in `descriptor` from offset 0, with `pread`: its offset, which its owner may be using, stays.
    static func readAll(_ descriptor: Int32) -> FileRead {
        var contents = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let offset = off_t(contents.count)
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
            if count == 0 { return .contents(contents) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failed(operation: "read", code: errno)
            }
            contents.append(contentsOf: buffer[0..<count])
        }
    }

    /// Which of `paths` hold `marker`, searched by a child process (`grep`): for files in folders other tests share,
    /// which this process must not open (a close would drop the locks another test's connection holds on them).
    static func filesContaining(_ marker: String, in paths: [String]) throws -> [String] {
        guard !paths.isEmpty else { return [] }
        let grep = Process()
        grep.executableURL = URL(fileURLWithPath: "/bin/grep")
        // -l: names only; -s: a file gone meanwhile is no error message; -F -a: the marker as bytes, in any file.
        grep.arguments = ["-l", "-s", "-F", "-a", "-e", marker, "--"] + paths
        let output = Pipe()
        grep.standardOutput = output
        try grep.run()
        let names = output.fileHandleForReading.readDataToEndOfFile()
        grep.waitUntilExit()
        // 0: found, 1: none, 2: a file could not be read (gone since it was listed): what was read still counts.
        guard [0, 1, 2].contains(grep.terminationStatus) else {
            throw UnreadableFile(description: "grep ended with status \(grep.terminationStatus)")
        }
        return String(decoding: names, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
