import Foundation
import Testing
@testable import SQLCipherKit

@Suite("Decodable rows")
struct RowDecodingTests {
    enum Mood: String, Codable { case calm, busy }

    struct Note: Decodable, Equatable {
        var id: Int64
        var title: String
        var body: String?
        var score: Double
        var pinned: Bool
        var created: Date
        var attachment: Data?
        var mood: Mood
    }

    private func database() throws -> Database {
        let database = try Database(path: ":memory:", key: .passphrase("k"))
        try database.execute("""
            CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT, body TEXT, score REAL, pinned INTEGER,
                              created TEXT, attachment BLOB, mood TEXT)
            """)
        return database
    }

    @Test("rows decode into a Decodable type by column name")
    func decode() throws {
        let database = try database()
        let created = Date(timeIntervalSince1970: 1_600_000_000.5)
        try database.execute("INSERT INTO note VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                             [1, "first", nil, 2.5, true, created, Data([1, 2]), "busy"])
        try database.execute("INSERT INTO note VALUES (2, 'second', 'text', 0, 0, '2024-02-29', NULL, 'calm')")
        let notes = try database.fetchAll(Note.self, "SELECT * FROM note ORDER BY id")
        #expect(notes == [
            Note(id: 1, title: "first", body: nil, score: 2.5, pinned: true, created: created,
                 attachment: Data([1, 2]), mood: .busy),
            Note(id: 2, title: "second", body: "text", score: 0, pinned: false,
                 created: Date(timeIntervalSince1970: 1_709_164_800), attachment: nil, mood: .calm),
        ])
        #expect(try database.fetchOne(Note.self, "SELECT * FROM note WHERE id = ?", [2])?.title == "second")
        #expect(try database.fetchOne(Note.self, "SELECT * FROM note WHERE id = 3") == nil)
    }

    @Test("a single column decodes into a plain value")
    func singleValue() throws {
        let database = try database()
        try database.execute("INSERT INTO note(id, title, mood) VALUES (1, 'a', 'calm'), (2, 'b', 'busy')")
        #expect(try database.fetchAll(String.self, "SELECT title FROM note ORDER BY id") == ["a", "b"])
        #expect(try database.fetchAll(Mood.self, "SELECT mood FROM note ORDER BY id") == [.calm, .busy])
    }

    @Test("missing columns and NULL for non-optionals are DecodingErrors naming the column")
    func decodingErrors() throws {
        let database = try database()
        try database.execute("INSERT INTO note(id, title) VALUES (1, NULL)")
        do {
            _ = try database.fetchAll(Note.self, "SELECT id, title FROM note")
            Issue.record("decoding succeeded without the columns")
        } catch let error as DecodingError {
            guard case .valueNotFound(_, let context) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(context.codingPath.map(\.stringValue) == ["title"])
        }
        do {
            _ = try database.fetchAll(Note.self, "SELECT id, 'x' AS title FROM note")
            Issue.record("decoding succeeded without the columns")
        } catch let error as DecodingError {
            guard case .keyNotFound(let key, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(["score", "pinned", "created", "mood"].contains(key.stringValue))
        }
    }
}
