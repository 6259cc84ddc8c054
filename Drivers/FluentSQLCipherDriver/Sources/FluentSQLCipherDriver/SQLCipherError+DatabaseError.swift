import FluentKit
import SQLCipherKit

/// FluentKit's view of SQLCipherKit's errors: constraint failures (UNIQUE, FOREIGN KEY, NOT NULL, CHECK…) are
/// recognised, so `error as? any DatabaseError` and `isConstraintFailure` work as with other drivers.
extension SQLCipherError: @retroactive DatabaseError {
    /// SQL that SQLite could not run as written (a syntax error, a missing table or column).
    public var isSyntaxError: Bool {
        kind == .sqlite && resultCode == 1
    }

    /// The connection (or the pool) is closed, or the file cannot be opened.
    public var isConnectionClosed: Bool {
        kind == .misuse || kind == .cannotOpen
    }

    /// A constraint rejected the change.
    public var isConstraintFailure: Bool {
        kind == .constraint
    }
}
