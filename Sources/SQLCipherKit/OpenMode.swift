import CSQLCipher

/// How ``Database`` opens its file.
public enum OpenMode: Sendable, Equatable {
    /// Read only: nothing is written, and a missing file is an error (none is created).
    case readOnly
    /// Read and write an existing file; a missing file is an error.
    case readWrite
    /// Read and write, creating the file when it does not exist.
    case readWriteCreate

    var flags: Int32 {
        switch self {
        case .readOnly: SQLITE_OPEN_READONLY
        case .readWrite: SQLITE_OPEN_READWRITE
        case .readWriteCreate: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
    }
}
