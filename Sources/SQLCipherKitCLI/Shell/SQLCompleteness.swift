import CSQLCipher

/// Whether the SQL typed so far is a whole statement, so the shell knows when to run it and when to ask for
/// the next line (`   ...> `).
enum SQLCompleteness {
    /// Whether `sql` ends with a complete statement: SQLite's own `sqlite3_complete`, which knows string
    /// literals, quoted names, comments and trigger bodies (a `;` inside any of them does not end a statement).
    /// A parser call only: nothing is compiled or run.
    static func isComplete(_ sql: String) -> Bool {
        sqlite3_complete(sql) != 0
    }

    /// Whether `sql` holds nothing but white space and comments (`-- …` to the line end, `/* … */`).
    static func isBlank(_ sql: String) -> Bool {
        var scalars = Substring(sql).unicodeScalars[...]
        while let first = scalars.first {
            if first.properties.isWhitespace {
                scalars = scalars.dropFirst()
            } else if scalars.starts(with: "--".unicodeScalars) {
                guard let end = scalars.firstIndex(of: "\n") else { return true }
                scalars = scalars[scalars.index(after: end)...]
            } else if scalars.starts(with: "/*".unicodeScalars) {
                let rest = scalars.dropFirst(2)
                // An unfinished comment is not blank: the next lines may close it.
                guard let end = rest.indices.first(where: { rest[$0...].starts(with: "*/".unicodeScalars) }) else {
                    return false
                }
                scalars = rest[rest.index(end, offsetBy: 2)...]
            } else {
                return false
            }
        }
        return true
    }
}
