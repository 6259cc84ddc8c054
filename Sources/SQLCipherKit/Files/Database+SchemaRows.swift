import CSQLCipher

extension Database {
    /// Throws ``SQLCipherError/Kind/misuse`` unless every row of `main`'s schema holds the one statement that
    /// belongs there: `CREATE TABLE` or `CREATE VIRTUAL TABLE` for a table, `CREATE [UNIQUE] INDEX` for an index
    /// (or no SQL, for an index SQLite made for a constraint), `CREATE VIEW` for a view, `CREATE TRIGGER` for a
    /// trigger, and nothing after it.
    ///
    /// SQLCipher's export (`sqlcipher_export`) runs the source's schema rows as SQL. SQLite writes only such rows,
    /// and loads only rows that begin with `CREATE`; a file somebody else wrote may hold anything. This makes
    /// that a rule of ours rather than a consequence of SQLite's parser: before the export runs, a row that is no
    /// such statement stops it, naming the row, and nothing is written.
    func requireOnlySchemaStatements() throws(SQLCipherError) {
        let statement = try prepare("SELECT type, name, sql FROM main.sqlite_schema")
        while try statement.step() {
            let handle = statement.handle
            let type = sqlite3_column_text(handle, 0).map { String(cString: $0) } ?? ""
            let name = sqlite3_column_text(handle, 1).map { String(cString: $0) } ?? ""
            let sql = sqlite3_column_text(handle, 2).map { String(cString: $0) }
            if let problem = Database.schemaRowProblem(type: type, sql: sql) {
                statement.reset()
                throw .api(.misuse, "the schema row of \(type) '\(name)' \(problem): SQLCipher's export runs schema "
                    + "rows as SQL, and SQLCipherKit runs nothing but the CREATE statement each row holds when "
                    + "SQLite writes it. The file was not written by SQLite as it is; nothing was written",
                    path: path)
            }
        }
        statement.reset()
    }

    /// What is wrong with one schema row (its `type` and `sql` columns), or nil when it holds the statement that
    /// belongs there.
    static func schemaRowProblem(type: String, sql: String?) -> String? {
        let forms: [[String]]
        switch type {
        case "table": forms = [["CREATE", "TABLE"], ["CREATE", "VIRTUAL", "TABLE"]]
        case "index": forms = [["CREATE", "INDEX"], ["CREATE", "UNIQUE", "INDEX"]]
        case "view": forms = [["CREATE", "VIEW"]]
        case "trigger": forms = [["CREATE", "TRIGGER"]]
        default: return "has the type '\(type)', which no schema row has"
        }
        guard let sql else {
            return type == "index" ? nil : "holds no SQL"
        }
        // The leading words, separated by blanks, as SQLite writes them.
        let words = sql.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
            .prefix(3).map { $0.uppercased() }
        guard forms.contains(where: { form in form.enumerated().allSatisfy { $0.offset < words.count
                                                                           && words[$0.offset] == $0.element } }) else {
            return "does not begin with \(forms.map { $0.joined(separator: " ") }.joined(separator: " or "))"
        }
        // One statement: the first complete one (sqlite3_complete knows strings, comments and trigger bodies) must
        // be the whole text, but for blanks and semicolons. By UTF-8 bytes, as SQLite reads it (found by an attacker:
        // by `Character`, a semicolon followed by a combining mark was another character, and not seen).
        let bytes = Array(sql.utf8)
        let blanks: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0C, 0x0D, UInt8(ascii: ";")]
        for offset in bytes.indices where bytes[offset] == UInt8(ascii: ";") {
            guard sqlite3_complete(String(decoding: bytes[...offset], as: UTF8.self)) == 1 else { continue }
            if bytes[(offset + 1)...].contains(where: { !blanks.contains($0) }) {
                return "holds more than one statement"
            }
            break
        }
        return nil
    }
}
