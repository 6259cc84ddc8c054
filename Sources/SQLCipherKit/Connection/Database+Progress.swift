import CSQLCipher

extension Database {
    /// Calls `handler` about every `instructions` virtual-machine steps while `body` runs; `handler` returns
    /// false to let SQLite go on, true to interrupt (the running statement then fails with
    /// ``SQLCipherError/Kind/interrupted``).
    func withProgressHandler<Result>(every instructions: Int32, _ handler: @escaping () -> Bool,
                                     _ body: () throws(SQLCipherError) -> Result) throws(SQLCipherError) -> Result {
        do {
            return try withProgressHandlerRethrowing(every: instructions, handler) { try body() }
        } catch let error as SQLCipherError {
            throw error
        } catch {
            throw .api(.sqlite, "\(error)", path: path)
        }
    }

    /// ``withProgressHandler(every:_:_:)`` for bodies that throw any error.
    func withProgressHandlerRethrowing<Result>(every instructions: Int32, _ handler: @escaping () -> Bool,
                                               _ body: () throws -> Result) throws -> Result {
        let db = try requireOpenHandle()
        let box = ProgressBox(handler)
        let context = Unmanaged.passRetained(box).toOpaque()
        sqlite3_progress_handler(db, instructions, { context in
            guard let context else { return 0 }
            return Unmanaged<ProgressBox>.fromOpaque(context).takeUnretainedValue().handler() ? 1 : 0
        }, context)
        defer {
            // The body may have closed the connection, and the library released it (found by a reviewer).
            if stillHolds(db) { sqlite3_progress_handler(db, 0, nil, nil) }
            Unmanaged<ProgressBox>.fromOpaque(context).release()
        }
        return try body()
    }
}

private final class ProgressBox {
    let handler: () -> Bool
    init(_ handler: @escaping () -> Bool) { self.handler = handler }
}
