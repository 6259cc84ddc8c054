import CSQLCipher

extension Engine {
    /// The engine's process-wide heap limits, in bytes; 0 means no limit.
    ///
    /// SQLite keeps one pair of limits for the whole process
    /// ([`sqlite3_soft_heap_limit64`](https://sqlite.org/c3ref/hard_heap_limit64.html) and
    /// `sqlite3_hard_heap_limit64`): a soft limit the engine tries to stay under by freeing cache, and a hard limit
    /// past which every allocation fails with "out of memory", on every connection, whoever opened it. SQL text may
    /// not set them (`PRAGMA soft_heap_limit = …` and `hard_heap_limit = …` are refused: one connection would starve
    /// the others); set them once at start-up with ``setHeapLimits(_:)``.
    public struct HeapLimits: Sendable, Equatable {
        /// The soft limit: above it the engine frees page cache before allocating more. 0: none.
        public var soft: Int64
        /// The hard limit: above it allocations fail, on every connection of the process. 0: none.
        public var hard: Int64

        public init(soft: Int64 = 0, hard: Int64 = 0) {
            self.soft = soft
            self.hard = hard
        }
    }

    /// The heap limits in force.
    public static var heapLimits: HeapLimits {
        HeapLimits(soft: sqlite3_soft_heap_limit64(-1), hard: sqlite3_hard_heap_limit64(-1))
    }

    /// Sets the process-wide heap limits (see ``HeapLimits``). SQLite keeps the soft limit at or below a non-zero
    /// hard limit.
    ///
    /// - Throws: ``SQLCipherError/Kind/invalidArgument`` for a negative limit.
    public static func setHeapLimits(_ limits: HeapLimits) throws(SQLCipherError) {
        guard limits.soft >= 0, limits.hard >= 0 else {
            throw .api(.invalidArgument, "heap limits are 0 (none) or a positive number of bytes, not "
                + "soft \(limits.soft), hard \(limits.hard)")
        }
        sqlite3_hard_heap_limit64(limits.hard)
        sqlite3_soft_heap_limit64(limits.soft)
    }
}
