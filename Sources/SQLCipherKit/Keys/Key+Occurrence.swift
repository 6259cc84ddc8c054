extension Key {
    /// Whether `text` holds this key: a passphrase's bytes, or a raw key's hex digits (with its salt's, for a
    /// raw key and salt), compared without regard to ASCII letter case.
    ///
    /// For what must never keep a key, such as an interactive shell's history: a line in which the key was typed
    /// or pasted by mistake is left out. The comparison runs in the key's own wiped storage; `text` is the
    /// caller's.
    ///
    /// ```swift
    /// if !key.occurs(in: line) { history.append(line) }
    /// ```
    public func occurs(in text: some StringProtocol) -> Bool {
        let haystack = Array(text.utf8)
        return material.withUnsafeBytes { bytes in
            // A raw key's material is its blob literal, x'…': the digits between the quotes are what is typed.
            let needle = kind == .passphrase ? bytes[...] : bytes.dropFirst(2).dropLast()
            guard !needle.isEmpty, needle.count <= haystack.count else { return false }
            func folded(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte + 0x20 : byte }
            for start in 0...(haystack.count - needle.count) {
                var index = needle.startIndex, offset = start, matched = true
                while index < needle.endIndex {
                    if folded(haystack[offset]) != folded(needle[index]) {
                        matched = false
                        break
                    }
                    index += 1
                    offset += 1
                }
                if matched { return true }
            }
            return false
        }
    }
}
