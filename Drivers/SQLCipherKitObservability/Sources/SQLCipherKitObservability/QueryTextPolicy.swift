/// How much of a statement's SQL text spans and log lines carry (as postgres-nio's and OpenTelemetry's guidance:
/// the text is opt-in).
///
/// The text is always the statement as prepared: bound values are never in it. Text that holds literals (values
/// written into the SQL instead of bound) carries them, so ``exact`` is for apps that bind every value.
public enum QueryTextPolicy: String, Sendable, CaseIterable {
    /// No SQL text at all.
    case off
    /// The operation alone (`SELECT`, `INSERT`, …) as `db.query.summary`. The default.
    case operationOnly
    /// The statement as prepared as `db.query.text`.
    case exact
}
