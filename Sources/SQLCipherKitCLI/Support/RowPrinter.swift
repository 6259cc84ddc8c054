import Foundation
import SQLCipherKit

/// How ``RowPrinter`` lays rows out.
enum RowFormat: String, CaseIterable {
    /// Aligned columns separated by `|`, with a header line and a rule under it.
    case table
    /// RFC 4180 CSV: a header line, then one line per row; NULL is an empty field.
    case csv
    /// One JSON array of objects, one per row, keys in column order (see ``RowPrinter/uniqueNames(_:)``).
    case json
    /// sqlite3's `.mode line`: `name = value`, one column a line, a blank line between rows.
    case line
}

/// Prints the rows of one statement as a table, CSV, JSON or `name = value` lines, through an
/// ``OutputWriter`` (so a failed write fails the command).
///
/// Every column is printed, in the statement's order, duplicates included. JSON keeps them apart by the rule
/// ``uniqueNames(_:)`` documents: `SELECT 1 AS a, 2 AS a` prints `[{"a":1,"a:1":2}]`.
///
/// Blobs print as hex (`x'…'`); NULL as `NULL` (table, line), an empty field (csv) or `null` (json).
struct RowPrinter {
    let format: RowFormat
    let columns: [String]
    /// Whether table and CSV output start with the column names (JSON and line output always name them).
    var headers = true
    let output: OutputWriter

    /// A printer for `query`'s `--format`, writing to standard output.
    init(format: Query.Format, columns: [String]) {
        self.init(format: RowFormat(rawValue: format.rawValue) ?? .table, columns: columns,
                  output: .standardOutput)
    }

    /// A printer writing to `output`.
    init(format: RowFormat, columns: [String], headers: Bool = true, output: OutputWriter) {
        self.format = format
        self.columns = columns
        self.headers = headers
        self.output = output
    }

    /// Prints every row `cursor` yields, then flushes the output.
    ///
    /// - Throws: the cursor's error (an interrupted statement, a refused one), or the writer's when the output
    ///   cannot be written.
    func print(_ cursor: RowCursor) throws {
        switch format {
        case .table: try printTable(cursor)
        case .csv: try printCSV(cursor)
        case .json: try printJSON(cursor)
        case .line: try printLines(cursor)
        }
        try output.flush()
    }

    private func printTable(_ cursor: RowCursor) throws {
        let rows = try cursor.all().map { $0.values.map(Self.text) }
        let widths = columns.indices.map { index in
            ([headers ? columns[index].count : 0] + rows.map { $0[index].count }).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: " | ")
        }
        if headers {
            try output.line(line(columns))
            try output.line(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-+-"))
        }
        for row in rows { try output.line(line(row)) }
    }

    private func printCSV(_ cursor: RowCursor) throws {
        if headers { try output.line(columns.map(Self.csvField).joined(separator: ",")) }
        while let row = try cursor.next() {
            try output.line(row.values.map { $0.isNull ? "" : Self.csvField(Self.text($0)) }.joined(separator: ","))
        }
    }

    private func printJSON(_ cursor: RowCursor) throws {
        let keys = Self.uniqueNames(columns).map(Self.jsonString)
        try output.write("[")
        var first = true
        while let row = try cursor.next() {
            try output.write(first ? "{" : ",{")
            first = false
            for (index, value) in row.values.enumerated() {
                try output.write((index == 0 ? "" : ",") + keys[index] + ":" + Self.json(value))
            }
            try output.write("}")
        }
        try output.line("]")
    }

    private func printLines(_ cursor: RowCursor) throws {
        let width = columns.map(\.count).max() ?? 0
        var first = true
        while let row = try cursor.next() {
            if !first { try output.line("") }
            first = false
            for (name, value) in zip(columns, row.values) {
                try output.line(String(repeating: " ", count: width - name.count) + name + " = " + Self.text(value))
            }
        }
    }

    /// The JSON keys for `names`: each name as it is, except a repeated one, which gets `:1`, `:2`, … (the
    /// smallest number that makes it unlike every other key): `a, a, b, a` → `a, a:1, b, a:2`. Column order
    /// is kept.
    static func uniqueNames(_ names: [String]) -> [String] {
        var taken = Set(names)
        var seen: Set<String> = []
        return names.map { name in
            guard seen.contains(name) else {
                seen.insert(name)
                return name
            }
            var number = 1
            while taken.contains("\(name):\(number)") { number += 1 }
            let unique = "\(name):\(number)"
            taken.insert(unique)
            return unique
        }
    }

    static func text(_ value: DatabaseValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let integer): String(integer)
        case .real(let real): String(real)
        case .text(let text): text
        case .blob: value.description
        }
    }

    /// `value` as a JSON value. A real that JSON cannot hold (SQLite's ±Inf) prints as SQLite's own JSON
    /// functions print it, `9e999` (read back as infinity); NaN as `null`.
    static func json(_ value: DatabaseValue) -> String {
        switch value {
        case .null: "null"
        case .integer(let integer): String(integer)
        case .real(let real):
            real.isNaN ? "null" : real.isInfinite ? (real < 0 ? "-9e999" : "9e999") : String(real)
        case .text(let text): jsonString(text)
        case .blob: jsonString(value.description)
        }
    }

    /// `text` as a JSON string (RFC 8259): quotes, backslashes and control characters escaped.
    static func jsonString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7f || scalar == "\u{2028}" || scalar == "\u{2029}":
                result += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { ",\"\n\r".contains($0) }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
