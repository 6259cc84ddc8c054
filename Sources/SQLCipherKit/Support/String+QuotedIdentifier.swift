import Foundation

extension String {
    /// The string as an SQL identifier in double quotes, with embedded quotes doubled.
    ///
    /// By Unicode scalars, as SQLite reads the text (found by an attacker): Swift's `Character` comparison sees a
    /// quote followed by a combining mark as another character, and left it undoubled, ending the identifier early.
    var quotedIdentifier: String {
        var quoted = String.UnicodeScalarView()
        quoted.append("\"")
        for scalar in unicodeScalars {
            if scalar == "\"" { quoted.append("\"") }
            quoted.append(scalar)
        }
        quoted.append("\"")
        return String(quoted)
    }
}
