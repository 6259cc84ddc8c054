/// A connection's prepared statements, by SQL text (``Database/cachedStatement(_:)``).
///
/// Bounded: at ``capacity`` statements, preparing a new one drops the least recently used one that nobody else
/// holds (it is finalized as it is released). Cached statements do not retain their connection (it owns them);
/// closing the connection drops them all and detaches any still held elsewhere, whose later use throws.
struct StatementCache {
    /// The most statements a connection keeps prepared.
    static let capacity = 64

    private struct Entry {
        var statement: Statement
        var lastUse: UInt64
    }

    private var entries: [String: Entry] = [:]
    private var clock: UInt64 = 0

    /// The number of statements in the cache.
    var count: Int { entries.count }

    /// The cached statement for `sql`, prepared with `prepare` the first time. When the cache is full and every
    /// statement in it is held elsewhere, the new statement is returned without being cached.
    mutating func statement(for sql: String, prepare: (_ cached: Bool) throws(SQLCipherError) -> Statement)
        throws(SQLCipherError) -> Statement {
        clock &+= 1
        if let index = entries.index(forKey: sql) {
            entries.values[index].lastUse = clock
            return entries.values[index].statement
        }
        if entries.count >= StatementCache.capacity && !evictOne() {
            return try prepare(false)
        }
        let statement = try prepare(true)
        entries[sql] = Entry(statement: statement, lastUse: clock)
        return statement
    }

    /// Drops the least recently used statement that only the cache holds; false when there is none.
    private mutating func evictOne() -> Bool {
        var victim: (key: String, lastUse: UInt64)?
        for key in entries.keys {
            guard isKnownUniquelyReferenced(&entries[key]!.statement) else { continue }
            let lastUse = entries[key]!.lastUse
            if victim == nil || lastUse < victim!.lastUse { victim = (key, lastUse) }
        }
        guard let victim else { return false }
        entries[victim.key] = nil
        return true
    }

    /// Drops every statement, detaching those still held elsewhere from the connection.
    mutating func removeAll() {
        for entry in entries.values { entry.statement.detach() }
        entries = [:]
    }
}
