import ReliabilitySupport
import SQLCipherKit

/// The rows the crash and disk-full children write, built so that a checker can tell a complete transaction
/// from a partial one: every row carries its transaction number and that transaction's row count, and a
/// one-row tally is updated in the same transaction.
enum Workload {
    static let schema = """
        CREATE TABLE IF NOT EXISTS item(
            tx INTEGER NOT NULL, seq INTEGER NOT NULL, size INTEGER NOT NULL,
            payload BLOB NOT NULL, note TEXT NOT NULL, PRIMARY KEY (tx, seq));
        CREATE INDEX IF NOT EXISTS item_note ON item(note);
        CREATE TABLE IF NOT EXISTS tally(id INTEGER PRIMARY KEY CHECK (id = 1), rows INTEGER NOT NULL,
            lastTx INTEGER NOT NULL);
        INSERT OR IGNORE INTO tally VALUES (1, 0, 0);
        """

    /// Creates the tables if needed and returns the number of the next transaction.
    static func prepare(_ db: Database) throws(SQLCipherError) -> Int {
        try db.execute(schema)
        return (try db.scalar(Int.self, "SELECT lastTx FROM tally") ?? 0) + 1
    }

    /// Commits transaction `tx` of `rows` rows with payloads of up to `maxPayload` random bytes.
    static func commit(_ db: Database, tx: Int, rows: Int, maxPayload: Int,
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
