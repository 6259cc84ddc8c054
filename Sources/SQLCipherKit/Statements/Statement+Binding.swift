import CSQLCipher

// Binding: values to a statement's parameters, by position or by name.
extension Statement {
    /// The number of parameters (the largest parameter index).
    public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    /// Binds `values` to the parameters in order, the first to parameter 1, straight from their storage (no
    /// array, no ``DatabaseValue``). Fewer values than parameters leave the rest NULL. Binding rewinds the
    /// statement (``reset()``) if it was stepped.
    ///
    /// ```swift
    /// try select.bind(id)
    /// try update.bind(name, score, id)
    /// ```
    // Disfavored: an array literal (`bind([4])`) stays ``StatementArguments``, never a blob of `[UInt8]`.
    @inlinable @_disfavoredOverload
    public func bind<each V: DatabaseValueConvertible>(_ values: repeat each V) throws(SQLCipherError) {
        // Counted over the types, not the values: no value is copied. A pack expansion of a generic call (not
        // `for value in repeat each values`) binds each value through its own specialized `bind(to:)`.
        var count: Int32 = 0
        for _ in repeat (each V).self { count += 1 }
        try prepareToBind(count: count)
        var index: Int32 = 0
        repeat try Statement.bind(each values, to: self, after: &index)
    }

    /// Binds `value` to the parameter after `index`, and advances `index`.
    @inlinable
    static func bind<T: DatabaseValueConvertible>(_ value: T, to statement: Statement, after index: inout Int32)
        throws(SQLCipherError) {
        index += 1
        try value.bind(to: StatementParameter(statement: statement, index: index))
    }

    // One overload per count of values, 1 to 8: each is specialized for its types in the caller, so every value
    // is bound through its own `bind(to:)` with no generic dispatch (the variadic form above binds the same way
    // but, as of Swift 6.3, is not specialized per element and costs a few hundred instructions more per row).

    /// Binds the value to parameter 1 (see ``bind(_:)-(V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible>(_ a: A) throws(SQLCipherError) {
        try prepareToBind(count: 1)
        try StatementParameter(statement: self, index: 1).bindValue(a)
    }

    /// Binds the values to parameters 1 to 2 (see ``bind(_:)-(V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible, B: DatabaseValueConvertible>(_ a: A, _ b: B) throws(SQLCipherError) {
        try prepareToBind(count: 2)
        try StatementParameter(statement: self, index: 1).bindValue(a)
        try StatementParameter(statement: self, index: 2).bindValue(b)
    }

    /// Binds the values to parameters 1 to 3 (see ``bind(_:)-(V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C) throws(SQLCipherError) {
        try prepareToBind(count: 3)
        try StatementParameter(statement: self, index: 1).bindValue(a)
        try StatementParameter(statement: self, index: 2).bindValue(b)
        try StatementParameter(statement: self, index: 3).bindValue(c)
    }

    /// Binds the values to parameters 1 to 4 (see ``bind(_:)-(V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D) throws(SQLCipherError) {
        try prepareToBind(count: 4)
        try StatementParameter(statement: self, index: 1).bindValue(a)
        try StatementParameter(statement: self, index: 2).bindValue(b)
        try StatementParameter(statement: self, index: 3).bindValue(c)
        try StatementParameter(statement: self, index: 4).bindValue(d)
    }

    /// Binds the values to parameters 1 to 5 (see ``bind(_:)-(V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E) throws(SQLCipherError) {
        try prepareToBind(count: 5)
        try StatementParameter(statement: self, index: 1).bindValue(a)
        try StatementParameter(statement: self, index: 2).bindValue(b)
        try StatementParameter(statement: self, index: 3).bindValue(c)
        try StatementParameter(statement: self, index: 4).bindValue(d)
        try StatementParameter(statement: self, index: 5).bindValue(e)
    }

    /// Binds the values to parameters 1 to 6 (see ``bind(_:)-(V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible, F: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F) throws(SQLCipherError) {
        try prepareToBind(count: 6)
        try StatementParameter(statement: self, index: 1).bindValue(a)
        try StatementParameter(statement: self, index: 2).bindValue(b)
        try StatementParameter(statement: self, index: 3).bindValue(c)
        try StatementParameter(statement: self, index: 4).bindValue(d)
        try StatementParameter(statement: self, index: 5).bindValue(e)
        try StatementParameter(statement: self, index: 6).bindValue(f)
    }

    /// Binds the values to parameters 1 to 7 (see ``bind(_:)-(V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible, F: DatabaseValueConvertible, G: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F, _ g: G) throws(SQLCipherError) {
        try prepareToBind(count: 7)
        try StatementParameter(statement: self, index: 1).bindValue(a)
        try StatementParameter(statement: self, index: 2).bindValue(b)
        try StatementParameter(statement: self, index: 3).bindValue(c)
        try StatementParameter(statement: self, index: 4).bindValue(d)
        try StatementParameter(statement: self, index: 5).bindValue(e)
        try StatementParameter(statement: self, index: 6).bindValue(f)
        try StatementParameter(statement: self, index: 7).bindValue(g)
    }

    /// Binds the values to parameters 1 to 8 (see ``bind(_:)-(V)``).
    @inlinable
    public func bind<A: DatabaseValueConvertible, B: DatabaseValueConvertible, C: DatabaseValueConvertible, D: DatabaseValueConvertible, E: DatabaseValueConvertible, F: DatabaseValueConvertible, G: DatabaseValueConvertible, H: DatabaseValueConvertible>(_ a: A, _ b: B, _ c: C, _ d: D, _ e: E, _ f: F, _ g: G, _ h: H) throws(SQLCipherError) {
        try prepareToBind(count: 8)
        try StatementParameter(statement: self, index: 1).bindValue(a)
        try StatementParameter(statement: self, index: 2).bindValue(b)
        try StatementParameter(statement: self, index: 3).bindValue(c)
        try StatementParameter(statement: self, index: 4).bindValue(d)
        try StatementParameter(statement: self, index: 5).bindValue(e)
        try StatementParameter(statement: self, index: 6).bindValue(f)
        try StatementParameter(statement: self, index: 7).bindValue(g)
        try StatementParameter(statement: self, index: 8).bindValue(h)
    }

    /// Clears all bindings, then binds `values` by position (an array literal: `bind([1, "text", nil])`).
    ///
    /// This overload keeps an array literal an argument list: without it, `[4]` could be read as one `[UInt8]`
    /// blob by ``bind(_:)-(V)``.
    @inlinable
    public func bind(_ values: [(any DatabaseValueConvertible)?]) throws(SQLCipherError) {
        try bind(StatementArguments(values))
    }

    /// Binds `value` to parameter `index`, counted from 1, straight from its storage.
    @inlinable
    public func bind<V: DatabaseValueConvertible>(_ value: V, at index: Int) throws(SQLCipherError) {
        try prepareToBind(index: index)
        try value.bind(to: StatementParameter(statement: self, index: Int32(index)))
    }

    /// Rewinds for a positional bind of `count` values and clears the parameters they leave out.
    // Inlinable: the common case (open, rewound, every parameter bound) is a few loads and one call in the caller.
    @inlinable
    func prepareToBind(count: Int32) throws(SQLCipherError) {
        if !isDetached && database.handle != nil && !isStepped && count == sqlite3_bind_parameter_count(handle) {
            return
        }
        try prepareToBind(checkedCount: count)
    }

    @usableFromInline
    func prepareToBind(checkedCount count: Int32) throws(SQLCipherError) {
        try requireOpen()
        reset()
        let parameterCount = sqlite3_bind_parameter_count(handle)
        guard count <= parameterCount else {
            throw SQLCipherError(kind: .invalidArgument, message: "\(count) arguments for \(parameterCount) parameters",
                                 sql: sql)
        }
        // No values at all (`execute()`) runs with the bindings already made, as `execute(nil)` does.
        if count > 0 && count < parameterCount { clearBindings() }
    }

    /// Rewinds for a bind at `index`, which must name a parameter.
    @usableFromInline
    func prepareToBind(index: Int) throws(SQLCipherError) {
        try requireOpen()
        reset()
        guard index >= 1 && index <= Int(sqlite3_bind_parameter_count(handle)) else {
            throw SQLCipherError(kind: .invalidArgument, message: "no parameter \(index) (there are \(parameterCount))",
                                 sql: sql)
        }
    }

    /// Binds `value` (nil for NULL) to parameter `index`, counted from 1. Binding rewinds the statement
    /// (``reset()``) if it was stepped.
    @_disfavoredOverload
    public func bind(_ value: (any DatabaseValueConvertible)?, at index: Int) throws(SQLCipherError) {
        try requireOpen()
        reset()
        try bind(value?.databaseValue ?? .null, at: Int32(index))
    }

    /// Binds `value` (nil for NULL) to the parameter named `name`: `:name`, `@name` or `$name`; a bare name
    /// means `:name`.
    public func bind(_ value: (any DatabaseValueConvertible)?, named name: String) throws(SQLCipherError) {
        try requireOpen()
        reset()
        try bind(value?.databaseValue ?? .null, at: try parameterIndex(named: name))
    }

    /// Clears all bindings, then binds `arguments`. Every positional value needs a parameter, and every named
    /// value a parameter of that name.
    public func bind(_ arguments: StatementArguments) throws(SQLCipherError) {
        try requireOpen()
        reset()
        let parameterCount = parameterCount
        guard arguments.positional.count <= parameterCount else {
            throw .api(.invalidArgument, "\(arguments.positional.count) arguments for \(parameterCount) parameters")
        }
        // Only parameters the arguments leave out keep an old value: when they bind every one, clearing is skipped.
        if !arguments.named.isEmpty || arguments.positional.count < parameterCount {
            clearBindings()
        }
        for (offset, value) in arguments.positional.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
        for (name, value) in arguments.named {
            try bind(value, at: try parameterIndex(named: name))
        }
    }

    /// Sets every parameter back to NULL.
    public func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    private func parameterIndex(named name: String) throws(SQLCipherError) -> Int32 {
        let candidates = name.first.map { ":@$".contains($0) } == true ? [name] : [":" + name, "@" + name, "$" + name]
        for candidate in candidates {
            let index = sqlite3_bind_parameter_index(handle, candidate)
            if index > 0 { return index }
        }
        throw SQLCipherError(kind: .invalidArgument, message: "no parameter named \(name)", sql: sql)
    }

    private func bind(_ value: DatabaseValue, at index: Int32) throws(SQLCipherError) {
        try StatementParameter(statement: self, index: index).bind(value)
    }
}
