import Foundation

extension String {
    /// The string as an SQL identifier in double quotes, with embedded quotes doubled.
    var quotedIdentifier: String {
        quoted(by: "\"", escapingAs: "\"\"")
    }

    /// The string between two `quote`s, each `quote` inside it written as `escape`.
    ///
    /// By Unicode scalars, as SQLite and a shell read the text (found by an attacker): Swift's `Character` comparison
    /// sees a quote followed by a combining mark as another character, and left it unescaped, ending the quoted text
    /// early.
    func quoted(by quote: Unicode.Scalar, escapingAs escape: String) -> String {
        var quoted = String.UnicodeScalarView()
        quoted.append(quote)
        for scalar in unicodeScalars {
            if scalar == quote { quoted.append(contentsOf: escape.unicodeScalars) } else { quoted.append(scalar) }
        }
        quoted.append(quote)
        return String(quoted)
    }
}
