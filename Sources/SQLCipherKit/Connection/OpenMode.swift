import CSQLCipher

/// How ``Database`` opens its file.
public enum OpenMode: Sendable, Equatable {
    /// Read only: nothing is written, and a missing file is an error (none is created).
    ///
    /// As with any SQLite read-only connection, opening a WAL database whose `-wal` and `-shm` are missing
    /// creates them (empty), and the connection cannot remove them at close. To check or inspect a file and
    /// leave its folder as it was, use ``Database/checkIntegrity(path:key:cipher:)`` or
    /// ``Database/inspect(path:key:cipher:)``.
    case readOnly
    /// Read and write an existing file; a missing file is an error (none is created).
    case readWrite
    /// Read and write, creating the file when it does not exist.
    case readWriteCreate

    var flags: Int32 {
        switch self {
        case .readOnly: SQLITE_OPEN_READONLY
        // CREATE as well, because attached databases inherit the connection's flags and export, encrypt and
        // decrypt attach a new file; Database checks beforehand that the main file exists.
        case .readWrite: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readWriteCreate: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
    }
}
