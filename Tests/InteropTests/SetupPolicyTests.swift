import Foundation
import ProcessTestSupport
import Testing

/// When the interop suite may skip: only when no package index answers pip, and under CI (any true `CI`) or with
/// the require switch (`.ci/run` sets it) only with the offline switch. (Not gated on the installation, so it
/// runs wherever the suite would be skipped.)
@Suite("Interop setup: what a failed sqlcipher3 install comes to")
struct SetupPolicyTests {
    /// pip 23's output with no index reachable.
    static let offline = """
        WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection \
        broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPConnection object at 0x7f44>: Failed \
        to establish a new connection: [Errno 111] Connection refused')': /simple/sqlcipher3/
        ERROR: Could not find a version that satisfies the requirement sqlcipher3==0.6.4 (from versions: none)
        ERROR: No matching distribution found for sqlcipher3==0.6.4
        """
    /// An index answered, but has no wheel of that version for this Python.
    static let noWheel = """
        ERROR: Could not find a version that satisfies the requirement sqlcipher3==0.6.4 (from versions: 0.4.5, 0.5.0)
        ERROR: No matching distribution found for sqlcipher3==0.6.4
        """
    /// The resolver found versions but no consistent set.
    static let resolver = """
        ERROR: Cannot install sqlcipher3==0.6.4 because these package versions have conflicting dependencies.
        ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/
        """

    static func skips(_ output: String, _ environment: [String: String] = [:]) -> Bool {
        if case .cannotInstall = PythonSide.installFailed("pip failed", output: output, environment: environment) {
            return true
        }
        return false
    }

    @Test("only an unreachable index skips; a missing wheel or a resolver error fails")
    func onlyOfflineSkips() {
        #expect(Self.skips(Self.offline))
        #expect(!Self.skips(Self.noWheel))
        #expect(!Self.skips(Self.resolver))
        // An index that answered with no such package at all is not "offline" either.
        #expect(!Self.skips("ERROR: Could not find a version that satisfies the requirement x (from versions: none)"))
    }

    @Test("under CI (any true value) an offline skip fails unless the offline switch is set")
    func ciSkipNeedsTheSwitch() {
        for ci in ["true", "1", "TRUE", "True", "yes", "on", "woodpecker"] {
            #expect(!Self.skips(Self.offline, ["CI": ci]), "CI=\(ci)")
            #expect(Self.skips(Self.offline, ["CI": ci, PythonSide.offlineSwitch: "1"]), "CI=\(ci)")
            #expect(Self.skips(Self.offline, ["CI": ci, PythonSide.offlineSwitch: "true"]), "CI=\(ci)")
        }
        for ci in ["false", "0", "no", "off", "FALSE", ""] {
            #expect(Self.skips(Self.offline, ["CI": ci]), "CI=\(ci)")
        }
        #expect(!Self.skips(Self.offline, ["CI": "1", PythonSide.offlineSwitch: "0"]))
    }

    @Test("with the require switch (and no CI) an offline skip fails unless the offline switch is set")
    func requireSwitchForbidsTheSkip() {
        for value in ["1", "true", "yes"] {
            #expect(!Self.skips(Self.offline, [PythonSide.requireSwitch: value]), "\(value)")
            #expect(Self.skips(Self.offline, [PythonSide.requireSwitch: value, PythonSide.offlineSwitch: "1"]))
        }
        #expect(Self.skips(Self.offline, [PythonSide.requireSwitch: "0"]))
    }

    /// The policy is the test command's own (issue 45): Tests/run-all.sh sets the require switch (unless --narrow
    /// keeps a value given), and .ci/run only runs it: an export there would now be refused, as every variable of the
    /// project is when set without --narrow (Tests/Support/check_test_command.py checks that end to end).
    @Test("the test command sets the require switch, and .ci/run runs the test command")
    func testCommandRequiresInterop() throws {
        let runAll = try String(contentsOfFile: Repository.path("Tests/run-all.sh"), encoding: .utf8)
        let setsIt = runAll.split(separator: "\n").contains {
            $0.hasPrefix("[ -n \"${\(PythonSide.requireSwitch)+set}\" ] || export \(PythonSide.requireSwitch)=1")
        }
        #expect(setsIt, "Tests/run-all.sh does not export \(PythonSide.requireSwitch)=1")
        let script = try String(contentsOfFile: Repository.path(".ci/run"), encoding: .utf8)
        let lines = script.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.contains { $0.hasPrefix("exec ") && $0.hasSuffix("/Tests/run-all.sh\"") }, "\(script)")
        #expect(!lines.contains { $0.hasPrefix("export ") }, "\(script)")
    }
}
