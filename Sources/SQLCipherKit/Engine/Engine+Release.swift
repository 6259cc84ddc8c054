extension Engine {
    /// SQLCipherKit's own version: the tag of the release this library was built from.
    ///
    /// This line is the one place that names it. `build-sqlcipher.sh` reads it from here
    /// (`BuildSupport/project_version.py`) and writes it into everything it generates: the release packages and
    /// the Fluent driver package (which depends on SQLCipherKit `from:` it), `MANIFEST.json`, the SBOM and
    /// `Vendor/build/pin.json`. The `sqlcipherkit` command prints it with `--version`, and the test command fails
    /// when a document names another version in a dependency line. To release a new version, change it here.
    ///
    /// It names this library, not the engine: ``cipherVersion`` and ``sqliteVersion`` name SQLCipher and SQLite.
    public static let sqlcipherKitVersion = "1.0.0"
}
