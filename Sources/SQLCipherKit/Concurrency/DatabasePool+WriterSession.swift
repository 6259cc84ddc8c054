extension DatabasePool {
    /// Holds the writer for the whole of `body`, across its `await`s, and gives `body` a ``WriterSession`` to use
    /// it: for work that awaits between statements and must not see other writes in between (a transaction whose
    /// closure awaits, as FluentKit's do).
    ///
    /// ```swift
    /// try await pool.writeSession { session in
    ///     try await session.transaction {
    ///         let id = try await session.execute { db in
    ///             try db.execute("INSERT INTO note(body) VALUES (?)", ["draft"])
    ///             return db.lastInsertRowID
    ///         }
    ///         let text = try await render(id)   // anything async; no other writer gets in
    ///         try await session.execute { db in try db.execute("UPDATE note SET body = ? WHERE id = ?", [text, id]) }
    ///     }
    /// }
    /// ```
    ///
    /// The task waits for the writer without holding a thread, for at most ``Configuration/writerWaitTimeout``
    /// (then ``SQLCipherError/Kind/timedOut``). When `body` ends, a transaction it left open is rolled back.
    /// Readers keep reading meanwhile. Inside `body`, the pool's own write calls (and a nested session) throw
    /// ``SQLCipherError/Kind/misuse``: they would wait for the writer this session holds; a nested ``close()``
    /// closes the connections once the session has ended (``DatabasePool/close()``).
    public func writeSession<Result: Sendable>(_ body: (WriterSession) async throws -> Result) async throws
        -> Result {
        try checkNotInSession("DatabasePool.writeSession")
        try checkOpen()
        try await acquireWriter()
        sessionRunning(true)
        let session = WriterSession(pool: self)
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(try await WriterSession.$activePools.withValue(WriterSession.activePools
                + [ObjectIdentifier(self)]) { try await body(session) })
        } catch {
            outcome = .failure(error)
        }
        await session.finish()
        sessionRunning(false)
        releaseWriter()
        return try outcome.get()
    }
}
