import CSQLCipher
import Glibc

/// Operations on a whole database file, in place. Each writes the new file beside the old one, syncs it and
/// renames it over the old one only when complete: on any failure the original file is untouched and no
/// temporary file remains. Close every other connection to the file first.
extension Database {
    /// Removes what earlier runs left in the folder of `path` when they were killed before they could clean up
    /// (SIGKILL, a power cut): the private folders in which SQLCipherKit writes new files
    /// (`NAME.sqlcipherkit-XXXXXX`, possibly holding a whole plaintext copy) and older runs' temporary files, of
    /// this user's, that no live process holds. Every write of a new file does this first for its own folder; the
    /// CLI does it for every database it is given. Never blocks, never follows a link.
    public static func removeLeftoverFiles(besides path: String) {
        FileReplacement.removeLeftovers(inFolderOf: path)
    }

    /// Encrypts the plaintext SQLite database at `path` in place with `key` (and `cipher`).
    ///
    /// - Throws: ``SQLCipherError/Kind/wrongKeyOrNotADatabase`` when the file is not a plaintext database
    ///   (for example, already encrypted); ``SQLCipherError/Kind/busy`` when another connection still has it
    ///   open in WAL mode.
    public static func encrypt(path: String, key: Key, cipher: CipherSettings = CipherSettings(),
                               progress: ((Double) -> Void)? = nil) throws(SQLCipherError) {
        let source = try Database(unencryptedPath: path, configuration: .init(mode: .readWrite))
        try replaceInPlace(source, key: key, cipher: cipher, progress: progress)
    }

    /// Decrypts the database at `path` in place into a plaintext SQLite database.
    ///
    /// - Parameters:
    ///   - path: The database file.
    ///   - key: The database's key.
    ///   - cipher: The settings the database was written with (SQLCipher 4 defaults when empty).
    ///   - progress: Called now and then with the fraction written so far (0...1).
    public static func decrypt(path: String, key: Key, cipher: CipherSettings = CipherSettings(),
                               progress: ((Double) -> Void)? = nil) throws(SQLCipherError) {
        let source = try Database(path: path, key: key, configuration: .init(mode: .readWrite, cipher: cipher))
        try replaceInPlace(source, key: nil, cipher: CipherSettings(), progress: progress)
    }

    private static func replaceInPlace(_ source: Database, key: Key?, cipher: CipherSettings,
                                       progress: ((Double) -> Void)?) throws(SQLCipherError) {
        let path = source.path
        let temporary: TemporaryFile
        do throws(SQLCipherError) {
            // Fold a write-ahead log into the file first, so the export sees every committed change.
            try source.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            temporary = try source.writeExport(near: path, key: key, cipher: cipher, progress: progress)
        } catch {
            source.close()
            throw error
        }
        source.close()
        // SQLite removes a WAL database's -wal and -shm when its last connection closes, and a rollback journal
        // at commit. Any of them still here belongs to another connection (or a crash): replacing the file under
        // it would lose what it writes next.
        for suffix in ["-wal", "-shm", "-journal"] where access(path + suffix, F_OK) == 0 {
            throw .api(.busy, "another connection still has the database open (\(path + suffix) exists): close it "
                + "first; after a crash, open and close the database once to recover", path: path)
        }
        defer { withExtendedLifetime(temporary) {} }
        try FileReplacement.move(temporary, to: path)
    }

    /// Upgrades a SQLCipher 1, 2 or 3 database at `path` to SQLCipher 4's format in place, with
    /// `PRAGMA cipher_migrate`, and checks the result by reopening it with SQLCipher 4 settings.
    ///
    /// The migration runs on a copy of the file in a private folder beside it (as every new file is: SQLCipher's
    /// own `PATH-migrated` work file lands there too, never beside `path` where others may write), and the
    /// checked result is renamed over `path` only when complete: on any failure, or an interrupt, `path` is
    /// untouched.
    ///
    /// - Parameters:
    ///   - path: The database file. Close every other connection to it first.
    ///   - key: Its key.
    ///   - willRun: Called with the migrating connection's ``InterruptHandle`` before the migration starts, for a
    ///     caller that may want to stop it (the CLI routes SIGINT and SIGTERM to it).
    /// - Throws: ``SQLCipherError/Kind/wrongKeyOrNotADatabase`` when no SQLCipher version opens it with `key`;
    ///   ``SQLCipherError/Kind/interrupted`` after an interrupt; ``SQLCipherError/Kind/busy`` when a journal or a
    ///   write-ahead log is beside it.
    public static func migrate(path: String, key: Key,
                               willRun: ((InterruptHandle) -> Void)? = nil) throws(SQLCipherError) {
        // The file is untrusted input: its schema rows are what SQLCipher's export runs as SQL. They must hold their
        // CREATE statements only, as for encrypt and decrypt, before anything is written.
        try requireOnlySchemaStatements(inEarlierVersionAt: path, key: key)
        for suffix in ["-wal", "-journal"] where access(path + suffix, F_OK) == 0 {
            throw .api(.busy, "another connection has the database open, or a crash left its journal "
                + "(\(path + suffix) exists): close it, or open and close the file once with its settings to "
                + "recover, then migrate", path: path)
        }
        let copy = try FileReplacement.createTemporary(near: path, mode: FileReplacement.mode(from: path, plaintext: false))
        let before = try FileReplacement.copyContents(of: path, into: copy)
        try migrateCopy(copy.path, key: key, willRun: willRun)
        // cipher_migrate renamed its work file over the copy, inside the private folder: take that file as the
        // one to rename into place.
        try FileReplacement.adoptRenamedFile(copy)
        _ = try Database(path: copy.path, key: key, mode: .readOnly)
        try FileReplacement.sync(copy)
        var now = stat()
        guard stat(path, &now) == 0, now.st_size == before.st_size, now.st_mtim.tv_sec == before.st_mtim.tv_sec,
              now.st_mtim.tv_nsec == before.st_mtim.tv_nsec, now.st_ino == before.st_ino else {
            throw .api(.busy, "the database changed while it was being migrated (another process wrote to it): "
                + "nothing was replaced; stop the other process and migrate again", path: path)
        }
        try FileReplacement.move(copy, to: path)
    }

    /// Runs `cipher_migrate` on the file at `path` (the private copy).
    private static func migrateCopy(_ path: String, key: Key,
                                    willRun: ((InterruptHandle) -> Void)?) throws(SQLCipherError) {
        let database = try Database(path: path, optionalKey: key, configuration: .init(mode: .readWrite),
                                    preflight: false)
        defer { database.close() }
        // cipher_migrate does all its work while it is being prepared, with SQL of SQLCipher's own: the settings of
        // each earlier version, an ATTACH of the copy it writes (`PATH-migrated`), and sqlcipher_export. So it is not
        // compiled as the library's trusted SQL (the trust would cover everything it runs): the guard lets exactly
        // the pragma itself and those statements through (SQLGuard.cipherMigration), the engine opens for that one
        // attachment and permits that one export, and everything else it runs, the schema rows the export replays
        // among them, meets the whole guard.
        let handle = try database.requireOpenHandle()
        let main = sqlite3_db_filename(handle, "main").map { String(cString: $0) } ?? path
        database.sqlGuard.cipherMigration = (file: main + "-migrated", attached: false)
        defer { database.sqlGuard.cipherMigration = nil }
        let interrupts = database.interruptHandle.requestCount
        willRun?(database.interruptHandle)
        let result = try database.withAttachmentOpen { () throws(SQLCipherError) in
            try database.withExportPermit { () throws(SQLCipherError) in
                try database.textValue("PRAGMA cipher_migrate")
            }
        }
        if sqlite3_is_interrupted(handle) != 0 || database.interruptHandle.requestCount != interrupts {
            throw .api(.interrupted, "the migration was interrupted: the database was not changed", path: path)
        }
        guard result == "0" else {
            throw .api(.wrongKeyOrNotADatabase, "cipher_migrate found no SQLCipher version that opens the file "
                + "with this key (result \(result ?? "none"))", path: path)
        }
    }

    /// Opens the SQLCipher 1, 2 or 3 file at `path` read-only with each earlier version's settings in turn, and on
    /// the first that reads it, requires every schema row to hold its CREATE statement only
    /// (``requireOnlySchemaStatements()``). Only a wrong key or settings move on to the next version; any other
    /// failure to read the file (a journal left by a crash, which a read-only connection cannot roll back) stops the
    /// migration here, since `cipher_migrate` would read a schema this never checked. A file no earlier version
    /// reads is left to `cipher_migrate`, which reports it.
    static func requireOnlySchemaStatements(inEarlierVersionAt path: String, key: Key) throws(SQLCipherError) {
        for compatibility in [3, 2, 1] {
            var configuration = Database.Configuration(mode: .readOnly, cipher: CipherSettings(compatibility: compatibility))
            configuration.leavesFolderAsFound = true
            let earlier: Database
            do {
                earlier = try Database(path: path, key: key, configuration: configuration)
            } catch where error.kind == .wrongKeyOrNotADatabase {
                continue
            } catch {
                throw .api(error.kind, "migrate checks the file's schema before cipher_migrate runs it, and could not "
                    + "read it with SQLCipher \(compatibility)'s settings (\(error.message)). If a crash left a journal "
                    + "beside it, open the file once with those settings (CipherSettings(compatibility: "
                    + "\(compatibility))) to recover it, then migrate", path: path)
            }
            defer { earlier.close() }
            try earlier.requireOnlySchemaStatements()
            return
        }
    }

    /// Moves the database at `path` to a 32-byte plaintext header in place, as SQLCipher's documentation
    /// describes: read the salt, set the header size, force a write of the first page. Returns the salt,
    /// which is no longer stored in the file: keep it, and open with
    /// `CipherSettings(plaintextHeaderSize: 32, salt: salt)` (or a ``Key/rawKey(_:salt:)`` key).
    ///
    /// Afterwards the file's first 16 bytes read `SQLite format 3\0`, which some platforms require.
    @discardableResult
    public static func migrateToPlaintextHeader(path: String, key: Key, headerSize: Int = 32)
        throws(SQLCipherError) -> [UInt8] {
        let database = try Database(path: path, key: key, configuration: .init(mode: .readWrite))
        defer { database.close() }
        let salt = try database.cipherSalt()
        try CipherSettings(plaintextHeaderSize: headerSize).validate()
        try database.trusted { () throws(SQLCipherError) in
            try database.execute("PRAGMA cipher_plaintext_header_size = \(headerSize)")
        }
        // Rewriting user_version dirties page 1, so it is written again with the plaintext header.
        try database.setUserVersion(Int32(clamping: try database.userVersion()))
        if try database.journalMode() == .wal {
            try database.execute("PRAGMA wal_checkpoint(FULL)")
        }
        return salt
    }
}
