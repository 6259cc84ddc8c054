import Foundation
import SQLCipherKit

/// What the app needs to boot, from its environment: where the database is and where its key comes from.
///
/// - `TODO_DATABASE`: the database file (default `todo.db`); created, encrypted, when missing.
/// - `TODO_KEY_FILE`: a file holding the key, readable by this user only (mode `0600` or `0400`); or
/// - `TODO_KEY_CREDENTIAL`: the name of a systemd credential (`LoadCredential=NAME:…` or
///   `LoadCredentialEncrypted=NAME:…` in the unit), read from `$CREDENTIALS_DIRECTORY`.
/// - `TODO_KEY_FORMAT`: `passphrase` (default) or `raw-hex` (64 or 96 hexadecimal digits).
///
/// The key itself is never taken from an argument or an environment variable, and no message holds it.
public struct TodoSettings: Sendable, Equatable {
    /// Where the key is read from.
    public enum KeySource: Sendable, Equatable {
        /// A key file (``SQLCipherKit/Key/fromFile(_:format:)``: refused when group or others may read it).
        case file(String)
        /// A systemd credential (``SQLCipherKit/Key/fromCredential(_:format:)``).
        case credential(String)
    }

    public static let databaseVariable = "TODO_DATABASE"
    public static let keyFileVariable = "TODO_KEY_FILE"
    public static let keyCredentialVariable = "TODO_KEY_CREDENTIAL"
    public static let keyFormatVariable = "TODO_KEY_FORMAT"

    /// The database file.
    public var databasePath: String
    /// Where the key is read from.
    public var keySource: KeySource
    /// How the key's bytes are read.
    public var keyFormat: KeyFileFormat

    public init(databasePath: String, keySource: KeySource, keyFormat: KeyFileFormat = .passphrase) {
        self.databasePath = databasePath
        self.keySource = keySource
        self.keyFormat = keyFormat
    }

    /// The settings the environment gives.
    ///
    /// - Throws: ``TodoBootError`` when it names no key source, two, or an unknown key format.
    public init(environment: [String: String]) throws(TodoBootError) {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let databasePath = value(Self.databaseVariable) ?? "todo.db"
        let keySource: KeySource
        switch (value(Self.keyFileVariable), value(Self.keyCredentialVariable)) {
        case (let path?, nil): keySource = .file(path)
        case (nil, let name?): keySource = .credential(name)
        case (nil, nil):
            throw TodoBootError("no key source: set \(Self.keyFileVariable) to a key file readable by this user only "
                                + "(mode 0600), or \(Self.keyCredentialVariable) to the name of a systemd credential "
                                + "(LoadCredential=NAME:/path/to/key in the unit)")
        case (_?, _?):
            throw TodoBootError("two key sources: set either \(Self.keyFileVariable) or \(Self.keyCredentialVariable), "
                                + "not both")
        }
        let keyFormat: KeyFileFormat
        switch value(Self.keyFormatVariable) {
        case nil, "passphrase": keyFormat = .passphrase
        case "raw-hex", "rawHex": keyFormat = .rawHex
        case let other?:
            throw TodoBootError("\(Self.keyFormatVariable) is '\(other)': give 'passphrase' or 'raw-hex'")
        }
        self.init(databasePath: databasePath, keySource: keySource, keyFormat: keyFormat)
    }

    /// Reads the key from its source.
    ///
    /// - Throws: ``TodoBootError`` with SQLCipherKit's message (a missing or unprotected file, a credential the
    ///   service was not given…), which names paths and modes, never a byte of the key.
    public func key() throws(TodoBootError) -> Key {
        do {
            switch keySource {
            case .file(let path): return try Key.fromFile(path, format: keyFormat)
            case .credential(let name): return try Key.fromCredential(name, format: keyFormat)
            }
        } catch {
            throw TodoBootError("cannot read the database key: \(error.message)", kind: error.kind)
        }
    }
}

/// Why the app could not boot: what went wrong and what to do, never a byte of the key.
public struct TodoBootError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The message.
    public let message: String
    /// SQLCipherKit's reason, when the key could not be read.
    public let kind: KeySourceError.Kind?

    init(_ message: String, kind: KeySourceError.Kind? = nil) {
        self.message = message
        self.kind = kind
    }

    public var description: String { message }
}
