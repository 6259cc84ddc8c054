import CSQLCipher
import SQLCipherKit

/// What SQL text could change for the whole process (issue 43): the engine's heap limits, and the temporary folder
/// every connection uses. (`data_store_directory` is compiled into Windows builds only: on this engine the pragma
/// does nothing, so there is no state to read; the guard refuses it all the same.) The routes and matrix tests read it before and after each case; its positive
/// control (`ReliabilityHelper process-state-control`, run by `SQLRoutesTests`) changes each part in a child process
/// of its own, through the C API, and requires this reading to see every change.
public struct ProcessState: Equatable, Sendable, CustomStringConvertible {
    public var hardHeapLimit: Int64, softHeapLimit: Int64, temporaryDirectory: String?

    public init(hardHeapLimit: Int64, softHeapLimit: Int64, temporaryDirectory: String?) {
        self.hardHeapLimit = hardHeapLimit
        self.softHeapLimit = softHeapLimit
        self.temporaryDirectory = temporaryDirectory
    }

    /// A process no SQL has changed: no heap limit, no folder set.
    public static let resting = ProcessState(hardHeapLimit: 0, softHeapLimit: 0, temporaryDirectory: nil)

    /// The heap limits from the engine, the temporary folder as its pragma reads it (reading is allowed) on a fresh
    /// in-memory connection.
    public static func current() -> ProcessState {
        let db = try? Database(unencryptedPath: ":memory:")
        defer { db?.close() }
        return ProcessState(hardHeapLimit: sqlite3_hard_heap_limit64(-1), softHeapLimit: sqlite3_soft_heap_limit64(-1),
                            temporaryDirectory: (try? db?.textValue("PRAGMA temp_store_directory")) ?? nil)
    }

    public var description: String {
        "hard_heap_limit \(hardHeapLimit), soft_heap_limit \(softHeapLimit), temp_store_directory "
            + (temporaryDirectory ?? "none")
    }
}
