import Foundation
import ProcessTestSupport
import SQLCipherKit
import Testing

/// `Examples/systemd/`: the unit and timer pass `systemd-analyze verify`, and the unit's commands, read from the
/// file, run as the service manager would run them (a credentials folder, a state folder), leaving an encrypted
/// copy that opens with the credential's key.
@Suite("systemd example (Examples/systemd)", .timeLimit(.minutes(5)))
struct SystemdExampleTests {
    static let folder = Repository.path("Examples/systemd")
    static let unit = folder + "/app-db-backup.service"
    static let timer = folder + "/app-db-backup.timer"
    /// Where the unit expects the CLI; the tests point it at the built one.
    static let installedCLI = "/usr/local/bin/sqlcipherkit"

    /// The unit's `KEY=value` lines, in order.
    static func settings() throws -> [(key: String, value: String)] {
        try String(contentsOfFile: unit, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), !line.hasPrefix("["), let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }
    }

    @Test("the unit and the timer pass systemd-analyze verify, and the unit is sandboxed as README says")
    func verify() throws {
        let settings = try Self.settings()
        func value(_ key: String) -> String? { settings.first { $0.key == key }?.value }
        #expect(value("LoadCredentialEncrypted") == "db-key:/etc/credstore.encrypted/app-db-key")
        #expect(value("NoNewPrivileges") == "yes" && value("ProtectSystem") == "strict")
        #expect(value("StateDirectory") == "app app-backup" && value("CapabilityBoundingSet") == "")
        #expect(value("PrivateNetwork") == "yes" && value("UMask") == "0077")
        // A crash must not dump the key: no core files (ThreatModel.md).
        #expect(value("LimitCORE") == "0")
        let analyze = try #require(["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }, "systemd-analyze is missing: install systemd (apt-get install systemd; the test command's build does)")
        // verify refuses a command that is not there: point the unit at the built CLI, in a copy.
        let scratch = try TemporaryDirectory()
        let text = try String(contentsOfFile: Self.unit, encoding: .utf8)
            .replacingOccurrences(of: Self.installedCLI, with: CLI.executable)
        try writeFile(scratch.file("app-db-backup.service"), text)
        try FileManager.default.copyItem(atPath: Self.timer, toPath: scratch.file("app-db-backup.timer"))
        let result = try runProcess(analyze, ["verify", "--man=no", scratch.file("app-db-backup.service"),
                                              scratch.file("app-db-backup.timer")], mergingStandardError: true,
                                    timeout: 120)
        #expect(result.status == 0 && result.stdout.isEmpty, "systemd-analyze verify: \(result)")
        let security = try runProcess(analyze, ["security", "--offline=yes", scratch.file("app-db-backup.service")],
                                      mergingStandardError: true, timeout: 120)
        let exposure = security.stdout.split(separator: "\n").last { $0.contains("Overall exposure level") }
        print("SYSTEMD example: systemd-analyze verify clean; \(exposure.map(String.init) ?? security.tail)")
    }

    /// The unit's sandbox as systemd applies it before exec, for a command: run as an unprivileged user (the
    /// unit's `User=`; uid and gid 65534 when the tests run as root), under its `UMask=`, `NoNewPrivileges=yes` and
    /// `SystemCallFilter=` (seccomp with SIGSYS as default action: Tests/Support/seccomp/unit-filter.c, the allow
    /// list from systemd-analyze's own groups by unit_syscalls.py). Returns the words to put before the command.
    static func sandbox(in scratch: TemporaryDirectory) throws -> [String] {
        let support = Repository.path("Tests/Support/seccomp")
        let filter = scratch.file("unit-filter")
        let compiled = try runProcess("/usr/bin/env", ["cc", "-O2", "-o", filter, support + "/unit-filter.c", "-lseccomp"],
                                      mergingStandardError: true, timeout: 120)
        #expect(compiled.status == 0, "cc unit-filter.c -lseccomp (Debian's libseccomp-dev; the test command installs it): \(compiled)")
        let listed = try runProcess("/usr/bin/env", ["python3", support + "/unit_syscalls.py", unit], timeout: 60)
        #expect(listed.status == 0, "\(listed)")
        let allowed = listed.stdout.split(separator: "\n")
        // The unit's filter: systemd's service set, without the privileged and resource calls.
        #expect(allowed.count > 300 && allowed.contains("read") && !allowed.contains("setpriority")
                && !allowed.contains("fchown"), "\(allowed.count) calls")
        try writeFile(scratch.file("allowed.txt"), listed.stdout)
        let umask = try #require(settings().first { $0.key == "UMask" }?.value)
        // The unit's user must reach what it runs: the scratch folder becomes its own (a clone's folder may be
        // closed to other users), and the CLI is copied into it.
        let cli = scratch.file("sqlcipherkit")
        try FileManager.default.copyItem(atPath: CLI.executable, toPath: cli)
        guard geteuid() == 0 else { return [filter, scratch.file("allowed.txt"), umask, cli] }
        #expect(chown(scratch.path, 65534, 65534) == 0)
        return ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", filter,
                scratch.file("allowed.txt"), umask, cli]
    }

    /// `sandbox` without the CLI at its end, for another command.
    static func sandboxPrefix(_ sandbox: [String]) -> [String] { Array(sandbox.dropLast()) }

    @Test("the unit's sandbox is applied for real: a command that makes a forbidden system call dies with SIGSYS")
    func sandboxControl() throws {
        let scratch = try TemporaryDirectory()
        let sandbox = try Self.sandbox(in: scratch)
        // setpriority is in @resources, which the unit takes out of its filter.
        let prefix = Self.sandboxPrefix(sandbox)
        let forbidden = try runProcess(prefix[0], Array(prefix.dropFirst()) + ["/usr/bin/nice", "-n", "5", "/bin/true"],
                                       timeout: 60)
        #expect(forbidden.status != 0, "nice ran under the unit's filter: \(forbidden)")
        let allowed = try runProcess(prefix[0], Array(prefix.dropFirst()) + ["/bin/true"], timeout: 60)
        #expect(allowed.status == 0, "\(allowed)")
    }

    @Test("the README's key rotation, step by step: the old key stays until a backup under the new one is checked")
    func rotationRecipe() throws {
        // The recipe's steps, in this order, in the README.
        let whole = try String(contentsOfFile: Self.folder + "/README.md", encoding: .utf8)
        let section = try #require(whole.range(of: "## Rotating the key"), "the README has no rotation section")
        let readme = String(whole[section.lowerBound...].prefix { _ in true }
            .split(separator: "\n## ", maxSplits: 1).first ?? "")
        let steps = ["--name=db-key-new - /etc/credstore.encrypted/app-db-key-new", "sqlcipherkit rekey",
                     "--name=db-key-old - /etc/credstore.encrypted/app-db-key-old",
                     "--name=db-key - /etc/credstore.encrypted/app-db-key", "systemctl start app-db-backup.service",
                     "rm /etc/credstore.encrypted/app-db-key-old"]
        let positions = steps.map { readme.range(of: $0)?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil } && positions.compactMap { $0 } == positions.compactMap { $0 }.sorted(),
                "the README's rotation steps are missing or out of order: \(steps)")

        let root = try TemporaryDirectory()
        let state = root.file("state"), credentials = root.file("credentials")
        for directory in [state + "/app", state + "/app-backup", credentials] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            #expect(chmod(directory, 0o700) == 0)
        }
        func seal(_ name: String, _ hex: String) throws {
            unlink(credentials + "/" + name)
            try writeFile(credentials + "/" + name, hex + "\n")
            #expect(chmod(credentials + "/" + name, 0o400) == 0)
        }
        func run(_ arguments: [String]) throws -> ProcessResult {
            var environment = ProcessInfo.processInfo.environment
            environment["CREDENTIALS_DIRECTORY"] = credentials
            return try runProcess(CLI.executable, arguments, environment: environment, timeout: 120)
        }
        let old = Hex.string((0..<32).map { _ in UInt8.random(in: 0...255) })
        let new = Hex.string((0..<32).map { _ in UInt8.random(in: 0...255) })
        let live = state + "/app/app.db", copy = state + "/app-backup/app.db"
        try seal("db-key", old)
        let created = try Database(path: live, key: .rawKey(hex: Array(old.utf8)))
        try created.execute("CREATE TABLE note(body TEXT); INSERT INTO note VALUES ('before rotation')")
        created.close()
        // The backup the unit wrote before the rotation, under the old key.
        #expect(try run(["backup", live, copy, "--force", "--key-credential", "db-key", "--raw"]).status == 0)
        // 1. The new key under a second name. 2. The database re-encrypted with it.
        try seal("db-key-new", new)
        let rekey = try run(["rekey", live, "--key-credential", "db-key", "--raw", "--new-key-credential", "db-key-new",
                             "--new-raw"])
        #expect(rekey.status == 0, "\(rekey)")
        // 3. The old key kept as db-key-old; the new one becomes db-key.
        try seal("db-key-old", old)
        try seal("db-key", new)
        unlink(credentials + "/db-key-new")
        // Until step 4, the backup on disk opens only with the kept old key.
        #expect(try run(["check", copy, "--key-credential", "db-key-old", "--raw"]).status == 0)
        #expect(try run(["check", copy, "--key-credential", "db-key", "--raw"]).status == 3)
        // 4. The unit's backup under the new key, checked as its ExecStartPost checks it.
        let commands = try Self.settings().filter { ["ExecStartPre", "ExecStart", "ExecStartPost"].contains($0.key) }
        for (key, line) in commands {
            let words = line.split(separator: " ").map { $0.replacingOccurrences(of: "%S", with: state) }
            let result = try run(Array(words.dropFirst()))
            #expect(result.status == 0, "\(key)=\(line): \(result)")
        }
        #expect(try run(["check", copy, "--key-credential", "db-key", "--raw"]).status == 0)
        // 5. Only now may the old key go: nothing on disk needs it.
        unlink(credentials + "/db-key-old")
        let reopened = try Database(path: copy, key: .rawKey(hex: Array(new.utf8)), mode: .readOnly)
        #expect(try reopened.scalar(String.self, "SELECT body FROM note") == "before rotation")
    }

    @Test("the unit's ExecStartPre/ExecStart/ExecStartPost run with the credential as systemd would give it")
    func commands() throws {
        // systemd-run needs systemd as PID 1; in a container it fails at once, and the commands run here instead.
        let systemdRun = try? runProcess("/usr/bin/systemd-run", ["--wait", "--pipe", "--quiet", "true"], timeout: 20)
        print("SYSTEMD example: systemd-run \(systemdRun?.status == 0 ? "works here (not used: the commands run as the unit's)" : "unavailable here (\(systemdRun.map { $0.tail.replacingOccurrences(of: "\n", with: " ") } ?? "missing")): the unit's commands run with an emulated credentials folder")")

        let root = try TemporaryDirectory()
        let state = root.file("state"), credentials = root.file("credentials/app-db-backup.service")
        for directory in [state + "/app", state + "/app-backup", credentials] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            #expect(chmod(directory, 0o700) == 0)
        }
        let hex = Hex.string((0..<32).map { _ in UInt8.random(in: 0...255) })
        // What `openssl rand -hex 32 | systemd-creds encrypt --name=db-key - …` seals: 64 digits and a newline.
        try writeFile(credentials + "/db-key", hex + "\n")
        #expect(chmod(credentials + "/db-key", 0o400) == 0)
        // The application's live database.
        let marker = "systemd-example-marker-\(UUID().uuidString)"
        let created = try Database(path: state + "/app/app.db", key: .rawKey(hex: Array(hex.utf8)))
        _ = try created.setJournalMode(.wal)
        try created.execute("CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT)")
        created.close()
        // The service's user owns its state and its credential, as systemd arranges (`User=app`); run as root, the
        // tests give them to uid 65534, and SQLite gives the live connection's -wal and -shm to the file's owner.
        if geteuid() == 0 {
            for path in [root.path, state, state + "/app", state + "/app-backup", state + "/app/app.db",
                         root.file("credentials"), credentials, credentials + "/db-key"] {
                #expect(chown(path, 65534, 65534) == 0, "chown \(path)")
            }
        }
        let live = try Database(path: state + "/app/app.db", key: .rawKey(hex: Array(hex.utf8)))
        try live.execute("INSERT INTO note(body) VALUES (?), (?)", [marker, marker])
        let sandbox = try Self.sandbox(in: root)

        let commands = try Self.settings().filter { ["ExecStartPre", "ExecStart", "ExecStartPost"].contains($0.key) }
        #expect(commands.map(\.key) == ["ExecStartPre", "ExecStart", "ExecStartPost"])
        var environment = ProcessInfo.processInfo.environment
        environment["CREDENTIALS_DIRECTORY"] = credentials
        environment["STATE_DIRECTORY"] = "\(state)/app:\(state)/app-backup"
        for (key, line) in commands {
            let words = line.split(separator: " ").map { $0.replacingOccurrences(of: "%S", with: state) }
            #expect(words.first == Self.installedCLI, "\(key)")
            #expect(!words.joined().localizedCaseInsensitiveContains(hex))
            // Under the unit's own sandbox: its user, umask, NoNewPrivileges and system call filter.
            let result = try runProcess(sandbox[0], Array(sandbox.dropFirst()) + words.dropFirst(),
                                        environment: environment, timeout: 120)
            #expect(result.status == 0, "\(key)=\(line) under the unit's sandbox (159: killed by SIGSYS): \(result)")
            #expect(!result.output.localizedCaseInsensitiveContains(hex), "\(key) printed the key")
        }
        // The live connection stayed open throughout (the application), with its WAL: the copy has both rows.
        live.close()
        let copy = try Database(path: state + "/app-backup/app.db", key: .rawKey(hex: Array(hex.utf8)), mode: .readOnly)
        #expect(try copy.scalar(Int.self, "SELECT count(*) FROM note WHERE body = ?", [marker]) == 2)
        copy.close()
        for folder in [state + "/app", state + "/app-backup"] {
            for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
                #expect(!name.contains(".sqlcipherkit-"), "a temporary file was left: \(name)")
                let bytes = try contents(of: folder + "/" + name)
                #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(name) holds the marker in plaintext")
            }
        }
    }
}
