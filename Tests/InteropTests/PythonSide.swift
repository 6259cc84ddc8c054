import Foundation
import ProcessTestSupport
import Testing

/// The independent SQLCipher build the interop tests talk to: the `sqlcipher3` wheel (its own SQLCipher,
/// SQLite and OpenSSL, built by someone else) in a virtual environment under `Vendor/build/python-venv/`
/// (gitignored), created on the first run and reused while it still holds the pinned version.
struct PythonSide: Sendable {
    /// The version tested with. The wheel bundles a newer SQLCipher 4 than the pin, which is the point: a
    /// change of this pin changes what "the other side" is, so it is deliberate.
    static let requirement = "sqlcipher3==0.6.4"
    static var pinnedVersion: String { String(requirement.split(separator: "=").last ?? "") }

    /// What setting the environment up came to, decided once per test run.
    enum Setup: Sendable {
        /// Installed and importable.
        case ready(PythonSide)
        /// No package index answered pip (offline): the one case in which the interop tests are skipped, and
        /// where a skip is not allowed (``skipFails(_:)``) only with ``offlineSwitch`` set.
        case cannotInstall(String)
        /// Installed, but it does not work: the tests run and fail on this.
        case broken(String)
    }

    static let setup: Setup = makeSetup()

    /// Whether the interop suite runs: everything but a failed installation.
    static var isInstallable: Bool {
        if case .cannotInstall = setup { return false }
        return true
    }

    /// The ready environment, or a thrown failure saying why it is broken.
    static func ready() throws -> PythonSide {
        switch setup {
        case .ready(let side): return side
        case .broken(let reason): throw InteropFailure("the sqlcipher3 environment is broken: \(reason)")
        case .cannotInstall(let reason): throw InteropFailure("sqlcipher3 could not be installed: \(reason)")
        }
    }

    static let script = Repository.path("Tests/InteropTests/python/interop.py")
    static let venv = Repository.path("Vendor/build/python-venv")
    /// Written last, once the pinned package imports: a venv without it (an interrupted setup) is rebuilt.
    static let marker = venv + "/.sqlcipherkit-requirement"

    let python: String

    /// Runs interop.py with `arguments`, the key (if any) in the child's environment only, `input` on stdin.
    func run(_ arguments: [String], key: String? = nil, input: Data = Data()) throws -> ProcessResult {
        var environment = ProcessInfo.processInfo.environment
        environment["INTEROP_KEY"] = key
        // -I: isolated mode, so no PYTHONPATH or user site-packages on this machine can change what runs.
        return try runProcess(python, ["-I", Self.script] + arguments, environment: environment, input: input,
                              timeout: 120)
    }

    // --------------------------------------------------------------------------------------------- setup ---

    /// Set (to a true value) to let a run where a skip is not allowed skip the suite when no package index answers.
    static let offlineSwitch = "SQLCIPHERKIT_INTEROP_OFFLINE"
    /// Set (to a true value) to make a skip fail the run: `.ci/run` sets it, so that CI's policy does not depend on
    /// what the runner puts in `CI`.
    static let requireSwitch = "SQLCIPHERKIT_REQUIRE_INTEROP"

    /// Whether an environment variable is set to a true value: anything but nothing, empty, `0`, `false`, `no` or
    /// `off` (any case). `CI` is a presence flag whose value varies by runner (`true`, `1`, `True`, a name).
    static func isTrue(_ value: String?) -> Bool {
        guard let value = value?.trimmingCharacters(in: .whitespaces).lowercased(), !value.isEmpty else { return false }
        return !["0", "false", "no", "off"].contains(value)
    }

    /// Whether an interop skip fails the run in `environment`: under CI or with ``requireSwitch``, unless
    /// ``offlineSwitch`` allows it.
    static func skipFails(_ environment: [String: String]) -> Bool {
        (isTrue(environment["CI"]) || isTrue(environment[requireSwitch])) && !isTrue(environment[offlineSwitch])
    }

    /// What pip prints when it could not connect to an index at all (urllib3 and socket errors).
    static let connectionFailures = [
        "NewConnectionError", "Failed to establish a new connection", "Temporary failure in name resolution",
        "Name or service not known", "Network is unreachable", "ConnectTimeoutError", "ReadTimeoutError",
        "ProxyError", "Max retries exceeded",
    ]

    /// What a failed `pip install` comes to: a skip only when no index answered (pip found no version at all
    /// and could not connect), and where a skip fails the run (``skipFails(_:)``) only with ``offlineSwitch`` set;
    /// any other failure (a resolver conflict, no wheel for this Python, a build error) is a failure of the suite.
    static func installFailed(_ summary: String, output: String, environment: [String: String]) -> Setup {
        let noIndexAnswered = output.contains("(from versions: none)")
            && connectionFailures.contains { output.contains($0) }
        guard noIndexAnswered else { return .broken(summary) }
        if skipFails(environment) {
            return .broken("\(summary)\nCI or \(requireSwitch) is set: an interop skip fails the run unless "
                           + "\(offlineSwitch)=1 is set")
        }
        return .cannotInstall(summary)
    }

    private static func makeSetup() -> Setup {
        let python = venv + "/bin/python"
        if (try? String(contentsOfFile: marker, encoding: .utf8)) == requirement + "\n",
           importedVersion(python) == pinnedVersion {
            return .ready(PythonSide(python: python))
        }
        do {
            if FileManager.default.fileExists(atPath: venv) { try FileManager.default.removeItem(atPath: venv) }
        } catch {
            return .broken("cannot remove the stale environment \(venv): \(error)")
        }
        // python3 with its venv module is a documented requirement: without it the suite fails, not skips.
        do {
            let create = try runProcess("/usr/bin/env", ["python3", "-m", "venv", venv], timeout: 300)
            guard create.status == 0 else {
                return .broken("python3 -m venv failed (exit \(create.status)): \(create.tail)")
            }
            let install = try runProcess(python, ["-m", "pip", "install", "--disable-pip-version-check",
                                                  "--no-input", "--timeout", "60", requirement], timeout: 600)
            guard install.status == 0 else {
                let setup = installFailed("pip install \(requirement) failed (exit \(install.status)): \(install.tail)",
                                          output: install.stdout + install.stderr,
                                          environment: ProcessInfo.processInfo.environment)
                if case .cannotInstall(let reason) = setup { return skipped(reason) }
                return setup
            }
        } catch {
            return .broken("could not run python3: \(error)")
        }
        guard let version = importedVersion(python) else {
            return .broken("\(requirement) installed, but importing sqlcipher3 fails")
        }
        guard version == pinnedVersion else {
            return .broken("pip installed sqlcipher3 \(version), not the pinned \(pinnedVersion)")
        }
        do {
            try writeFile(marker, requirement + "\n")
        } catch {
            return .broken("cannot write \(marker): \(error)")
        }
        return .ready(PythonSide(python: python))
    }

    /// The sqlcipher3 version that `python` imports, or nil when it cannot import it.
    private static func importedVersion(_ python: String) -> String? {
        guard FileManager.default.isExecutableFile(atPath: python),
              let result = try? runProcess(python, ["-I", "-c", "import importlib.metadata, sqlcipher3; "
                  + "print(importlib.metadata.version('sqlcipher3'))"], timeout: 60),
              result.status == 0 else { return nil }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Prints the reason as loudly as a skip deserves: this suite proves compatibility with another SQLCipher
    /// build, and a run without it proves nothing of the kind.
    private static func skipped(_ reason: String) -> Setup {
        let rule = String(repeating: "=", count: 100)
        FileHandle.standardError.write(Data("""
            \(rule)
            SKIPPED: InteropTests (SQLCipherKit against an independent SQLCipher build) did not run.
            \(requirement) could not be installed into \(venv):
            \(reason)
            \(rule)

            """.utf8))
        return .cannotInstall(reason)
    }
}
