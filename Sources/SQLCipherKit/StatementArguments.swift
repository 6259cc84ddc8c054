/// Values to bind to a statement's parameters: by position (`?`, `?NNN`) or by name (`:name`, `@name`,
/// `$name`).
///
/// ```swift
/// try db.execute("INSERT INTO note(id, body) VALUES (?, ?)", [1, "hello"])
/// try db.execute("INSERT INTO note(id, body) VALUES (:id, :body)", ["id": 2, "body": nil])
/// ```
///
/// Values are converted to ``DatabaseValue``s when the arguments are created.
public struct StatementArguments: Sendable, Equatable {
    /// Values for the parameters by position, the first for parameter 1.
    public var positional: [DatabaseValue]
    /// Values for the parameters by name; a name without a `:`, `@` or `$` prefix matches `:name`.
    public var named: [String: DatabaseValue]

    /// Positional arguments.
    public init(_ values: [(any DatabaseValueConvertible)?]) {
        positional = values.map { $0?.databaseValue ?? .null }
        named = [:]
    }

    /// Named arguments.
    public init(named values: [String: (any DatabaseValueConvertible)?]) {
        positional = []
        named = values.mapValues { $0?.databaseValue ?? .null }
    }

    /// No arguments.
    public static let none = StatementArguments([])

    /// Whether there are no arguments at all.
    public var isEmpty: Bool { positional.isEmpty && named.isEmpty }
}

extension StatementArguments: ExpressibleByArrayLiteral {
    /// Positional arguments: `[1, "text", nil]`.
    public init(arrayLiteral elements: (any DatabaseValueConvertible)?...) {
        self.init(elements)
    }
}

extension StatementArguments: ExpressibleByDictionaryLiteral {
    /// Named arguments: `["id": 1, "body": "text"]`.
    public init(dictionaryLiteral elements: (String, (any DatabaseValueConvertible)?)...) {
        self.init(named: Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
