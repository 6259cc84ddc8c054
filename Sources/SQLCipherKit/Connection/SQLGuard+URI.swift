extension SQLGuard {
    /// Whether SQLite reads `name` as a URI (SQLCipher turns URI file names on: `SQLITE_USE_URI`) from which
    /// SQLCipher takes a key (`sqlite3CodecQueryParameters`): a non-empty `hexkey`, else any `key` (an empty one
    /// attaches the file without encryption), else any `textkey`; each the first of its name, compared with
    /// `strcmp`, as `uriParameter` finds it.
    static func isKeyedURI(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.starts(with: "file:".utf8) else { return false }
        let parameters = uriParameters(bytes)
        func first(_ name: String) -> [UInt8]? { parameters.first { $0.name == Array(name.utf8) }?.value }
        if let hexkey = first("hexkey"), !hexkey.isEmpty { return true }
        return first("key") != nil || first("textkey") != nil
    }

    /// A URI's query parameters as `sqlite3ParseUri` decodes them: after the first `?`, up to a `#`; `&`
    /// separates parameters and the first `=` a name from its value (none: an empty value); `%HH` is decoded (a
    /// decoded byte never delimits), and `%00` drops the rest of the section it is in; a parameter with an empty
    /// name is ignored.
    static func uriParameters(_ bytes: [UInt8]) -> [(name: [UInt8], value: [UInt8])] {
        enum Section { case path, name, value }
        func hexDigit(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        let (question, ampersand, equals, hash) = (UInt8(ascii: "?"), UInt8(ascii: "&"), UInt8(ascii: "="),
                                                   UInt8(ascii: "#"))
        var parameters: [(name: [UInt8], value: [UInt8])] = []
        var current: [UInt8] = []
        var section = Section.path
        var index = 5
        while index < bytes.count, bytes[index] != hash {
            var byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "%"), index + 1 < bytes.count, let high = hexDigit(bytes[index]),
               let low = hexDigit(bytes[index + 1]) {
                index += 2
                byte = high << 4 | low
                if byte == 0 {
                    while index < bytes.count, bytes[index] != hash,
                          section != .path || bytes[index] != question,
                          section != .name || (bytes[index] != equals && bytes[index] != ampersand),
                          section != .value || bytes[index] != ampersand {
                        index += 1
                    }
                    continue
                }
            } else if section == .name, byte == ampersand || byte == equals {
                if current.isEmpty {
                    while index < bytes.count, bytes[index] != hash, bytes[index - 1] != ampersand { index += 1 }
                    continue
                }
                parameters.append((current, []))
                current = []
                section = byte == ampersand ? .name : .value
                continue
            } else if (section == .path && byte == question) || (section == .value && byte == ampersand) {
                section = .name
                current = []
                continue
            }
            switch section {
            case .path: break
            case .name: current.append(byte)
            case .value: parameters[parameters.count - 1].value.append(byte)
            }
        }
        if section == .name, !current.isEmpty { parameters.append((current, [])) }
        return parameters
    }
}
