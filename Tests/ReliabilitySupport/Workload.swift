import SQLCipherKit

/// The rows the crash and disk-full children (ReliabilityHelper) write and ``WorkloadVerifier`` checks, built so
/// that a complete transaction can be told from a partial one: every row carries its transaction number and
/// that transaction's row count, and a one-row tally is updated in the same transaction.
public enum Workload {
    public static let schema = """
        CREATE TABLE IF NOT EXISTS item(
            tx INTEGER NOT NULL, seq INTEGER NOT NULL, size INTEGER NOT NULL,
            payload BLOB NOT NULL, note TEXT NOT NULL, PRIMARY KEY (tx, seq));
        CREATE INDEX IF NOT EXISTS item_note ON item(note);
        CREATE TABLE IF NOT EXISTS tally(id INTEGER PRIMARY KEY CHECK (id = 1), rows INTEGER NOT NULL,
            lastTx INTEGER NOT NULL);
        INSERT OR IGNORE INTO tally VALUES (1, 0, 0);
        """

    /// Creates the tables if needed and returns the number of the next transaction.
    public static func prepare(_ db: Database) throws(SQLCipherError) -> Int {
        try db.execute(schema)
        return (try db.scalar(Int.self, "SELECT lastTx FROM tally") ?? 0) + 1
    }

    /// Commits transaction `tx` of `rows` rows with payloads of up to `maxPayload` random bytes.
    public static func commit(_ db: Database, tx: Int, rows: Int, maxPayload: Int,
                       using generator: inout SplitMix64) throws {
        var payloads: [[UInt8]] = []
        for _ in 0..<rows {
            payloads.append((0..<Int.random(in: 1...maxPayload, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            })
        }
        try db.transaction {
            let insert = try db.prepare("INSERT INTO item(tx, seq, size, payload, note) VALUES (?, ?, ?, ?, ?)")
            for (seq, payload) in payloads.enumerated() {
                try insert.execute([tx, seq, rows, payload, "note \(tx)/\(seq) \(payload.count)"])
            }
            try db.execute("UPDATE tally SET rows = rows + ?, lastTx = ?", [rows, tx])
        }
    }
}
