import Foundation

extension String {
    /// The string as an SQL identifier in double quotes, with embedded quotes doubled.
    var quotedIdentifier: String {
        "\"" + replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
