import SQLCipherKit

extension DatabaseInfo {
    /// The SQLCipher version number of the format, or nil for a plaintext file.
    var formatVersion: Int? {
        if case .sqlcipher(let version) = format { return version }
        return nil
    }

    /// What `sqlcipherkit info` and the shell's `.info` print: one `name: value` line per fact.
    var textLines: [String] {
        var lines = [
            "format: \(formatVersion.map(String.init) ?? "plain")  (\(format))",
            "page_size: \(pageSize)",
            "page_count: \(pageCount)",
            "file_size: \(fileSize)",
            "plaintext_header_size: \(plaintextHeaderSize)",
            "cipher_status: \(cipherStatus ? 1 : 0)",
        ]
        if let settings = cipherSettings {
            lines += [
                "kdf_iter: \(settings.kdfIterations.map(String.init) ?? "?")",
                "cipher_use_hmac: \(settings.usesHMAC.map { $0 ? "1" : "0" } ?? "?")",
                "cipher_hmac_algorithm: \(settings.hmacAlgorithm?.rawValue ?? "?")",
                "cipher_kdf_algorithm: \(settings.kdfAlgorithm?.rawValue ?? "?")",
            ]
        }
        return lines
    }
}
