import SQLCipherKit

/// Checks a database written by ``Workload`` (in the reliability tests' child process) after its
/// writer died or failed: sound, authentic, every reported commit present, no transaction partly present.
public enum WorkloadVerifier {
    /// The problems found in the database at `path` (empty when it passes), given that the writer reported
    /// commits up to `lastReported` and that at most `unreported` more may have committed silently.
    public static func problems(path: String, key: Key, lastReported: Int, unreported: Int = 1) -> [String] {
        do {
            // Read-write: opening is what rolls back a hot journal or recovers the write-ahead log.
            let db = try Database(path: path, key: key, mode: .readWrite)
            defer { db.close() }
            var problems = try db.integrityCheck().map { "integrity_check: \($0)" }
            problems += try db.cipherIntegrityCheck().filter(\.isFailure).map { "cipher_integrity_check: \($0.message)" }
            guard problems.isEmpty else { return problems }

            let lastTx = try db.scalar(Int.self, "SELECT lastTx FROM tally") ?? 0
            let tallied = try db.scalar(Int.self, "SELECT rows FROM tally") ?? 0
            let rows = try db.scalar(Int.self, "SELECT count(*) FROM item") ?? 0
            let transactions = try db.scalar(Int.self, "SELECT count(DISTINCT tx) FROM item") ?? 0
            let lowest = try db.scalar(Int.self, "SELECT min(tx) FROM item") ?? 1
            let partial = try db.scalar(Int.self, """
                SELECT count(*) FROM (SELECT tx FROM item GROUP BY tx
                HAVING count(*) != max(size) OR min(size) != max(size) OR count(DISTINCT seq) != count(*))
                """) ?? 0
            if lastTx < lastReported { problems.append("commit \(lastReported) was reported but the last is \(lastTx)") }
            if lastTx > lastReported + unreported {
                problems.append("\(lastTx - lastReported) commits after the last reported \(lastReported)")
            }
            if transactions != lastTx || lowest != 1 {
                problems.append("transactions 1...\(lastTx) expected, found \(transactions) from \(lowest)")
            }
            if partial != 0 { problems.append("\(partial) transactions are partly present") }
            if tallied != rows { problems.append("the tally says \(tallied) rows but there are \(rows)") }
            return problems
        } catch {
            return ["cannot read the database: \(error)"]
        }
    }
}
