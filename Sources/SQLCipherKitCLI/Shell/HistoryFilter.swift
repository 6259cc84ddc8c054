import SQLCipherKit

/// Decides which lines the shell's history may keep: none that carries key material.
///
/// A line is never recorded when it
/// - holds the key in use, whatever source it came from (a variable, a file, a credential, a command, the
///   prompt): ``Key/occurs(in:)``, without regard to letter case, so a raw key typed in upper-case hex or a
///   passphrase pasted at the shell's prompt by mistake is caught too; or
/// - mentions `key` (any case: `key`, `rekey`, `hexkey`, `KEY`) in a PRAGMA, an ATTACH, or beside a URI
///   (`file:`, `?`): the shapes that carry a key in SQL, which the library refuses anyway.
///
/// A statement typed over several lines is judged whole: none of its lines is kept when the statement is
/// refused. The key typed at the key prompt never reaches the history (the prompt is not the line editor).
struct HistoryFilter {
    /// The key in use.
    let key: Key

    /// Whether `entry` (one line, or the lines of one statement joined) may be recorded.
    func allows(_ entry: String) -> Bool {
        if key.occurs(in: entry) { return false }
        let text = entry.lowercased()
        guard text.contains("key") else { return true }
        return !["pragma", "attach", "file:", "?"].contains { text.contains($0) }
    }
}
