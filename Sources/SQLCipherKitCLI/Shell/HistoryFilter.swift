import SQLCipherKit

/// Decides which lines the shell's history may keep: none that carries key material.
///
/// A line is never recorded when it
/// - holds the key in use, whatever source it came from (a variable, a file, a credential, a command, the
///   prompt): ``Key/occurs(in:)``, without regard to letter case, so a raw key typed in upper-case hex or a
///   passphrase pasted at the shell's prompt by mistake is caught too; or
/// - may hold a key by the library's one rule, ``SQLCipherError/mayHoldKey(_:)``: it names `key` (any case, percent-
///   escapes decoded), `attach` or `vacuum` (whose file name, built by an expression, can carry a URI key that no
///   spelling shows). The library refuses such keys anyway; the rule over-matches on purpose.
///
/// A statement typed over several lines is judged whole: none of its lines is kept when the statement is
/// refused. The key typed at the key prompt never reaches the history (the prompt is not the line editor).
struct HistoryFilter {
    /// The key in use.
    let key: Key

    /// Whether `entry` (one line, or the lines of one statement joined) may be recorded.
    func allows(_ entry: String) -> Bool {
        !key.occurs(in: entry) && !SQLCipherError.mayHoldKey(entry)
    }
}
