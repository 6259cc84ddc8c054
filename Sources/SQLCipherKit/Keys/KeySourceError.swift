/// Why a key could not be read from a file, a systemd credential or a key command
/// (``Key/fromFile(_:format:)``, ``Key/fromCredential(_:format:)``,
/// ``Key/fromCommand(_:arguments:format:timeout:environment:)``).
///
/// The ``message`` says what went wrong and what to do about it. It names paths, modes, owners, exit statuses
/// and lengths, never a byte of what was read.
public struct KeySourceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in terms a caller can act on.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// `CREDENTIALS_DIRECTORY` is not set: the process was not started by systemd with `LoadCredential=` or
        /// `LoadCredentialEncrypted=`.
        case credentialsNotProvided
        /// The credential name is not a plain file name (empty, `.`, `..`, or holding `/`).
        case invalidCredentialName
        /// There is no such file, or no such credential in `$CREDENTIALS_DIRECTORY`.
        case notFound
        /// The file exists but cannot be opened or read (permissions, I/O).
        case unreadable
        /// The path is not a regular file (a directory, a FIFO, a device…).
        case notAFile
        /// Group or others may access the key file (or, for a credential, every user may).
        case unprotected
        /// The key file belongs to another user than the one this process runs as.
        case foreignOwner
        /// More bytes than any key: probably the wrong file.
        case tooLarge
        /// The bytes are no key of the format asked for (empty, wrong number of hex digits…).
        case invalidKey
        /// The key command could not be started, exited with a non-zero status or was killed by a signal.
        case commandFailed
        /// The key command did not finish within its timeout (it was killed).
        case commandTimedOut
    }

    /// What went wrong.
    public let kind: Kind
    /// The file, credential name or command concerned (never key material).
    public let source: String
    /// What happened and what to do about it.
    public let message: String

    /// Creates an error.
    public init(kind: Kind, source: String, message: String) {
        self.kind = kind
        self.source = source
        self.message = message
    }

    /// The message: what went wrong and what to do.
    public var description: String { message }
}

extension KeySourceError.Kind {
    /// Matches errors of this kind: `catch KeySourceError.Kind.unprotected`.
    public static func ~= (kind: Self, error: any Error) -> Bool {
        (error as? KeySourceError)?.kind == kind
    }
}
