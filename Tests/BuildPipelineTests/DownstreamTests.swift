import Foundation
import ProcessTestSupport
import Testing

/// Real consumers built from dist/ alone. verify-symbols.sh --link-test builds them; each test then checks what
/// they did with its own eyes (file bytes, ldd, a second run), so a script that only claimed success fails here.
@Suite("Downstream consumers of dist/",
       .hangGuard(.minutes(5), hang: "a consumer that waits forever (for a key on its terminal, say)"))
struct DownstreamTests {
    private static let plaintextHeader = Data("SQLite format 3\0".utf8)

    /// Link-tests `archive` keeping the program in a temporary folder, then runs that program once more with
    /// a new database and marker and checks the file it wrote.
    private func linkTest(_ archive: String, _ options: [String], in folder: TemporaryDirectory) throws
        -> (program: String, output: String) {
        try Repository.requireBuild()
        let pin = try Pin.current.get()
        let result = try run(Repository.verifyScript, [archive, "--link-test", "--keep", folder.path] + options)
        #expect(result.status == 0, "\(result)")
        #expect(result.output.contains("cipher_version: \(pin.cipherVersion)"), "\(result)")

        let program = folder.file("downstream")
        let database = folder.file("again.db")
        let marker = "independent-marker-\(UUID().uuidString)"
        let rerun = try run(program, [database, marker], in: folder.path)
        #expect(rerun.status == 0, "\(rerun)")
        #expect(rerun.output.contains("cipher_version: \(pin.cipherVersion)"), "\(rerun)")
        #expect(rerun.output.contains("ok: a wrong key is refused"), "\(rerun)")
        // SQLCIPHER_OMIT_DEFAULT_LOGGING: the wrong-key attempt printed nothing of SQLCipher's own.
        #expect(!rerun.output.contains("ERROR CORE"), "SQLCipher logged to the app's stderr: \(rerun)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: database))
        #expect(bytes.count >= 4096)
        #expect(bytes.prefix(16) != Self.plaintextHeader, "the database is plaintext")
        #expect(bytes.range(of: Data(marker.utf8)) == nil, "the marker is readable in the file")
        return (program, result.output)
    }

    private func linkedLibraries(_ program: String) throws -> String {
        try run("/usr/bin/ldd", [program]).output
    }

    @Test("(a) swiftc with only -I/-L/-lSQLCipherKit writes an encrypted database; no libsqlite3")
    func swiftConsumer() throws {
        let folder = try TemporaryDirectory()
        let (program, output) = try linkTest(Repository.mergedArchive, [], in: folder)
        #expect(output.contains("engine: SQLCipher \((try Pin.current.get()).cipherVersion) (openssl"))
        let libraries = try linkedLibraries(program)
        #expect(!libraries.contains("libsqlite3"), "\(libraries)")
        #expect(libraries.contains("libcrypto"), "libcrypto should come from the module map's autolink")
        // The program's own code linked the engine statically: SQLCipher's entry points are in it.
        let symbols = try shell(#"nm "$1" | grep -c ' [Tt] sqlite3_key_v2$'"#, program)
        #expect(symbols.output.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
    }

    @Test("(b) swiftc with the system -lsqlite3 linked too: SQLCipher still answers")
    func swiftConsumerWithSystemSQLite() throws {
        let folder = try TemporaryDirectory()
        let (program, output) = try linkTest(Repository.mergedArchive, ["--with-system-sqlite"], in: folder)
        #expect(try linkedLibraries(program).contains("libsqlite3.so"))
        #expect(output.contains("ok: system libsqlite3 loaded too"))
    }

    @Test("(c) C via pkg-config sqlcipherkit, no Swift toolchain involved")
    func cConsumerViaPkgConfig() throws {
        let folder = try TemporaryDirectory()
        let (program, output) = try linkTest(Repository.engineArchive, ["--pkg-config"], in: folder)
        #expect(output.contains("pkg-config --cflags --libs sqlcipherkit:"))
        let libraries = try linkedLibraries(program)
        #expect(!libraries.contains("libsqlite3"), "\(libraries)")
        #expect(!libraries.contains("libswift"), "a C consumer of the engine must not need the Swift runtime")
    }

    @Test("(c) C via pkg-config with the system -lsqlite3 linked first: SQLCipher still answers")
    func cConsumerWithSystemSQLite() throws {
        let folder = try TemporaryDirectory()
        let (program, _) = try linkTest(Repository.engineArchive, ["--pkg-config", "--with-system-sqlite"], in: folder)
        #expect(try linkedLibraries(program).contains("libsqlite3.so"))
    }

    @Test("a shared library built from the artifact keeps its own engine in a process that has the system SQLite")
    func sharedLibraryInAProcessWithSystemSQLite() throws {
        try Repository.requireBuild()
        let pin = try Pin.current.get()
        let folder = try TemporaryDirectory()
        try writeFile(folder.file("plugin.swift"), """
            import SQLCipherKit
            @_cdecl("plugin_selfcheck")
            public func pluginSelfCheck() -> Int32 {
                guard let facts = try? Engine.selfCheck(), facts.cipherVersion == "\(pin.cipherVersion)" else { return 0 }
                return (try? Engine.proveEncryptionAtRest()) != nil ? 1 : 0
            }
            """)
        try writeFile(folder.file("host.c"), """
            #include <dlfcn.h>
            #include <stdio.h>
            #include <sqlite3.h>
            int main(int argc, char **argv) {
                printf("host sqlite: %s\\n", sqlite3_libversion());  /* the system SQLite is loaded first */
                void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
                if (!plugin) { printf("dlopen: %s\\n", dlerror()); return 2; }
                int (*check)(void) = (int (*)(void))dlsym(plugin, "plugin_selfcheck");
                int ok = check && check();
                printf("plugin selfcheck: %s\\n", ok ? "ok" : "FAILED");
                return ok ? 0 : 1;
            }
            """)
        let dist = Repository.dist
        let build = try shell(#"""
            set -e
            cd "$1"
            swiftc -emit-library plugin.swift -I "$2/Modules" -I "$2/include" -L "$2/lib" -lSQLCipherKit -o libplugin.so
            cc host.c -o host -lsqlite3 -ldl
            ./host ./libplugin.so
            """#, folder.path, dist)
        #expect(build.status == 0, "\(build)")
        #expect(build.output.contains("host sqlite: 3."))
        #expect(build.output.contains("plugin selfcheck: ok"), "\(build)")
    }

    @Test("dist/ holds the promised layout, and MANIFEST.json matches the archives")
    func distLayout() throws {
        try Repository.requireBuild()
        let dist = Repository.dist
        for file in ["lib/libSQLCipherKit.a", "lib/libsqlcipher.a", "lib/pkgconfig/sqlcipherkit.pc",
                     "include/sqlite3.h", "include/shim.h", "include/module.modulemap",
                     "Modules/SQLCipherKit.swiftmodule", "MANIFEST.json", "bin/sqlcipherkit"] {
            #expect(FileManager.default.fileExists(atPath: dist + "/" + file), "dist/SQLCipherKit/\(file)")
        }
        let manifestData = try Data(contentsOf: URL(fileURLWithPath: dist + "/MANIFEST.json"))
        let manifest = try #require(try JSONSerialization.jsonObject(with: manifestData) as? [String: Any])
        let pin = try Pin.current.get()
        #expect(manifest["sqlcipherVersion"] as? String == pin.sqlcipherVersion)
        #expect(manifest["sqliteVersion"] as? String == pin.sqliteVersion)
        #expect(manifest["sourceSHA256"] as? String == pin.sha256)
        #expect((manifest["compileFlags"] as? [String])?.contains("-DSQLITE_HAS_CODEC") == true)
        #expect((manifest["targetTriple"] as? String)?.isEmpty == false)
        let archives = try #require(manifest["archives"] as? [String: String])
        #expect(archives["lib/libSQLCipherKit.a"] == (try sha256(Repository.mergedArchive)))
        #expect(archives["lib/libsqlcipher.a"] == (try sha256(Repository.engineArchive)))
        // The merge produced one relocatable object, so linking any of it links the engine with it.
        let members = try run("/usr/bin/ar", ["t", Repository.mergedArchive]).output
        #expect(members == "SQLCipherKit.o\n")
        // The shipped CLI carries the Swift runtime: it needs no toolchain, only libcrypto and the C runtime.
        let cliLibraries = try run("/usr/bin/ldd", [dist + "/bin/sqlcipherkit"]).output
        #expect(!cliLibraries.contains("libswift") && !cliLibraries.contains("libFoundation"), "\(cliLibraries)")
        #expect(!cliLibraries.contains("libsqlite3"))
        let selfcheck = try run(dist + "/bin/sqlcipherkit", ["selfcheck"])
        #expect(selfcheck.status == 0, "\(selfcheck)")
        #expect(selfcheck.output.contains("encrypted_at_rest: yes"))
        // The shipped shim includes the sqlite3.h beside it, not a path into Vendor/.
        let shim = try String(contentsOfFile: dist + "/include/shim.h", encoding: .utf8)
        #expect(shim.contains("#include \"sqlite3.h\"\n"))
        #expect(!shim.contains("#include \"../../Vendor"))
    }
}
