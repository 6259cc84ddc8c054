extension String {
    /// The string with ASCII letters in lower case and every other character as it is: SQLite's
    /// `sqlite3_stricmp`/`sqlite3StrICmp` comparison, which `lowercased()` is not (it maps the Kelvin sign to
    /// `k`, so `PRAGMA \u{212A}ey` would read as `key`, a pragma SQLite does not see).
    var asciiLowercased: String {
        String(decoding: utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 },
               as: UTF8.self)
    }
}
