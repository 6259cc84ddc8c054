import Foundation
import SQLCipherKit

#if canImport(Glibc)
import Glibc
#endif

/// The shell's history: the lines typed at the prompt, kept in memory for Up/Down and in a private file for
/// the next session.
///
/// The file is `$SQLCIPHERKIT_HISTORY`, or `~/.sqlcipherkit_history` (an empty `SQLCIPHERKIT_HISTORY` keeps
/// history in memory only). It is opened once, with `O_NOFOLLOW` (never through a symbolic link) and
/// `O_NONBLOCK` (a FIFO planted there cannot hang the shell), created with mode 600, and used only when it is
/// a regular file owned by this user that group and others cannot access; otherwise the shell says so once
/// and keeps history in memory. Each line is appended as it is recorded (a killed shell keeps what was
/// typed); the newest ``limit`` lines are kept. What is recorded is up to ``HistoryFilter``.
final class ShellHistory {
    /// The most lines kept, in memory and in the file.
    static let limit = 1000

    /// The lines recorded, oldest first.
    private(set) var entries: [String] = []
    private let filter: HistoryFilter
    /// The open file, -1 for history in memory only.
    private var descriptor: Int32 = -1

    /// The file's path for this environment, nil for none.
    static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let path = environment["SQLCIPHERKIT_HISTORY"] { return path.isEmpty ? nil : path }
        if let home = environment["HOME"], !home.isEmpty { return home + "/.sqlcipherkit_history" }
        guard let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory) + "/.sqlcipherkit_history"
    }

    /// History in memory only.
    init(filter: HistoryFilter) {
        self.filter = filter
    }

    /// History kept in the file at `path` (nil: in memory only); `warn` hears, once, why the file is not used.
    init(path: String?, filter: HistoryFilter, warn: (String) -> Void) {
        self.filter = filter
        guard let path else { return }
        let opened = open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard opened >= 0 else {
            let reason = errno == ELOOP ? "it is a symbolic link" : String(cString: strerror(errno))
            warn("the history file \(path) cannot be used (\(reason)): history is kept in memory only; "
                + "set SQLCIPHERKIT_HISTORY to another file")
            return
        }
        var status = stat()
        guard fstat(opened, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == geteuid(),
              status.st_mode & 0o077 == 0 else {
            close(opened)
            warn("the history file \(path) is not a private file of yours (a regular file owned by you, mode "
                + "600): history is kept in memory only; fix it with chmod 600 or remove it")
            return
        }
        descriptor = opened
        load()
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Whether `entry` may be recorded (see ``HistoryFilter``).
    func allows(_ entry: String) -> Bool { filter.allows(entry) }

    /// Records `line` (unless it is blank or repeats the last one), in memory and in the file.
    func add(_ line: String) {
        guard !line.trimmingCharacters(in: .whitespaces).isEmpty, entries.last != line else { return }
        entries.append(line)
        if entries.count > Self.limit { entries.removeFirst(entries.count - Self.limit) }
        append(line + "\n")
    }

    /// Reads the file's lines, drops those the filter refuses (an older file, or one written by another
    /// tool), keeps the newest ``limit``, and rewrites the file when that changed it.
    private func load() {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = pread(descriptor, &chunk, chunk.count, off_t(data.count))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            data.append(contentsOf: chunk[..<count])
        }
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
            .map { String(decoding: $0, as: UTF8.self) }
        let kept = lines.filter(filter.allows).suffix(Self.limit)
        entries = Array(kept)
        KeyMemory.wipe(&data)
        if kept.count != lines.count {
            guard ftruncate(descriptor, 0) == 0 else { return }
            append(entries.map { $0 + "\n" }.joined())
        }
    }

    /// Appends `text` to the file; on a failure, stops using the file (history stays in memory).
    private func append(_ text: String) {
        guard descriptor >= 0 else { return }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard written > 0 else {
                close(descriptor)
                descriptor = -1
                return
            }
            offset += written
        }
    }
}
