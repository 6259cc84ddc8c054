extension DatabasePool.Configuration {
    /// Group commit: `async` writes that wait for the pool's writer at the same time share one transaction and
    /// one commit, so that the pool writes at the speed of the disk's bandwidth rather than of its fsync latency.
    ///
    /// With ``Database/Synchronous/extra`` every commit waits for an fsync of the WAL (0.3 ms on a local SSD, often
    /// 0.5 to 2 ms on cloud block storage), and a pool that commits each write on its own can acknowledge no more
    /// writes per second than the disk does fsyncs. With group commit, when several
    /// ``DatabasePool/write(_:)-94hpm`` calls are waiting, the writer runs them back to back in one transaction, each
    /// in a savepoint of its own, and commits once. What each caller is promised:
    ///
    /// - **Acknowledged means durable, as before.** A call returns its result only after the commit that holds its
    ///   work is on the disk; a commit that fails fails every call of its group with that error, and none of them
    ///   is acknowledged.
    /// - **A call that fails, fails alone.** A body that throws (or whose statement fails, or that leaves a deferred
    ///   foreign key unresolved) is rolled back to its savepoint and its caller gets its error; the other calls of
    ///   the group commit. A cancelled task's write is rolled back alone: inside a group its statement is not
    ///   interrupted (SQLite would roll back the whole transaction), it stops at its next statement.
    /// - **Order.** Calls run in the order they were queued, each seeing the work of those before it, so the result
    ///   is the same as running them one after another. Readers see a group's writes together, at its commit.
    /// - **Bounded.** A group takes at most ``maxJobs`` calls, and takes no more once it has run for ``maxDuration``
    ///   (so a call that runs long closes its group): a call's acknowledgement waits behind later calls of its group
    ///   for at most ``maxDuration`` plus the run of one call, then the commit. A lone write commits at once: a group
    ///   never waits for company.
    ///
    /// What a caller can tell apart: a body runs inside a transaction that other calls share, so the writer's
    /// ``Database/isInTransaction`` is true (as it is without grouping, where each call has a transaction of its own)
    /// and a `PRAGMA` whose effect lasts until the end of the transaction (`defer_foreign_keys`) reaches the calls
    /// after it in the group. When one call's failure ends the whole transaction by itself (`RAISE(ROLLBACK)`,
    /// `INSERT OR ROLLBACK`, an I/O error, the pool closing), the calls of the group that ran before it, whose work
    /// SQLite rolled back, run again, each alone in a transaction of its own: their bodies run twice, so keep side
    /// effects outside the database out of write bodies, or turn grouping off. The `write(_:)` that blocks its thread,
    /// ``DatabasePool/barrierWrite(_:)`` and writer sessions keep the writer to themselves, as before.
    public struct GroupCommit: Sendable, Equatable {
        /// Whether `async` writes that wait together share a commit.
        public var isEnabled: Bool
        /// The most calls one group takes. Default: 64.
        public var maxJobs: Int
        /// How long a group keeps taking calls, from the start of its first. Default: 10 milliseconds.
        public var maxDuration: Duration

        /// Group commit with the given bounds (validated when the pool opens: `maxJobs` at least 1, `maxDuration`
        /// not negative).
        public init(isEnabled: Bool = true, maxJobs: Int = 64, maxDuration: Duration = .milliseconds(10)) {
            self.isEnabled = isEnabled
            self.maxJobs = maxJobs
            self.maxDuration = maxDuration
        }

        /// On, with 64 calls and 10 milliseconds per group.
        public static let `default` = GroupCommit()
        /// Off: every `async` write commits on its own, as the `write(_:)` that blocks its thread does.
        public static let off = GroupCommit(isEnabled: false)

        func validate() throws(SQLCipherError) {
            guard maxJobs >= 1 else {
                throw .api(.invalidArgument, "GroupCommit.maxJobs must be at least 1, not \(maxJobs)")
            }
            guard maxDuration >= .zero else {
                throw .api(.invalidArgument, "GroupCommit.maxDuration must not be negative, not \(maxDuration)")
            }
        }
    }
}
