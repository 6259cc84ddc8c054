import Foundation
import ProcessTestSupport
import Testing

/// The protections that keep the build from shipping plaintext. Each test fails if its protection is removed.
@Suite("Build refuses what would be unsafe",
       .hangGuard(.minutes(5), hang: "a refused build that waits instead of stopping"))
struct NegativeBuildTests {
    /// An engine archive compiled from the same amalgamation without SQLITE_HAS_CODEC: plain SQLite.
    /// Compiled once (about 30 s) and shared by the tests that need it.
    static let plainEngine: Result<String, any Error> = Result {
        try Repository.requireBuild()
        // Under .build/ (gitignored) rather than /tmp, so nothing outlives the package's own build folder.
        let folder = Repository.path(".build/test-fixtures/plain-engine")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let result = try shell(#"""
            set -e
            cd "$2"
            cc -c -O0 -fPIC -DSQLCIPHER_CRYPTO_OPENSSL -DSQLITE_TEMP_STORE=2 -DSQLITE_THREADSAFE=1 \
                -o sqlite3.o "$1"
            ar rcsD libplain.a sqlite3.o
            """#, Repository.amalgamation, folder)
        guard result.status == 0 else { throw CompileFailed(output: result.output) }
        return folder + "/libplain.a"
    }

    struct CompileFailed: Error { let output: String }

    @Test("verify-symbols.sh rejects an engine built without SQLITE_HAS_CODEC")
    func verifyRejectsPlainEngine() throws {
        let archive = try Self.plainEngine.get()
        let result = try run(Repository.verifyScript, [archive])
        #expect(result.status == 1, "\(result)")
        #expect(result.output.contains("SQLCipher symbols not defined"))
        for symbol in ["sqlite3_key", "sqlite3_key_v2", "sqlite3_rekey", "sqlite3_rekey_v2", "sqlcipher_exportFunc"] {
            #expect(result.output.contains(symbol), "\(symbol) not named in: \(result.output)")
        }
    }

    @Test("plain SQLite engine: selfCheck and every open throw notSQLCipher, the at-rest proof reports plaintext")
    func plainEngineIsRefusedAtRunTime() throws {
        let plain = try Self.plainEngine.get()
        let swiftArchive = Repository.path(".build/release/libSQLCipherKit.a")
        let folder = try TemporaryDirectory()
        try writeFile(folder.file("stubs.c"), """
            #include <stdlib.h>
            #include <sqlite3.h>

            // Plain SQLite has no sqlite3_key_v2/sqlite3_rekey_v2: stand-ins that accept any key and do nothing,
            // as a mislinked engine would.
            int sqlite3_key_v2(void *db, const char *name, const void *key, int length) { return 0; }
            int sqlite3_rekey_v2(void *db, const char *name, const void *key, int length) { return 0; }
            // Nor SQLCipherKit's crypto glue, which names the crypto provider compiled in (Engine.selfCheck).
            const char *sqlcipherkit_crypto_provider(void) { return "none"; }
            int sqlcipherkit_provider_failed(void *db) { return 0; }
            int sqlcipherkit_provider_unavailable(void) { return 0; }
            // Nor its PBKDF2 glue (DatabasePool derives keys through it): stand-ins that fail.
            int sqlcipherkit_pbkdf2_hmac(const char *p, int pl, const unsigned char *s, int sl, int i, const void *d,
                                         int kl, unsigned char *o) { return 0; }
            const void *sqlcipherkit_evp_sha1(void) { return 0; }
            const void *sqlcipherkit_evp_sha256(void) { return 0; }
            const void *sqlcipherkit_evp_sha512(void) { return 0; }

            // With PRETEND_SQLCIPHER set, an engine that lies: a VFS shim answers PRAGMA cipher_version for
            // database files (SQLITE_FCNTL_PRAGMA), so opens pass the version check and write plaintext.
            static sqlite3_vfs *real_vfs;
            static sqlite3_vfs pretend_vfs;
            static const sqlite3_io_methods *real_methods;
            static sqlite3_io_methods pretend_methods;

            static int pretend_file_control(sqlite3_file *file, int op, void *argument) {
                char **pragma = argument;
                if (op == SQLITE_FCNTL_PRAGMA && getenv("PRETEND_SQLCIPHER")
                    && sqlite3_stricmp(pragma[1], "cipher_version") == 0) {
                    pragma[0] = sqlite3_mprintf("4.0.0 pretend");
                    return SQLITE_OK;
                }
                // It lies about PRAGMA cipher_status too (SQLCipher's word that the connection encrypts), so the
                // opens pass every check and only the bytes on disk can tell.
                if (op == SQLITE_FCNTL_PRAGMA && getenv("PRETEND_SQLCIPHER") && !getenv("PRETEND_VERSION_ONLY")
                    && sqlite3_stricmp(pragma[1], "cipher_status") == 0) {
                    pragma[0] = sqlite3_mprintf("1");
                    return SQLITE_OK;
                }
                return real_methods->xFileControl(file, op, argument);
            }

            static int pretend_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out) {
                int rc = real_vfs->xOpen(real_vfs, name, file, flags, out);
                if (rc == SQLITE_OK && (flags & SQLITE_OPEN_MAIN_DB) && file->pMethods) {
                    if (!real_methods) {
                        real_methods = file->pMethods;
                        pretend_methods = *real_methods;
                        pretend_methods.xFileControl = pretend_file_control;
                    }
                    if (file->pMethods == real_methods) file->pMethods = &pretend_methods;
                }
                return rc;
            }

            __attribute__((constructor)) static void install_pretend_vfs(void) {
                real_vfs = sqlite3_vfs_find(0);
                pretend_vfs = *real_vfs;
                pretend_vfs.zName = "pretend";
                pretend_vfs.xOpen = pretend_open;
                sqlite3_vfs_register(&pretend_vfs, 1);
            }
            """)
        try writeFile(folder.file("main.swift"), """
            import Foundation
            import SQLCipherKit

            let path = CommandLine.arguments[1]
            do {
                _ = try Engine.selfCheck()
                print("FAIL: selfCheck passed")
            } catch SQLCipherError.notSQLCipher {
                print("ok: selfCheck throws notSQLCipher")
            }
            do {
                _ = try Database(path: path, key: .passphrase("k"))
                print("FAIL: open passed")
            } catch SQLCipherError.notSQLCipher {
                print("ok: open throws notSQLCipher")
            }
            do {
                _ = try Database(unencryptedPath: path)
                print("FAIL: unencrypted open passed")
            } catch SQLCipherError.notSQLCipher {
                print("ok: unencrypted open throws notSQLCipher")
            }
            print(FileManager.default.fileExists(atPath: path) ? "FAIL: a file was left" : "ok: no file left")
            // An engine that claims to be SQLCipher and writes plaintext: only the proof on disk catches it.
            func proveWhilePretending() -> String {
                setenv("PRETEND_SQLCIPHER", "1", 1)
                defer { unsetenv("PRETEND_SQLCIPHER") }
                do throws(SQLCipherError) {
                    let proof = try Engine.proveEncryptionAtRest()
                    return "FAIL: proveEncryptionAtRest passed: \\(proof)"
                } catch {
                    return error.kind == .notSQLCipher ? "ok: proveEncryptionAtRest throws notSQLCipher: \\(error.message)"
                                                       : "FAIL: proveEncryptionAtRest threw \\(error)"
                }
            }
            print(proveWhilePretending())
            // An engine that answers cipher_version but not cipher_status (SQLCipher before 4.12, or a liar that
            // does not know the newer pragma): every encrypted open refuses it.
            func openWithVersionOnly() -> String {
                setenv("PRETEND_SQLCIPHER", "1", 1)
                setenv("PRETEND_VERSION_ONLY", "1", 1)
                defer { unsetenv("PRETEND_SQLCIPHER"); unsetenv("PRETEND_VERSION_ONLY") }
                do throws(SQLCipherError) {
                    let db = try Database(path: path + "-version-only", key: .passphrase("k"))
                    db.close()
                    return "FAIL: an open passed without cipher_status"
                } catch {
                    return error.kind == .notSQLCipher ? "ok: open without cipher_status throws notSQLCipher: \\(error.message)"
                                                       : "FAIL: open without cipher_status threw \\(error)"
                }
            }
            print(openWithVersionOnly())
            // The documented opt-out (tests only) opens anyway: and this engine writes plaintext.
            let db = try Database(path: path, key: .passphrase("k"),
                                  configuration: .init(verifiesCipherEngine: false))
            try db.execute("CREATE TABLE t(v); INSERT INTO t VALUES ('opt-out')")
            db.close()
            """)
        let result = try shell(#"""
            set -e
            cd "$1"
            cc -c -I "$2/include" stubs.c -o stubs.o
            swiftc main.swift -I "$2/Modules" -I "$2/include" "$3" "$4" stubs.o -o program
            ./program "$1/test.db"
            head -c 15 test.db; echo
            """#, folder.path, Repository.dist, swiftArchive, plain)
        #expect(result.status == 0, "\(result)")
        #expect(!result.output.contains("FAIL"), "\(result)")
        #expect(result.output.contains("ok: selfCheck throws notSQLCipher"))
        #expect(result.output.contains("ok: open throws notSQLCipher"))
        #expect(result.output.contains("ok: unencrypted open throws notSQLCipher"))
        #expect(result.output.contains("ok: no file left"))
        // The plaintext branch, not the version check: the pretending engine passes that.
        #expect(result.output.contains("ok: proveEncryptionAtRest throws notSQLCipher: the database written to disk "
                                       + "is plaintext"), "\(result)")
        #expect(result.output.contains("SQLite format 3"), "the opt-out wrote with the plain engine: \(result)")
        #expect(result.output.contains("ok: open without cipher_status throws notSQLCipher: the engine does not answer "
                                       + "PRAGMA cipher_status"), "\(result)")
    }

    @Test("the merge refuses an engine without the codec")
    func mergeRejectsPlainEngine() throws {
        let archive = try Self.plainEngine.get()
        let folder = try TemporaryDirectory()
        let out = folder.file("out.a")
        let result = try run(Repository.buildScript, ["merge", "--engine", archive,
                                                      "--swift", Repository.mergedArchive, "--out", out])
        #expect(result.status != 0, "\(result)")
        #expect(result.output.contains("lacks SQLCipher's codec"))
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test("the merge refuses a missing engine archive, and writes nothing")
    func mergeRejectsMissingEngine() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let out = folder.file("out.a")
        let result = try run(Repository.buildScript, ["merge", "--engine", folder.file("libsqlcipher.a"),
                                                      "--swift", Repository.mergedArchive, "--out", out])
        #expect(result.status != 0, "\(result)")
        #expect(result.output.contains("engine archive missing"))
        #expect(result.output.contains("refusing to produce an artifact"))
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test("the merge refuses an empty archive")
    func mergeRejectsEmptyArchive() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let empty = folder.file("libempty.a")
        try writeFile(empty, "!<arch>\n")
        for (engine, swift) in [(empty, Repository.mergedArchive), (Repository.engineArchive, empty)] {
            let result = try run(Repository.buildScript, ["merge", "--engine", engine, "--swift", swift,
                                                          "--out", folder.file("out.a")])
            #expect(result.status != 0, "\(result)")
            #expect(result.output.contains("is empty or not an archive"), "\(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file("out.a")))
    }

    /// A copy of `archive` in `folder` with one more member, `name`, made by the shell command `make` (run in
    /// `folder`); returns the copy's path.
    private func archive(_ archive: String, plus name: String, madeBy make: String, in folder: TemporaryDirectory)
        throws -> String {
        let copy = folder.file("with-" + name.replacingOccurrences(of: ".o", with: "") + ".a")
        let result = try shell(#"set -e; cd "$1"; eval "$2"; cp "$3" "$4"; ar rD "$4" "$5""#,
                               folder.path, make, archive, copy, name)
        #expect(result.status == 0, "\(result)")
        return copy
    }

    @Test("the merge refuses members built for another architecture")
    func mergeRejectsForeignArchitecture() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let foreign = try archive(Repository.mergedArchive, plus: "foreign.o", madeBy: """
            echo 'int sqlcipherkit_foreign(void) { return 1; }' > foreign.c
            clang -target aarch64-unknown-linux-gnu -c foreign.c -o foreign.o
            """, in: folder)
        let result = try run(Repository.buildScript, ["merge", "--engine", Repository.engineArchive,
                                                      "--swift", foreign, "--out", folder.file("out.a")])
        #expect(result.status != 0, "\(result)")
        #expect(result.output.contains("foreign.o) is built for 'AArch64'"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("out.a")))

        // A member that is not an object at all is named too, not a silent exit.
        let text = try archive(Repository.mergedArchive, plus: "notelf.o", madeBy: "echo 'not an object' > notelf.o",
                               in: folder)
        let notELF = try run(Repository.buildScript, ["merge", "--engine", Repository.engineArchive,
                                                      "--swift", text, "--out", folder.file("out.a")])
        #expect(notELF.status != 0, "\(notELF)")
        #expect(notELF.output.contains("notelf.o) is built for 'not ELF'"), "\(notELF)")
    }

    @Test("verify-symbols.sh rejects an archive that leaves a sqlite3_* symbol undefined")
    func verifyRejectsUndefinedSQLiteSymbol() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let engine = try archive(Repository.engineArchive, plus: "extra.o", madeBy: """
            echo 'int sqlite3_not_in_engine(void); int f(void) { return sqlite3_not_in_engine(); }' > extra.c
            cc -c extra.c -o extra.o
            """, in: folder)
        let result = try run(Repository.verifyScript, [engine])
        #expect(result.status == 1, "\(result)")
        #expect(result.output.contains("sqlite3_* symbols undefined: sqlite3_not_in_engine"), "\(result)")
    }

    @Test("verify-symbols.sh --expect-from reports symbols lost in a merge")
    func verifyRejectsLostSymbols() throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        let result = try shell(#"""
            set -e
            cd "$1"
            echo 'int sqlcipherkit_only_here(void) { return 7; }' > extra.c
            cc -c extra.c -o extra.o
            ar rcsD libextra.a extra.o
            "$2" "$3" --expect-from libextra.a
            """#, folder.path, Repository.verifyScript, Repository.mergedArchive)
        #expect(result.status == 1, "\(result)")
        #expect(result.output.contains("sqlcipherkit_only_here"), "\(result)")
        // Many lost symbols: still a clear list, not a silent SIGPIPE exit.
        let many = try run(Repository.verifyScript, [Repository.engineArchive, "--expect-from",
                                                     Repository.path(".build/release/libSQLCipherKit.a")])
        #expect(many.status == 1, "\(many)")
        #expect(many.output.contains("symbols defined by libSQLCipherKit.a are missing: $s12SQLCipherKit"), "\(many)")
    }

    @Test("verify-symbols.sh --link-test fails when ldd fails, and prints no ok: for a check that failed",
          arguments: [("exit 1", "ldd could not list the program's libraries"),
                      ("echo '\tlibsqlite3.so.0 => /lib/libsqlite3.so.0'", "the program loads a system libsqlite3")])
    func verifyLinkTestTrustsNoSilentLdd(fakeLdd: String, failure: String) throws {
        try Repository.requireBuild()
        let folder = try TemporaryDirectory()
        // An ldd on PATH ahead of the real one: it fails outright, or it reports a system libsqlite3.
        try FileManager.default.createDirectory(atPath: folder.file("bin"), withIntermediateDirectories: true)
        try writeFile(folder.file("bin/ldd"), "#!/bin/sh\n\(fakeLdd)\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.file("bin/ldd"))
        let path = folder.file("bin") + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let result = try run(Repository.verifyScript, [Repository.engineArchive, "--link-test"],
                             environment: ["PATH": path])
        #expect(result.status == 1, "\(result)")
        #expect(result.output.contains(failure), "\(result)")
        #expect(!result.output.contains("ok: no libsqlite3"), "an ok: line after the failure: \(result)")
        // The checks that did pass still say so.
        #expect(result.output.contains("ok: header is not 'SQLite format 3'"), "\(result)")
    }

    @Test("verify-symbols.sh: usage errors exit 64; a missing or non-archive file exits 1")
    func verifyUsage() throws {
        let folder = try TemporaryDirectory()
        #expect(try run(Repository.verifyScript, []).status == 64)
        #expect(try run(Repository.verifyScript, ["--no-such-option", "x.a"]).status == 64)
        let missing = try run(Repository.verifyScript, [folder.file("none.a")])
        #expect(missing.status == 1)
        #expect(missing.output.contains("no such archive"))
        try writeFile(folder.file("text.a"), "hello")
        let text = try run(Repository.verifyScript, [folder.file("text.a")])
        #expect(text.status == 1)
        #expect(text.output.contains("not an ar archive"))
    }
}
