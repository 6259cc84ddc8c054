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
    /// The directory must be an absolute path that neither group nor others can write; the file a regular file
    /// (not a link), owned by this user or by root, that neither group nor others can write and not every user
    /// can read (systemd writes it `0400`; for a service with `User=` it leaves the file owned by root and grants
    /// the service's user read access with an ACL entry, whose mask `stat` shows in the group bits: `0440`).
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
                                 message: "the name given is not a credential name: give the NAME of "
                                    + "LoadCredential=NAME:… (a file name, without '/')")
        }
        // NAME, not the name given: an operator may have typed the key itself where its name belongs.
        let unitLine = "LoadCredentialEncrypted=NAME:/etc/credstore.encrypted/NAME"
        guard let directory, !directory.isEmpty else {
            throw KeySourceError(kind: .credentialsNotProvided, source: name,
                                 message: "\(credentialsDirectoryVariable) is not set: this process was not started by "
                                    + "systemd with the credential of the name given; add `\(unitLine)` (or "
                                    + "`LoadCredential=NAME:/path/to/key`) to the unit's [Service] section, or run "
                                    + "it with `systemd-run -p \(unitLine) …`")
        }
        let path = directory + "/" + name
        let what = "the credential '\(name)' (\(path))"
        let folder = try credentialsDirectory(directory, name: name, unitLine: unitLine)
        defer { close(folder) }
        // O_NOFOLLOW: the credential itself, never a link out of the directory.
        let descriptor = openat(folder, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW)
        guard descriptor >= 0 else {
            let code = errno
            if code == ELOOP {
                throw KeySourceError(kind: .notAFile, source: name,
                                     message: "\(what) is a symbolic link, which the service manager never writes: "
                                        + "let systemd provide the credential with `\(unitLine)`")
            }
            guard code == ENOENT else {
                // Not named: the name given may be the key itself (a long one gives ENAMETOOLONG).
                throw KeySourceError(kind: .unreadable, source: name,
                                     message: "cannot open the credential of the name given in \(directory) "
                                        + "(\(KeyReading.errnoText(code)))")
            }
            let present = credentialNames(in: directory)
            throw KeySourceError(kind: .notFound, source: name,
                                 message: "this service has no credential of the name given in \(directory) (it has: "
                                    + "\(present.isEmpty ? "none" : present.joined(separator: ", "))): add `\(unitLine)` "
                                    + "to the unit's [Service] section, or fix the name")
        }
        defer { close(descriptor) }
        let status = try KeyFileCheck.regularFileStatus(descriptor, source: name, what: what)
        // systemd writes a credential 0400, owned by root with an ACL entry for the service's user (the ACL's mask
        // shows in the group bits: 0440), or, where ACLs are missing, owned by that user. Nothing else may write it.
        guard status.st_uid == getuid() || status.st_uid == 0 else {
            throw KeySourceError(kind: .foreignOwner, source: name,
                                 message: "\(what) belongs to uid \(status.st_uid), neither to uid \(getuid()) that "
                                    + "this service runs as nor to root, as the service manager would write it: let "
                                    + "systemd provide it with `\(unitLine)`")
        }
        guard status.st_mode & 0o022 == 0 else {
            throw KeySourceError(kind: .unprotected, source: name,
                                 message: "\(what) can be written by others (mode \(KeyFileCheck.octal(status.st_mode & 0o777)): "
                                    + "\(KeyFileCheck.describe(status.st_mode & 0o077))), which the service manager never "
                                    + "does: let systemd provide it with `\(unitLine)` (or run `chmod go-w "
                                    + "\(KeyFileCheck.shellQuoted(path))`)")
        }
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

    /// Opens `directory` as the credentials directory: an absolute path to a directory that neither group nor
    /// others can write (systemd's is private to the service), so that nobody else can have put the credential, or
    /// a link, in it.
    private static func credentialsDirectory(_ directory: String, name: String,
                                             unitLine: String) throws(KeySourceError) -> Int32 {
        guard directory.hasPrefix("/") else {
            throw KeySourceError(kind: .unprotected, source: name,
                                 message: "\(credentialsDirectoryVariable) is the relative path '\(directory)'; systemd "
                                    + "sets an absolute one: let systemd provide the credential with `\(unitLine)`")
        }
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else {
            throw KeySourceError(kind: .unreadable, source: name,
                                 message: "cannot open the credentials directory \(directory): \(KeyReading.errnoText())")
        }
        var status = stat()
        do throws(KeySourceError) {
            let what = "the credentials directory \(directory)"
            try KeyPathSafety.requireRealFileSystem(folder, source: name, what: what)
            if fstat(folder, &status) == 0 {
                try KeyPathSafety.requireSafeLinks(directory, opened: status, source: name, what: what)
            }
        } catch {
            close(folder)
            throw error
        }
        guard fstat(folder, &status) == 0, status.st_mode & 0o022 == 0 else {
            let mode = KeyFileCheck.octal(status.st_mode & 0o777)
            close(folder)
            throw KeySourceError(kind: .unprotected, source: name,
                                 message: "the credentials directory \(directory) can be written by others (mode \(mode)): "
                                    + "anyone could have put the credential there. systemd's is private to the service: "
                                    + "let systemd provide it with `\(unitLine)`")
        }
        return folder
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
