import CSQLCipher

// SQLite's special destructor values are C macros that cast integers to function pointers, which Swift does
// not import. SQLITE_TRANSIENT (SQLite copies the value before the bind returns) is
// `StatementParameter.transient`, inlinable for the binds that use it.

/// SQLite uses the bound value in place: it must stay valid and unchanged until rebound or cleared.
let SQLITE_STATIC: sqlite3_destructor_type? = nil
