import CSQLCipher

// SQLite's special destructor values are C macros that cast integers to function pointers, which Swift does
// not import.

/// SQLite copies the bound value before the bind call returns.
let SQLITE_TRANSIENT = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// SQLite uses the bound value in place: it must stay valid and unchanged until rebound or cleared.
let SQLITE_STATIC: sqlite3_destructor_type? = nil
