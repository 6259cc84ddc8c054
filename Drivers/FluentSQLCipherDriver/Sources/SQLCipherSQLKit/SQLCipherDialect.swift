import SQLKit

/// SQLKit's dialect for SQLCipher: SQLite's SQL, named `sqlite` so that code (and FluentKit's converters) written for
/// SQLite treat it as SQLite. Features follow the engine's SQLite version (``SQLCipherDatabaseVersion/engine``).
public struct SQLCipherDialect: SQLDialect {
    /// The dialect of SQLCipherKit's engine.
    public init() {}

    /// `sqlite`: the SQL is SQLite's.
    public var name: String { "sqlite" }

    /// Identifiers are quoted with double quotes.
    public var identifierQuote: any SQLExpression { SQLRaw("\"") }

    /// String literals are quoted with single quotes.
    public var literalStringQuote: any SQLExpression { SQLRaw("'") }

    /// Numbered parameters, `?1`, `?2`…: one bind may appear more than once.
    public func bindPlaceholder(at position: Int) -> any SQLExpression { SQLRaw("?\(position)") }

    /// `TRUE` / `FALSE` (SQLite stores 1 and 0).
    public func literalBoolean(_ value: Bool) -> any SQLExpression { SQLRaw(value ? "TRUE" : "FALSE") }

    /// SQLite has no `DEFAULT` value expression: NULL takes a column's default in an autoincrement key.
    public var literalDefault: any SQLExpression { SQLLiteral.null }

    /// `DROP … IF EXISTS` is understood.
    public var supportsIfExists: Bool { true }

    /// `DROP … CASCADE/RESTRICT` is not.
    public var supportsDropBehavior: Bool { false }

    /// An `INTEGER PRIMARY KEY` increments by itself; the `AUTOINCREMENT` keyword is not needed.
    public var supportsAutoIncrement: Bool { false }

    /// `AUTOINCREMENT`, where a caller asks for it anyway.
    public var autoIncrementClause: any SQLExpression { SQLRaw("AUTOINCREMENT") }

    /// SQLite has no enum types: enums are text.
    public var enumSyntax: SQLEnumSyntax { .unsupported }

    /// Triggers with bodies, `WHEN` conditions and `UPDATE OF` columns.
    public var triggerSyntax: SQLTriggerSyntax {
        .init(create: [.supportsBody, .supportsCondition, .supportsUpdateColumns], drop: [])
    }

    /// One change per `ALTER TABLE`.
    public var alterTableSyntax: SQLAlterTableSyntax { .init(allowsBatch: false) }

    /// `ON CONFLICT … DO UPDATE` (SQLite 3.24 and later).
    public var upsertSyntax: SQLUpsertSyntax { engineIsAtLeast(3, 24, 0) ? .standard : .unsupported }

    /// `RETURNING` (SQLite 3.35 and later).
    public var supportsReturning: Bool { engineIsAtLeast(3, 35, 0) }

    /// `UNION`, `UNION ALL`, `INTERSECT` and `EXCEPT`.
    public var unionFeatures: SQLUnionFeatures { [.union, .unionAll, .intersect, .except] }

    /// `BIGINT` becomes `INTEGER`, so that a 64-bit primary key is SQLite's rowid (and increments by itself).
    public func customDataType(for dataType: SQLDataType) -> (any SQLExpression)? {
        if case .bigint = dataType { return SQLDataType.int }
        return nil
    }

    /// Paths into JSON text columns, with `json_extract`.
    public func nestedSubpathExpression(in column: any SQLExpression, for path: [String]) -> (any SQLExpression)? {
        guard !path.isEmpty else { return nil }
        return SQLFunction("json_extract", args: [column, SQLLiteral.string("$." + path.joined(separator: "."))])
    }

    private func engineIsAtLeast(_ major: Int, _ minor: Int, _ patch: Int) -> Bool {
        !SQLCipherDatabaseVersion.engine.isOlder(than: SQLCipherDatabaseVersion(major: major, minor: minor, patch: patch))
    }
}
