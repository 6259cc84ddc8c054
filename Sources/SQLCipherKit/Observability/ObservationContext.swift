/// The context of the work a pool's or a queue's thread runs now: what ``DatabaseObserver/currentContext()``
/// returned on the task that handed the work over (bound around the work by ``AsyncJob``). Outside such work,
/// events ask the observer on the thread that runs them.
enum ObservationContext {
    @TaskLocal static var current: (any Sendable)?

    /// Runs `work` with `context` as the current context when there is one (an observer gave it), directly otherwise.
    static func with<Result>(_ context: (any Sendable)?, _ work: () throws -> Result) rethrows -> Result {
        guard let context else { return try work() }
        return try $current.withValue(context, operation: work)
    }
}
