import Foundation

/// The pinned engine, as `build-sqlcipher.sh` wrote `Vendor/sqlcipher.pin` out to `Vendor/build/pin.json`.
///
/// Tests compare what they see with this, never with a version written into them: bumping the pin is one file.
public struct Pin: Decodable, Sendable {
    /// SQLCipherKit's own version (`Engine.sqlcipherKitVersion`, the one line that defines it), as the build wrote
    /// it into the packages, MANIFEST.json and the SBOM: the tag their release repositories get.
    public let sqlcipherKitVersion: String
    /// SQLCipher's version (`PIN_VERSION`), as `PRAGMA cipher_version` reports it before " community".
    public let sqlcipherVersion: String
    /// The SQLite release that SQLCipher is built on (`PIN_SQLITE_VERSION`).
    public let sqliteVersion: String
    /// The source tarball's file name (`PIN_TARBALL`).
    public let tarball: String
    /// The source tarball's SHA-256 (`PIN_SHA256`).
    public let sha256: String
    /// Where the tarball is fetched from, in order (`PIN_SOURCES`: `apt:PATH` or an address).
    public let sources: [String]
    /// Where the build cached the verified tarball.
    public let cachedTarball: String
    /// SQLCipher's own test files and the number of tests each must report (`PIN_UPSTREAM_TESTS`).
    public let upstreamTests: [String: Int]
    /// SQLCipherKit's local changes to the generated amalgamation (`PIN_LOCAL_CHANGES`, with each one's
    /// `BuildSupport/engine/local-changes/NAME.change`), in the pin's order.
    public let localChanges: [LocalChange]

    /// One of SQLCipherKit's local changes: a one-line fix of an engine bug upstream has not fixed yet.
    public struct LocalChange: Decodable, Sendable, Equatable {
        /// Its name (`fts5-trigram-like-overread`), as the engine's `sqlcipherkit_local_changes()` lists it.
        public let name: String
        /// The SQLite releases it is recorded for; the build refuses any other.
        public let sqliteVersions: [String]
        /// Why it is there.
        public let reason: String
        /// The function the changed line is in.
        public let function: String
        /// The line as the generated source has it, and its replacement.
        public let match: String
        public let replace: String
    }

    /// The crypto provider the engine in `Vendor/build` was compiled with (`build-sqlcipher.sh --crypto-provider`:
    /// `sqlcipherkit` or `reference`); nil in a pin.json written before the switch existed.
    public let cryptoProvider: String?

    /// The pin of this checkout; fails with the fix when the build has not written it.
    public static let current: Result<Pin, PinError> = {
        let file = Repository.root.appendingPathComponent("Vendor/build/pin.json")
        guard let data = FileManager.default.contents(atPath: file.path) else {
            return .failure(PinError(description: "\(file.path) is missing: run ./build-sqlcipher.sh first "
                + "(the README's test command does)"))
        }
        do {
            return .success(try JSONDecoder().decode(Pin.self, from: data))
        } catch {
            return .failure(PinError(description: "\(file.path) does not read as the pin: \(error)"))
        }
    }()

    /// `cipher_version` as the pinned engine answers it.
    public var cipherVersion: String { "\(sqlcipherVersion) community" }
}

/// Why the pin could not be read.
public struct PinError: Error, CustomStringConvertible, Sendable {
    public let description: String
}
