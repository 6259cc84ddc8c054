import CSQLCipher

extension Database {
    /// Whether SQLCipher reports that this connection encrypts `schema`, as
    /// [`PRAGMA cipher_status`](https://www.zetetic.net/sqlcipher/sqlcipher-api/#cipher_status) answers it
    /// (`1`: keyed and no codec error).
    ///
    /// Every encrypted open already requires it (see ``Database/init(path:key:configuration:)``); call it to
    /// prove encryption of a connection in a health check, or of an attached database.
    ///
    /// - Throws: ``SQLCipherError/Kind/notSQLCipher`` when the engine does not know the pragma (SQLCipher
    ///   before 4.12): encryption of the connection cannot be confirmed.
    public func cipherStatus(schema: String = "main") throws(SQLCipherError) -> Bool {
        guard let status = try textValue("PRAGMA \(schema.quotedIdentifier).cipher_status") else {
            throw .api(.notSQLCipher, "the engine does not answer PRAGMA cipher_status (SQLCipher before 4.12): "
                + "whether this connection encrypts cannot be confirmed; build SQLCipherKit with a current pin",
                path: path)
        }
        return status == "1"
    }

    /// Throws unless SQLCipher confirms that this connection encrypts `main`: a keyed connection that does not
    /// would write plaintext while its caller believes otherwise.
    func requireEncrypting() throws(SQLCipherError) {
        guard try cipherStatus() else {
            throw .api(.notSQLCipher, "SQLCipher reports that this keyed connection does not encrypt "
                + "(PRAGMA cipher_status = 0); nothing was written", path: path)
        }
    }

    /// The cipher settings in effect for `schema` (salt and compatibility are not reported here: see
    /// ``cipherSalt(schema:)``).
    public func cipherSettings(schema: String = "main") throws(SQLCipherError) -> CipherSettings {
        let prefix = "PRAGMA \(schema.quotedIdentifier)."
        func value(_ pragma: String) throws(SQLCipherError) -> String? {
            try textValue(prefix + pragma)
        }
        return CipherSettings(
            pageSize: try value("cipher_page_size").flatMap { Int($0) },
            kdfIterations: try value("kdf_iter").flatMap { Int($0) },
            usesHMAC: try value("cipher_use_hmac").map { $0 == "1" },
            hmacAlgorithm: try value("cipher_hmac_algorithm").flatMap(CipherSettings.HMACAlgorithm.init(rawValue:)),
            kdfAlgorithm: try value("cipher_kdf_algorithm").flatMap(CipherSettings.KDFAlgorithm.init(rawValue:)),
            plaintextHeaderSize: try value("cipher_plaintext_header_size").flatMap { Int($0) },
            memorySecurity: try textValue("PRAGMA cipher_memory_security").map { $0 == "1" }
        )
    }

    /// The database's 16-byte salt: the first 16 bytes of page 1 (the file's first 16 bytes; in WAL mode, page 1's
    /// newest copy in the WAL, when the connection has read one), or the salt set in ``CipherSettings/salt`` when the
    /// file has a plaintext header. Keep it when you migrate a database
    /// to a plaintext header: it is needed to open it.
    public func cipherSalt(schema: String = "main") throws(SQLCipherError) -> [UInt8] {
        guard let hex = try textValue("PRAGMA \(schema.quotedIdentifier).cipher_salt"),
              let salt = Hex.bytes(hex), salt.count == Key.saltLength else {
            throw .api(.misuse, "no salt: '\(path)' is not an encrypted database", path: path)
        }
        return salt
    }
}
