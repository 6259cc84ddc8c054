import SQLCipherKit

/// Decides which lines the shell's history may keep: none that carries key material.
///
/// A line is never recorded when it
/// - holds the bytes of the key in use, as far as the shell can know them (the value of `--key-env`'s
///   variable, or of the key file or credential: compared without regard to letter case, so a raw key typed
///   in upper-case hex is caught too); or
/// - mentions `key` (any case: `key`, `rekey`, `hexkey`, `KEY`) in a PRAGMA, an ATTACH, or beside a URI
///   (`file:`, `?`): the shapes that carry a key in SQL, which the library refuses anyway.
///
/// A statement typed over several lines is judged whole: none of its lines is kept when the statement is
/// refused. The key typed at the key prompt never reaches the history (the prompt is not the line editor).
struct HistoryFilter {
    /// The key source's bytes, lower-cased (ASCII), wiped by ``wipe()``.
    private var secrets: [[UInt8]]

    /// A filter that knows `secrets` (each the bytes of a key source's value; empty ones are ignored).
    init(secrets: [[UInt8]]) {
        self.secrets = secrets.filter { !$0.isEmpty }.map { $0.map(Self.lowercased) }
    }

    /// Whether `entry` (one line, or the lines of one statement joined) may be recorded.
    func allows(_ entry: String) -> Bool {
        let bytes = entry.utf8.map(Self.lowercased)
        for secret in secrets where Self.contains(bytes, secret) { return false }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("key") else { return true }
        return !["pragma", "attach", "file:", "?"].contains { text.contains($0) }
    }

    /// Overwrites the secrets' bytes with zeros and forgets them.
    mutating func wipe() {
        for index in secrets.indices { KeyMemory.wipe(&secrets[index]) }
        secrets = []
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}
