/// A schema change SQLite's `ALTER TABLE` cannot make (it adds, renames and drops columns only): changing a
/// column's type, or adding or dropping a constraint on an existing table.
public struct FluentSQLCipherUnsupportedAlter: Error, CustomStringConvertible {
    /// What the schema change asked for.
    public let request: String

    /// What went wrong and what to do.
    public var description: String {
        "SQLite's ALTER TABLE cannot \(request): only adding and deleting columns is supported. Create a new table "
            + "with the new shape, copy the rows, drop the old table and rename the new one, in one migration."
    }
}
