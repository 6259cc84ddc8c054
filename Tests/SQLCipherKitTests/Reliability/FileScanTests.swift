import Foundation
import ProcessTestSupport
import SQLCipherKit
import Testing

/// The plaintext scans (``FileScan``) read this process's own open files while other tests' connections are open
/// on them: they must leave SQLite's POSIX locks where they were.
@Suite("FileScan: a scan of this process keeps its locks")
struct FileScanTests {
    @Test("a scan of this process's open files and of a folder holding an open database leaves its locks; closing a descriptor of its own drops them (control)")
    func keepsLocks() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("live.db")
        let db = try Database(path: path, key: try Key.rawKey(hex: Array(randomKeyHex().utf8)))
        _ = try db.setJournalMode(.wal)
        try db.execute("CREATE TABLE t(x)")
        try db.execute("INSERT INTO t VALUES (1)")
        // A connection in WAL mode holds a shared lock on the database and one on its -shm between transactions.
        let held = try Self.locks(on: [path, path + "-shm"])
        try #require(Set(held.map(\.file)) == [path, path + "-shm"], "this process's locks: \(held)")

        // Every open file of this process (the database, its -wal and -shm among them) and the folder, by path.
        let scanned = try FileScan.files(under: folder.path, openIn: getpid())
        #expect(scanned.contains { $0.0 == path }, "the folder's database was not read")
        #expect(scanned.contains { $0.0 == "open file " + path + "-wal" }, "the open -wal was not read")
        #expect(try Self.locks(on: [path, path + "-shm"]) == held, "the scan released this process's locks")

        // The control: opening and closing the database by path, as the scan once did, drops its locks.
        switch FileScan.readRegularFile(path) {
        case .contents: break
        case let failure: Issue.record("cannot read \(path): \(failure)")
        }
        let after = try Self.locks(on: [path, path + "-shm"])
        #expect(!after.contains { $0.file == path }, "closing a descriptor on the database left its lock: \(after)")
        db.close()
    }

    /// One POSIX lock of this process's, as /proc/locks lists it.
    struct Lock: Hashable {
        let file: String, type: String, start: String, end: String
    }

    /// This process's POSIX locks on `paths`, from /proc/locks (device and inode, matched by stat).
    static func locks(on paths: [String]) throws -> Set<Lock> {
        var byInode: [String: String] = [:]
        for path in paths {
            var info = stat()
            try #require(stat(path, &info) == 0, "stat \(path)")
            let device = UInt64(info.st_dev)
            // /proc/locks: MAJOR:MINOR:INODE, major and minor in hex.
            let major = (device >> 8) & 0xfff | (device >> 32) & ~UInt64(0xfff)
            let minor = device & 0xff | (device >> 12) & ~UInt64(0xff)
            byInode[String(format: "%02x:%02x:%llu", major, minor, UInt64(info.st_ino))] = path
        }
        let table = try String(contentsOfFile: "/proc/locks", encoding: .utf8)
        var found = Set<Lock>()
        for line in table.split(separator: "\n") {
            // "1: POSIX  ADVISORY  READ 1234 00:2e:5678 1073741826 1073742335"
            let fields = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard fields.count >= 8, fields[1] == "POSIX", fields[4] == String(getpid()),
                  let file = byInode[fields[5]] else { continue }
            found.insert(Lock(file: file, type: fields[3], start: fields[6], end: fields[7]))
        }
        return found
    }
}
