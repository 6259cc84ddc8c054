import Foundation
import Testing

/// The protections that keep the build from shipping plaintext. Each test fails if its protection is removed.
@Suite("Build refuses what would be unsafe", .timeLimit(.minutes(5)))
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

    @Test("with a plain SQLite engine, selfCheck and every open throw notSQLCipher; only the test opt-out writes")
    func plainEngineIsRefusedAtRunTime() throws {
        let plain = try Self.plainEngine.get()
        let swiftArchive = Repository.path(".build/release/libSQLCipherKit.a")
        let folder = try TemporaryDirectory()
        try """
            // Plain SQLite has no sqlite3_key_v2/sqlite3_rekey_v2: stand-ins that accept any key and do nothing,
            // as a mislinked engine would.
            int sqlite3_key_v2(void *db, const char *name, const void *key, int length) { return 0; }
            int sqlite3_rekey_v2(void *db, const char *name, const void *key, int length) { return 0; }
            """.write(toFile: folder.file("stubs.c"), atomically: true, encoding: .utf8)
        try """
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
            print(FileManager.default.fileExists(atPath: path) ? "FAIL: a file was left" : "ok: no file left")
            // The documented opt-out (tests only) opens anyway: and this engine writes plaintext.
            let db = try Database(path: path, key: .passphrase("k"),
                                  configuration: .init(verifiesCipherEngine: false))
            try db.execute("CREATE TABLE t(v); INSERT INTO t VALUES ('opt-out')")
            db.close()
            """.write(toFile: folder.file("main.swift"), atomically: true, encoding: .utf8)
        let result = try shell(#"""
            set -e
            cd "$1"
            cc -c stubs.c -o stubs.o
            swiftc main.swift -I "$2/Modules" -I "$2/include" "$3" "$4" stubs.o -o program
            ./program "$1/test.db"
            head -c 15 test.db; echo
            """#, folder.path, Repository.dist, swiftArchive, plain)
        #expect(result.status == 0, "\(result)")
        #expect(!result.output.contains("FAIL"), "\(result)")
        #expect(result.output.contains("ok: selfCheck throws notSQLCipher"))
        #expect(result.output.contains("ok: open throws notSQLCipher"))
        #expect(result.output.contains("ok: no file left"))
        #expect(result.output.contains("SQLite format 3"), "the opt-out wrote with the plain engine: \(result)")
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
        try Data("!<arch>\n".utf8).write(to: URL(fileURLWithPath: empty))
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

    @Test("verify-symbols.sh: usage errors exit 64; a missing or non-archive file exits 1")
    func verifyUsage() throws {
        let folder = try TemporaryDirectory()
        #expect(try run(Repository.verifyScript, []).status == 64)
        #expect(try run(Repository.verifyScript, ["--no-such-option", "x.a"]).status == 64)
        let missing = try run(Repository.verifyScript, [folder.file("none.a")])
        #expect(missing.status == 1)
        #expect(missing.output.contains("no such archive"))
        try Data("hello".utf8).write(to: URL(fileURLWithPath: folder.file("text.a")))
        let text = try run(Repository.verifyScript, [folder.file("text.a")])
        #expect(text.status == 1)
        #expect(text.output.contains("not an ar archive"))
    }
}
