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
    // Inlinable, like the array literal below, so that the conversion is specialized where the values' types are
    // known: unspecialized, converting a row of four values cost three quarters of what SQLite spends inserting it
    // (BENCHMARKS.md, "Profiles").
    @inlinable
    public init(_ values: [(any DatabaseValueConvertible)?]) {
        // Read in place through the buffer: iterating the array copies each existential (and its payload) through
        // the runtime's value witnesses, which cost more than the conversion itself.
        positional = values.withUnsafeBufferPointer { buffer in
            [DatabaseValue](unsafeUninitializedCapacity: buffer.count) { storage, count in
                for index in buffer.indices {
                    storage.initializeElement(at: index, to: buffer[index]?.databaseValue ?? .null)
                }
                count = buffer.count
            }
        }
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
    @inlinable
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
