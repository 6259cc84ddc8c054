import Glibc

extension Key {
    /// The environment variable systemd sets for a service that has credentials.
    public static let credentialsDirectoryVariable = "CREDENTIALS_DIRECTORY"

    /// Reads a key from a systemd service credential: `$CREDENTIALS_DIRECTORY/name`.
    ///
    /// The service manager decrypts a credential given with `LoadCredentialEncrypted=` (sealed by
    /// `systemd-creds encrypt` with the host key or a TPM2) or copies one given with `LoadCredential=`, into a
    /// private, non-swappable file system visible to this service only, and sets `CREDENTIALS_DIRECTORY`:
    ///
    /// ```ini
    /// [Service]
    /// LoadCredentialEncrypted=db-key:/etc/credstore.encrypted/db-key
    /// ```
    /// ```swift
    /// let key = try Key.fromCredential("db-key", format: .rawHex)
    /// ```
    ///
    /// The file must be a regular file that not every user can access (systemd writes it with mode `0400`).
    /// Unlike ``fromFile(_:format:)``, its owner and group bits are not checked: for a service with `User=`,
    /// systemd leaves the file owned by root and grants the service's user read access with an ACL entry, whose
    /// mask `stat` shows in the group bits (`0440`); the directory's privacy is the service manager's promise.
    /// The bytes are read into memory that is wiped afterwards and never become a `String`.
    ///
    /// - Parameters:
    ///   - name: The credential's name, as in `LoadCredential=NAME:…` (a file name: no `/`).
    ///   - format: How to read its bytes: ``KeyFileFormat/passphrase`` or ``KeyFileFormat/rawHex``.
    /// - Throws: ``KeySourceError``: ``KeySourceError/Kind/credentialsNotProvided`` without
    ///   `CREDENTIALS_DIRECTORY` (its message shows the unit line to add), ``KeySourceError/Kind/notFound`` when
    ///   the service has no credential of that name (its message lists the names it has),
    ///   ``KeySourceError/Kind/invalidCredentialName``, ``KeySourceError/Kind/unreadable``,
    ///   ``KeySourceError/Kind/notAFile``, ``KeySourceError/Kind/unprotected``,
    ///   ``KeySourceError/Kind/tooLarge`` or ``KeySourceError/Kind/invalidKey``.
    public static func fromCredential(_ name: String, format: KeyFileFormat) throws(KeySourceError) -> Key {
        let variable = getenv(credentialsDirectoryVariable).map { String(cString: $0) }
        return try fromCredential(name, format: format, directory: variable)
    }

    /// ``fromCredential(_:format:)`` with the credentials directory given (nil or empty: not set), so that tests
    /// need not change this process's environment.
    static func fromCredential(_ name: String, format: KeyFileFormat, directory: String?) throws(KeySourceError)
        -> Key {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/") else {
            throw KeySourceError(kind: .invalidCredentialName, source: name,
                                 message: "'\(name)' is not a credential name: give the NAME of "
                                    + "LoadCredential=NAME:… (a file name, without '/')")
        }
        let unitLine = "LoadCredentialEncrypted=\(name):/etc/credstore.encrypted/\(name)"
        guard let directory, !directory.isEmpty else {
            throw KeySourceError(kind: .credentialsNotProvided, source: name,
                                 message: "\(credentialsDirectoryVariable) is not set: this process was not started by "
                                    + "systemd with the credential '\(name)'; add `\(unitLine)` (or "
                                    + "`LoadCredential=\(name):/path/to/key`) to the unit's [Service] section, or run "
                                    + "it with `systemd-run -p \(unitLine) …`")
        }
        let path = directory + "/" + name
        let what = "the credential '\(name)' (\(path))"
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            guard code == ENOENT else {
                throw KeySourceError(kind: .unreadable, source: name,
                                     message: "cannot open \(what): \(KeyReading.errnoText(code))")
            }
            let present = credentialNames(in: directory)
            throw KeySourceError(kind: .notFound, source: name,
                                 message: "this service has no credential '\(name)' in \(directory) (it has: "
                                    + "\(present.isEmpty ? "none" : present.joined(separator: ", "))): add `\(unitLine)` "
                                    + "to the unit's [Service] section, or fix the name")
        }
        defer { close(descriptor) }
        let status = try KeyFileCheck.regularFileStatus(descriptor, source: name, what: what)
        guard status.st_mode & 0o007 == 0 else {
            throw KeySourceError(kind: .unprotected, source: name,
                                 message: "\(what) is open to every user (mode \(KeyFileCheck.octal(status.st_mode & 0o777)): "
                                    + "\(KeyFileCheck.describe(status.st_mode & 0o007))), which the service manager never "
                                    + "does: let systemd provide it with `\(unitLine)` rather than setting "
                                    + "\(credentialsDirectoryVariable) by hand (or run `chmod o-rwx "
                                    + "\(KeyFileCheck.shellQuoted(path))`)")
        }
        return try KeyReading.key(readingToEnd: descriptor, format: format, source: name, what: what)
    }

    /// The names of the entries in `directory`, sorted (for a message: names only, never contents).
    private static func credentialNames(in directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}
