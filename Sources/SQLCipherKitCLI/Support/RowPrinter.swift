import Foundation
import SQLCipherKit

/// Prints rows as a table, CSV or JSON.
struct RowPrinter {
    let format: Query.Format
    let columns: [String]

    func print(_ cursor: RowCursor) throws {
        switch format {
        case .table:
            let rows = try cursor.all().map { $0.values.map(Self.text) }
            let widths = columns.indices.map { index in
                ([columns[index].count] + rows.map { $0[index].count }).max() ?? 0
            }
            func line(_ cells: [String]) -> String {
                zip(cells, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: " | ")
            }
            Swift.print(line(columns))
            Swift.print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-+-"))
            rows.forEach { Swift.print(line($0)) }
        case .csv:
            Swift.print(columns.map(Self.csvField).joined(separator: ","))
            while let row = try cursor.next() {
                Swift.print(row.values.map { $0.isNull ? "" : Self.csvField(Self.text($0)) }.joined(separator: ","))
            }
        case .json:
            var objects: [[String: Any]] = []
            while let row = try cursor.next() {
                var object: [String: Any] = [:]
                for (name, value) in zip(columns, row.values) { object[name] = Self.json(value) }
                objects.append(object)
            }
            let data = try JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys])
            Swift.print(String(decoding: data, as: UTF8.self))
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

    static func json(_ value: DatabaseValue) -> Any {
        switch value {
        case .null: NSNull()
        case .integer(let integer): integer
        case .real(let real): real
        case .text(let text): text
        case .blob: value.description
        }
    }

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { ",\"\n\r".contains($0) }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
