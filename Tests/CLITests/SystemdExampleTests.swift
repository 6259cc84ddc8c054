import Foundation
import ProcessTestSupport
import SQLCipherKit
import Testing

/// `Examples/systemd/`: the unit and timer pass `systemd-analyze verify` and keep their `systemd-analyze security`
/// score; the unit's commands, read from the file, run as the service manager would run them (a credentials
/// folder, a state folder, the unit's sandbox), leaving an encrypted, checked copy and the one before it; a copy
/// that fails its check is never rotated in; the README's restore and key rotation run as written.
@Suite("systemd example (Examples/systemd)",
       .hangGuard(.minutes(5), hang: "a unit command that waits forever (a rotation that never ends)"))
struct SystemdExampleTests {
    static let folder = Repository.path("Examples/systemd")
    static let unit = folder + "/app-db-backup.service"
    static let timer = folder + "/app-db-backup.timer"
    /// Where the unit expects the CLI; the tests point it at the built one.
    static let installedCLI = "/usr/local/bin/sqlcipherkit"
    /// The `systemd-analyze security` exposure the unit reaches on systemd 252 (0.6 before issue 44); a setting
    /// dropped from the sandbox raises it and fails `verify`.
    static let exposureBudget = 0.2

    /// The unit's `KEY=value` lines, in order.
    static func settings() throws -> [(key: String, value: String)] {
        try String(contentsOfFile: unit, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), !line.hasPrefix("["), let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }
    }

    /// The unit's `ExecStartPre=`, `ExecStart=` and `ExecStartPost=` commands in the order systemd runs them (all
    /// the Pre lines, then the Start lines, then the Post lines), as words, `%S` replaced by `state`.
    static func execLines(state: String) throws -> [(key: String, words: [String])] {
        let settings = try Self.settings()
        return ["ExecStartPre", "ExecStart", "ExecStartPost"].flatMap { key in
            settings.filter { $0.key == key }.map { setting in
                (key, setting.value.split(separator: " ").map { $0.replacingOccurrences(of: "%S", with: state) })
            }
        }
    }

    /// The folders the unit may write inside `ProtectSystem=strict`, `state` for `%S`: its `StateDirectory=`
    /// folders and its `ReadWritePaths=`.
    static func writablePaths(state: String) throws -> [String] {
        let settings = try Self.settings()
        let stateDirectories = settings.filter { $0.key == "StateDirectory" }
            .flatMap { $0.value.split(separator: " ").map { state + "/" + $0 } }
        let readWrite = settings.filter { $0.key == "ReadWritePaths" }
            .flatMap { $0.value.split(separator: " ").map { $0.replacingOccurrences(of: "%S", with: state) } }
        return stateDirectories + readWrite
    }

    @Test("the unit and the timer pass systemd-analyze verify, the unit is sandboxed as README says, and its security score holds")
    func verify() throws {
        let settings = try Self.settings()
        func value(_ key: String) -> String? { settings.first { $0.key == key }?.value }
        #expect(value("LoadCredentialEncrypted") == "db-key:/etc/credstore.encrypted/app-db-key")
        #expect(value("NoNewPrivileges") == "yes" && value("ProtectSystem") == "strict")
        #expect(value("CapabilityBoundingSet") == "")
        // The unit owns its backup folder only: the application's folder is made writable, never listed in
        // StateDirectory= (whose mode and owner systemd re-applies on every start).
        #expect(value("StateDirectory") == "app-backup" && value("StateDirectoryMode") == "0700")
        #expect(value("ReadWritePaths") == "%S/app")
        #expect(settings.filter { $0.key == "StateDirectory" }.allSatisfy { !$0.value.split(separator: " ").contains("app") })
        #expect(value("PrivateNetwork") == "yes" && value("UMask") == "0077")
        // A oneshot unit without a start timeout blocks every later run when one hangs.
        #expect(value("Type") == "oneshot" && value("TimeoutStartSec").map { !$0.isEmpty && $0 != "infinity" } == true)
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
        // "→ Overall exposure level for app-db-backup.service: 0.2 SAFE 😀": the number after the last colon.
        let score = exposure.flatMap { line in
            line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
        }
        let parsed = try #require(score, "no exposure level in systemd-analyze security's output: \(security)")
        #expect(parsed <= Self.exposureBudget,
                "systemd-analyze security: \(parsed) > \(Self.exposureBudget): a sandbox setting was lost\n\(security.stdout)")
    }

    /// The unit's sandbox as systemd applies it before exec, for a command: run as an unprivileged user (the
    /// unit's `User=`; uid and gid 65534 when the tests run as root), under its `UMask=`, `NoNewPrivileges=yes` and
    /// `SystemCallFilter=` (seccomp with SIGSYS as default action: Tests/Support/seccomp/unit-filter.c, the allow
    /// list from systemd-analyze's own groups by unit_syscalls.py, with `RestrictAddressFamilies=none`'s
    /// EAFNOSUPPORT for socket); run as root, also in its namespaces (unit-namespace.sh: `ProtectProc=invisible`,
    /// `ProcSubset=pid`, `PrivateIPC=yes`, and `ProtectSystem=strict` as `scratch` read-only except `writable`).
    /// Not emulated: `PrivateUsers=` (every file the commands touch is the unit's user's), `PrivateNetwork=` and
    /// `PrivateDevices=`. Returns the words to put before the command; the last is the CLI (a copy in `scratch`).
    static func sandbox(in scratch: TemporaryDirectory, writable: [String] = []) throws -> [String] {
        let support = Repository.path("Tests/Support/seccomp")
        let filter = scratch.file("unit-filter")
        let compiled = try runProcess("/usr/bin/env", ["cc", "-O2", "-o", filter, support + "/unit-filter.c", "-lseccomp"],
                                      mergingStandardError: true, timeout: 120)
        #expect(compiled.status == 0, "cc unit-filter.c -lseccomp (Debian's libseccomp-dev; the test command installs it): \(compiled)")
        let listed = try runProcess("/usr/bin/env", ["python3", support + "/unit_syscalls.py", unit], timeout: 60)
        #expect(listed.status == 0, "\(listed)")
        let allowed = listed.stdout.split(separator: "\n")
        // The unit's filter: systemd's service set, without the privileged and resource calls, and no socket.
        #expect(allowed.count > 300 && allowed.contains("read") && !allowed.contains("setpriority")
                && !allowed.contains("fchown") && allowed.contains("!socket") && !allowed.contains("socket"),
                "\(allowed.count) calls")
        try writeFile(scratch.file("allowed.txt"), listed.stdout)
        let umask = try #require(settings().first { $0.key == "UMask" }?.value)
        // The unit's user must reach what it runs: the scratch folder becomes its own (a clone's folder may be
        // closed to other users), and the CLI is copied into it.
        let cli = scratch.file("sqlcipherkit")
        try FileManager.default.copyItem(atPath: CLI.executable, toPath: cli)
        guard geteuid() == 0 else { return [filter, scratch.file("allowed.txt"), umask, cli] }
        #expect(chown(scratch.path, 65534, 65534) == 0)
        return [support + "/unit-namespace.sh", scratch.path] + writable + ["--"]
            + ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", filter,
               scratch.file("allowed.txt"), umask, cli]
    }

    /// `sandbox` without the CLI at its end, for another command.
    static func sandboxPrefix(_ sandbox: [String]) -> [String] { Array(sandbox.dropLast()) }

    @Test("the unit's sandbox is applied for real: a forbidden system call dies with SIGSYS, no socket, /proc and the file system as the unit sees them")
    func sandboxControl() throws {
        let scratch = try TemporaryDirectory()
        let writable = scratch.file("writable")
        try FileManager.default.createDirectory(atPath: writable, withIntermediateDirectories: true)
        let sandbox = try Self.sandbox(in: scratch, writable: [writable])
        if geteuid() == 0 { #expect(chown(writable, 65534, 65534) == 0) }
        let prefix = Self.sandboxPrefix(sandbox)
        func run(_ words: [String]) throws -> ProcessResult {
            try runProcess(prefix[0], Array(prefix.dropFirst()) + words, timeout: 60)
        }
        // setpriority is in @resources, which the unit takes out of its filter.
        let forbidden = try run(["/usr/bin/nice", "-n", "5", "/bin/true"])
        #expect(forbidden.status != 0, "nice ran under the unit's filter: \(forbidden)")
        #expect(try run(["/bin/true"]).status == 0)
        // RestrictAddressFamilies=none: socket(2) fails with EAFNOSUPPORT (97); socketpair is left alone.
        let socket = try run(["/usr/bin/python3", "-c",
                              "import socket, sys\ntry:\n socket.socket(socket.AF_UNIX)\nexcept OSError as e:\n sys.exit(e.errno)"])
        #expect(socket.status == 97, "socket(AF_UNIX) under the unit's filter: \(socket)")
        guard geteuid() == 0 else {
            print("SYSTEMD example: not root: the unit's namespaces (ProcSubset=, ProtectProc=, ProtectSystem=) are not emulated")
            return
        }
        // ProcSubset=pid: no /proc/meminfo; /proc/self (what the CLI reads) is there.
        #expect(try run(["/bin/cat", "/proc/meminfo"]).status != 0, "ProcSubset=pid is not applied")
        #expect(try run(["/bin/cat", "/proc/self/status"]).status == 0)
        // ProtectProc=invisible: PID 1 (the namespace's root-owned init) is not seen.
        #expect(try run(["/bin/ls", "/proc/1"]).status != 0, "ProtectProc=invisible is not applied")
        // ProtectSystem=strict with ReadWritePaths=: only the writable folder takes a file.
        #expect(try run(["/bin/touch", scratch.file("outside")]).status != 0, "the scratch folder is writable")
        let inside = try run(["/bin/touch", writable + "/inside"])
        #expect(inside.status == 0, "\(inside)")
    }

    /// A host as a run of the unit sees it: `%S` (a state folder with `app/` and `app-backup/`, 0700), a
    /// credentials folder holding `db-key` (64 hex digits and a newline, 0400, as `systemd-creds` seals it), the
    /// application's live database (WAL, one table `note`), and the unit's sandbox. Run as root, everything is
    /// given to uid 65534, the unit's user.
    final class Host {
        let root: TemporaryDirectory
        let state: String
        let credentials: String
        let hex: String
        let sandbox: [String]
        let key: Key
        var live: Database?

        init() throws {
            root = try TemporaryDirectory()
            state = root.file("state")
            credentials = root.file("credentials/app-db-backup.service")
            for directory in [state + "/app", state + "/app-backup", credentials] {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                #expect(chmod(directory, 0o700) == 0)
            }
            hex = Hex.string((0..<32).map { _ in UInt8.random(in: 0...255) })
            key = try .rawKey(hex: Array(hex.utf8))
            try writeFile(credentials + "/db-key", hex + "\n")
            #expect(chmod(credentials + "/db-key", 0o400) == 0)
            let created = try Database(path: state + "/app/app.db", key: key)
            _ = try created.setJournalMode(.wal)
            try created.execute("CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT)")
            created.close()
            sandbox = try SystemdExampleTests.sandbox(in: root, writable: SystemdExampleTests.writablePaths(state: state))
            // The service's user owns its state and its credential, as systemd arranges (`User=app`); SQLite gives
            // the live connection's -wal and -shm to the file's owner.
            if geteuid() == 0 { try giveToUnitUser(root.path) }
            live = try Database(path: state + "/app/app.db", key: key)
        }


        func giveToUnitUser(_ top: String) throws {
            #expect(lchown(top, 65534, 65534) == 0, "chown \(top)")
            for name in FileManager.default.enumerator(atPath: top)?.compactMap({ $0 as? String }) ?? [] {
                #expect(lchown(top + "/" + name, 65534, 65534) == 0, "chown \(name)")
            }
        }

        /// The application writes rows (its connection stays open, as a running application's does).
        func write(_ bodies: [String]) throws {
            let live = try #require(live)
            for body in bodies { try live.execute("INSERT INTO note(body) VALUES (?)", [body]) }
        }

        /// Runs one command of the unit under its sandbox, with the unit's environment.
        func run(_ words: [String]) throws -> ProcessResult {
            var environment = ProcessInfo.processInfo.environment
            environment["CREDENTIALS_DIRECTORY"] = credentials
            environment["STATE_DIRECTORY"] = "\(state)/app-backup"
            let command = words.first == SystemdExampleTests.installedCLI
                ? sandbox : SystemdExampleTests.sandboxPrefix(sandbox) + [words[0]]
            return try runProcess(command[0], Array(command.dropFirst()) + words.dropFirst(),
                                  environment: environment, timeout: 120)
        }

        /// Runs the unit's commands in order as systemd runs a oneshot unit: each only if the one before exited
        /// 0. `between` runs after each command that succeeded. Returns the failed command, if one did.
        @discardableResult
        func runUnit(between: (String, [String]) throws -> Void = { _, _ in }) throws
            -> (key: String, words: [String], result: ProcessResult)? {
            for (key, words) in try SystemdExampleTests.execLines(state: state) {
                #expect(!words.joined().localizedCaseInsensitiveContains(hex), "\(key): the key on a command line")
                let result = try run(words)
                #expect(!result.output.localizedCaseInsensitiveContains(hex), "\(key) printed the key")
                guard result.status == 0 else { return (key, words, result) }
                try between(key, words)
            }
            return nil
        }

        /// The bodies in the database at `path`, opened read-only with the key.
        func bodies(_ path: String) throws -> [String] {
            let database = try Database(path: path, key: key, mode: .readOnly)
            defer { database.close() }
            let joined = try database.scalar(String.self,
                                             "SELECT group_concat(body, char(10)) FROM (SELECT body FROM note ORDER BY id)")
            return joined.map { $0.split(separator: "\n").map(String.init) } ?? []
        }

        func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
    }

    @Test("the unit's commands run with the credential as systemd would give it, under its sandbox")
    func commands() throws {
        // systemd-run needs systemd as PID 1; in a container it fails at once, and the commands run here instead.
        let systemdRun = try? runProcess("/usr/bin/systemd-run", ["--wait", "--pipe", "--quiet", "true"], timeout: 20)
        print("SYSTEMD example: systemd-run \(systemdRun?.status == 0 ? "works here (not used: the commands run as the unit's)" : "unavailable here (\(systemdRun.map { $0.tail.replacingOccurrences(of: "\n", with: " ") } ?? "missing")): the unit's commands run with an emulated credentials folder")")

        let host = try Host()
        let marker = "systemd-example-marker-\(UUID().uuidString)"
        try host.write([marker, marker])
        let lines = try Self.execLines(state: host.state)
        #expect(lines.map(\.key) == ["ExecStartPre", "ExecStartPre", "ExecStart", "ExecStart", "ExecStart"])
        let failed = try host.runUnit()
        #expect(failed == nil, "\(failed.map { "\($0.key)=\($0.words.joined(separator: " ")) under the unit's sandbox (159: killed by SIGSYS): \($0.result)" } ?? "")")
        // The live connection stayed open throughout (the application), with its WAL: the copy has both rows.
        try #require(host.live).close()
        host.live = nil
        #expect(try host.bodies(host.state + "/app-backup/app.db").filter { $0 == marker }.count == 2)
        #expect(!host.exists(host.state + "/app-backup/app.db.new") && !host.exists(host.state + "/app-backup/app.db.1"))
        // With the application stopped (no -shm to share), the unit's readers create the live database's -shm and
        // remove it on close: the application's folder must be writable (ReadWritePaths=).
        #expect(!host.exists(host.state + "/app/app.db-shm"))
        let stopped = try host.runUnit()
        #expect(stopped == nil, "with the application stopped: \(stopped.map { "\($0.key)=\($0.words.joined(separator: " ")): \($0.result)" } ?? "")")
        #expect(host.exists(host.state + "/app-backup/app.db.1"))
        for folder in [host.state + "/app", host.state + "/app-backup"] {
            for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
                #expect(!name.contains(".sqlcipherkit-"), "a temporary file was left: \(name)")
                let bytes = try contents(of: folder + "/" + name)
                #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(name) holds the marker in plaintext")
            }
        }
    }

    @Test("rotation: a good run leaves app.db (new) and app.db.1 (previous); a copy failing its check leaves both untouched")
    func rotation() throws {
        let host = try Host()
        let backup = host.state + "/app-backup/app.db", previous = backup + ".1", new = backup + ".new"
        // Rows enough for several pages, so that a byte flipped in the middle lands in a page of its own.
        try host.write((0..<200).map { "first night \($0) " + String(repeating: "x", count: 100) })
        var failed = try host.runUnit()
        #expect(failed == nil, "first run: \(failed.map { "\($0.key): \($0.result)" } ?? "")")
        #expect(host.exists(backup) && !host.exists(previous), "the first run makes app.db only")

        // (a) A good run: the new copy in place, the one before it as app.db.1, both opening with the key.
        try host.write(["second night"])
        failed = try host.runUnit()
        #expect(failed == nil, "second run: \(failed.map { "\($0.key): \($0.result)" } ?? "")")
        #expect(try host.bodies(backup).last == "second night")
        #expect(try host.bodies(previous).count == 200 && host.bodies(previous).last?.hasPrefix("first night 199") == true)
        #expect(!host.exists(new))

        // (b) The new copy is damaged between the backup and its check (a flipped byte in a middle page): the
        // check fails, the unit stops there, and app.db and app.db.1 are as the good run left them.
        let goodBackup = try contents(of: backup), goodPrevious = try contents(of: previous)
        try host.write(["third night"])
        var flipped = false
        failed = try host.runUnit { key, words in
            guard words.first == Self.installedCLI, words.dropFirst().first == "backup" else { return }
            #expect(words.contains(new) && !words.contains(backup), "the backup must write app.db.new only: \(words)")
            let handle = try #require(FileHandle(forUpdatingAtPath: new))
            defer { try? handle.close() }
            let size = try handle.seekToEnd()
            #expect(size > 3 * 4096, "\(size) bytes: too few pages")
            try handle.seek(toOffset: size / 2)
            let byte = try #require(try handle.read(upToCount: 1)?.first)
            try handle.seek(toOffset: size / 2)
            try handle.write(contentsOf: [byte ^ 0x5a])
            flipped = true
        }
        #expect(flipped)
        let failure = try #require(failed, "the run with a damaged copy succeeded")
        // The failure is visible: the copy's check exits non-zero (4: integrity) and says so.
        #expect(failure.key == "ExecStart" && failure.words.dropFirst().first == "check" && failure.words.contains(new),
                "failed at \(failure.key)=\(failure.words.joined(separator: " "))")
        #expect(failure.result.status == 4 && !failure.result.stderr.isEmpty, "\(failure.result)")
        #expect(try contents(of: backup) == goodBackup, "app.db changed after a failed check")
        #expect(try contents(of: previous) == goodPrevious, "app.db.1 changed after a failed check")
        #expect(host.exists(new), "the damaged copy is kept for inspection until the next run")

        // The next run removes the damaged leftover before anything else, and rotates its own checked copy.
        failed = try host.runUnit()
        #expect(failed == nil, "run after the failure: \(failed.map { "\($0.key): \($0.result)" } ?? "")")
        #expect(try host.bodies(backup).last == "third night")
        #expect(try contents(of: previous) == goodBackup, "app.db.1 is not the last good copy")

        // A rotation stopped between its two renames (power loss): no app.db, app.db.1 the last good copy, a
        // checked app.db.new. The next run leaves app.db and app.db.1, never an unchecked file.
        #expect(rename(backup, previous) == 0)
        let stranded = try contents(of: previous)
        try writeFile(new, Data("not a database".utf8))
        try host.write(["fourth night"])
        failed = try host.runUnit()
        #expect(failed == nil, "run after an interrupted rotation: \(failed.map { "\($0.key): \($0.result)" } ?? "")")
        #expect(try host.bodies(backup).last == "fourth night")
        #expect(try contents(of: previous) == stranded)
        #expect(!host.exists(new))
        try #require(host.live).close()
    }

    /// The commands of the README's section `heading` in its first `sh` block: continuation lines joined, comments
    /// and blank lines left out.
    static func readmeCommands(_ heading: String) throws -> (section: String, commands: [[String]]) {
        let whole = try String(contentsOfFile: Self.folder + "/README.md", encoding: .utf8)
        let start = try #require(whole.range(of: "## " + heading), "the README has no section \(heading)")
        let section = String(whole[start.upperBound...].split(separator: "\n## ", maxSplits: 1).first ?? "")
        let block = try #require(section.components(separatedBy: "```sh\n").dropFirst().first?
            .components(separatedBy: "```").first, "no sh block in \(heading)")
        let joined = block.replacingOccurrences(of: "\\\n", with: " ")
        let commands = joined.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
            .map { $0.split(separator: " ").map(String.init) }
        return (section, commands)
    }

    @Test("the README's restore, as written: the backup is copied (it stays), checked, and renamed over the live file")
    func restoreRecipe() throws {
        let host = try Host()
        let backup = host.state + "/app-backup/app.db", previous = backup + ".1", live = host.state + "/app/app.db"
        try host.write(["kept"])
        #expect(try host.runUnit() == nil)
        #expect(try host.runUnit() == nil)
        // After the backups, the application wrote more, then crashed: its -wal holds those rows (a stale WAL that
        // would be replayed into whatever file is at app.db).
        let application = try #require(host.live)
        try application.execute("PRAGMA wal_autocheckpoint = 0")
        try host.write(["after the backup"])
        let wal = try contents(of: live + "-wal"), shm = try contents(of: live + "-shm")
        application.close()
        host.live = nil
        try writeFile(live + "-wal", wal)
        try writeFile(live + "-shm", shm)
        if geteuid() == 0 { try host.giveToUnitUser(host.state + "/app") }
        let backups = [backup: try contents(of: backup), previous: try contents(of: previous)]

        // The steps, as the README writes them: systemd-run is replaced by this test's runner (systemd is not PID 1
        // here): its -p User=app by uid 65534, its LoadCredentialEncrypted= by a credentials folder with the key.
        let (section, commands) = try Self.readmeCommands("Restoring a backup")
        #expect(!section.contains("mv /var/lib/app-backup"), "the restore moves the backup")
        var stopped = false, started = false
        for words in commands {
            let line = words.joined(separator: " ")
            func mapped(_ word: String) -> String {
                if word == Self.installedCLI { return host.sandbox.last ?? word }
                if word.hasPrefix("/var/lib/") { return host.state + "/" + word.dropFirst("/var/lib/".count) }
                #expect(!word.hasPrefix("/") || ["/bin/", "/usr/bin/"].contains { word.hasPrefix($0) },
                        "\(line): a path the test does not map: \(word)")
                return word
            }
            #expect(!started, "a step after the application started: \(line)")
            switch words.first {
            case "systemctl":
                #expect(words.dropFirst().first.map { ["stop", "start"].contains($0) } == true && words.last == "app.service",
                        "\(line)")
                if words.contains("stop") { stopped = true } else { started = true }
            case "systemd-run":
                #expect(stopped, "\(line) runs before the application is stopped")
                var rest = Array(words.dropFirst()), options = Set<String>(), properties: [String] = []
                while let word = rest.first, word.hasPrefix("-") {
                    rest.removeFirst()
                    if word == "-p" { properties.append(rest.removeFirst()) } else { options.insert(word) }
                }
                #expect(options.isSuperset(of: ["--wait", "--pipe"]), "\(line): without --wait --pipe it does not wait")
                var credentials: String?, unitUser = false, umask = "0022"
                for property in properties {
                    let (name, value) = (String(property.prefix { $0 != "=" }), String(property.drop { $0 != "=" }.dropFirst()))
                    switch name {
                    case "User", "Group":
                        #expect(value == "app", "\(line)")
                        unitUser = true
                    case "UMask": umask = value
                    case "LoadCredentialEncrypted":
                        #expect(value == "db-key:/etc/credstore.encrypted/app-db-key", "\(line)")
                        credentials = host.credentials
                    default: Issue.record("\(line): a property the test does not emulate: \(property)")
                    }
                }
                #expect(unitUser, "\(line): not run as the application's user, the restored file is not the application's")
                var environment = ProcessInfo.processInfo.environment
                environment["CREDENTIALS_DIRECTORY"] = credentials
                let command = rest.map(mapped)
                // A transient unit: the user, its umask; no seccomp filter, no namespace.
                let runner = geteuid() == 0
                    ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []
                let filter = host.root.file("unit-filter"), allowed = host.root.file("allowed.txt")
                let full = runner + [filter, allowed, umask] + command
                let result = try runProcess(full[0], Array(full.dropFirst()), environment: environment, timeout: 120)
                #expect(result.status == 0, "\(line): \(result)")
                #expect(!result.output.localizedCaseInsensitiveContains(host.hex), "\(line) printed the key")
            case "rm", "mv", "cp":
                #expect(stopped, "\(line) runs before the application is stopped")
                let command = words.map(mapped)
                let result = try runProcess("/usr/bin/env", command, timeout: 60)
                #expect(result.status == 0, "\(line): \(result)")
            default:
                Issue.record("the README's restore has a step the test does not know: \(line)")
            }
        }
        #expect(stopped && started, "the restore does not stop and start the application")
        // The backups are still there, unchanged: copied, never moved.
        for (path, bytes) in backups {
            #expect(try contents(of: path) == bytes, "\(path) changed or went missing in the restore")
        }
        // The live database is the backup's content: the stale WAL was not replayed into it; nothing left beside.
        #expect(try FileManager.default.contentsOfDirectory(atPath: host.state + "/app").sorted() == ["app.db"])
        if geteuid() == 0 {
            var status = stat()
            #expect(stat(live, &status) == 0 && status.st_uid == 65534, "the restored file is not the application's user's")
        }
        let check = try host.run([Self.installedCLI, "check", live, "--key-credential", "db-key", "--raw"])
        #expect(check.status == 0, "\(check)")
        #expect(try host.bodies(live) == ["kept"])
    }

    @Test("the README's key rotation, step by step: the old key stays until the backups under the new one are checked")
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
        // Two backup runs: the first rotates the pre-rotation backup to app.db.1, still under the old key.
        let backupRuns = readme.components(separatedBy: "\nsystemctl start app-db-backup.service").count - 1
        #expect(backupRuns == 2, "the README's rotation runs the backup \(backupRuns) times before dropping the old key")

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
        // 4. The unit's backups under the new key, each checked by the unit before it is rotated in.
        func runUnit() throws {
            for (key, words) in try Self.execLines(state: state) {
                let result = words.first == Self.installedCLI
                    ? try run(Array(words.dropFirst())) : try runProcess(words[0], Array(words.dropFirst()), timeout: 60)
                #expect(result.status == 0, "\(key)=\(words.joined(separator: " ")): \(result)")
            }
        }
        try runUnit()
        // After one run, app.db.1 is the pre-rotation backup: it still needs the old key.
        #expect(try run(["check", copy + ".1", "--key-credential", "db-key-old", "--raw"]).status == 0)
        try runUnit()
        for path in [copy, copy + ".1"] {
            #expect(try run(["check", path, "--key-credential", "db-key", "--raw"]).status == 0, "\(path)")
        }
        // 5. Only now may the old key go: nothing on disk needs it.
        unlink(credentials + "/db-key-old")
        let reopened = try Database(path: copy, key: .rawKey(hex: Array(new.utf8)), mode: .readOnly)
        #expect(try reopened.scalar(String.self, "SELECT body FROM note") == "before rotation")
    }
}
