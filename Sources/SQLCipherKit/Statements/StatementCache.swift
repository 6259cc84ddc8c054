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

    /// The cached statement for `sql`, or nil.
    mutating func cached(_ sql: String) -> Statement? {
        clock &+= 1
        guard let index = entries.index(forKey: sql) else { return nil }
        entries.values[index].lastUse = clock
        return entries.values[index].statement
    }

    /// Makes room for one more statement: false when the cache is full and every statement in it is held elsewhere
    /// (the new one is then not cached). A statement dropped for it is returned, to be released outside the cache's
    /// access (its finalization may report to the connection's observer).
    mutating func makeRoom() -> (fits: Bool, dropped: Statement?) {
        guard entries.count >= StatementCache.capacity else { return (true, nil) }
        let dropped = evictOne()
        return (dropped != nil, dropped)
    }

    /// Caches `statement` for `sql` (after ``makeRoom()``).
    mutating func insert(_ statement: Statement, for sql: String) {
        entries[sql] = Entry(statement: statement, lastUse: clock)
    }

    /// Removes the least recently used statement that only the cache holds and returns it; nil when there is none.
    private mutating func evictOne() -> Statement? {
        // By index, in place: iterating `entries.keys` kept a second reference to the storage, so the uniqueness
        // check copied it and saw every statement referenced twice, and nothing was ever dropped (found by a reviewer).
        var victim: (index: Dictionary<String, Entry>.Index, lastUse: UInt64)?
        var index = entries.startIndex
        while index != entries.endIndex {
            if isKnownUniquelyReferenced(&entries.values[index].statement) {
                let lastUse = entries.values[index].lastUse
                if victim == nil || lastUse < victim!.lastUse { victim = (index, lastUse) }
            }
            entries.formIndex(after: &index)
        }
        guard let victim else { return nil }
        return entries.remove(at: victim.index).value.statement
    }

    /// Drops every statement, detaching those still held elsewhere from the connection.
    mutating func removeAll() {
        for entry in entries.values { entry.statement.detach() }
        entries = [:]
    }
}
