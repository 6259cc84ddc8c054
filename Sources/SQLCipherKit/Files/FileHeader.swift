import CSQLCipher

/// The first bytes of a database file, read through SQLite's default VFS rather than `open(2)`.
///
/// A database file that this process has open may carry `fcntl` locks of other connections, and POSIX drops every
/// lock a process holds on a file when *any* descriptor of that file is closed. A plain `open`/`read`/`close`
/// would silently release the locks another connection in this process holds (a write transaction's `RESERVED`
/// lock, the `SHARED` lock a WAL connection keeps), and another process could then write, or delete the WAL, under
/// it. SQLite's unix VFS shares one lock record per file among its handles and keeps a descriptor open while that
/// record holds locks, so reading through it cannot drop them
/// ([How To Corrupt An SQLite Database File, 2.2](https://www.sqlite.org/howtocorrupt.html#_posix_advisory_locks_canceled_by_a_separate_thread_doing_close_)).
enum FileHeader {
    /// The first `count` bytes of the file at `path`; nil when it does not exist or is shorter.
    static func read(path: String, count: Int) throws(SQLCipherError) -> [UInt8]? {
        guard let vfs = sqlite3_vfs_find(nil), let open = vfs.pointee.xOpen else {
            throw .api(.sqlite, "SQLite has no default VFS", path: path)
        }
        let size = max(Int(vfs.pointee.szOsFile), MemoryLayout<sqlite3_file>.size)
        let storage = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        defer { storage.deallocate() }
        let file = storage.assumingMemoryBound(to: sqlite3_file.self)
        var outFlags: Int32 = 0
        let status = open(vfs, path, file, SQLITE_OPEN_READONLY | SQLITE_OPEN_MAIN_DB, &outFlags)
        // xClose must be called whenever xOpen set the methods, even when it failed.
        defer { _ = file.pointee.pMethods?.pointee.xClose?(file) }
        guard status == SQLITE_OK, let methods = file.pointee.pMethods, let read = methods.pointee.xRead else {
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: count)
        let readStatus = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress, Int32(count), 0) }
        switch readStatus {
        case SQLITE_OK: return bytes
        case SQLITE_IOERR | (2 << 8): return nil // SQLITE_IOERR_SHORT_READ: the file is shorter
        default:
            throw .api(.ioError, "cannot read the database file's first \(count) bytes (SQLite \(readStatus))",
                       path: path)
        }
    }
}
