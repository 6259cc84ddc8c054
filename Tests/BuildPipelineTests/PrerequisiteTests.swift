import Foundation
import ProcessTestSupport
import Testing

@Suite("Prerequisites", .hangGuard(.minutes(10), hang: "an install step that waits for an answer"))
struct PrerequisiteTests {
    /// Makes `folder/bin` a PATH like the machine's (links to its tools) minus the tools whose names start with
    /// `prefix`.
    static func machinePath(in folder: TemporaryDirectory, without prefix: String) throws {
        let setup = try shell(#"""
            set -e
            mkdir "$1/bin"
            for tool in /usr/bin/* /bin/* /opt/swift/usr/bin/*; do
                case "$(basename "$tool")" in "$2"*) continue ;; esac
                [ -e "$1/bin/$(basename "$tool")" ] || ln -s "$tool" "$1/bin/"
            done
            """#, folder.path, prefix)
        #expect(setup.status == 0, "\(setup)")
    }

    @Test("a missing tcl stops the build naming the package when it may not install")
    func missingTclIsNamed() throws {
        let folder = try TemporaryDirectory()
        try Self.machinePath(in: folder, without: "tclsh")
        let result = try run(Repository.buildScript, ["fetch"],
                             environment: ["PATH": folder.path + "/bin", "SQLCIPHERKIT_NO_INSTALL": "1",
                                           "SQLCIPHERKIT_CACHE_DIR": folder.file("cache")])
        #expect(result.status == 1, "\(result)")
        #expect(result.output.contains("missing system packages: tcl (install them: sudo apt-get install tcl)"),
                "\(result)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("cache")), "the build went on regardless")
    }

    @Test("a missing aarch64 cross compiler stops the build naming its package when it may not install")
    func missingCrossCompilerIsNamed() throws {
        let folder = try TemporaryDirectory()
        // The aarch64 engine's phase needs the cross compiler.
        try Self.machinePath(in: folder, without: "aarch64-linux-gnu-gcc")
        let result = try run(Repository.buildScript, ["fetch"],
                             environment: ["PATH": folder.path + "/bin", "SQLCIPHERKIT_NO_INSTALL": "1",
                                           "SQLCIPHERKIT_CACHE_DIR": folder.file("cache")])
        #expect(result.status == 1, "\(result)")
        #expect(result.output.contains(
            "missing system packages: gcc-aarch64-linux-gnu (install them: sudo apt-get install gcc-aarch64-linux-gnu)"),
                "\(result)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("cache")), "the build went on regardless")
    }
}
