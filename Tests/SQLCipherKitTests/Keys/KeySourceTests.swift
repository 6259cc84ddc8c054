import Foundation
import Glibc
import ProcessTestSupport
import Testing
@testable import SQLCipherKit

/// The key sources: a checked key file, a systemd credential, a key command. Each success, each refusal with its
/// message, and the key in no message.
@Suite("Key sources: file, credential, command")
struct KeySourceTests {
    static let hex = Hex.string((0..<32).map { UInt8(0x40 + $0) })
    static let passphrase = "source-passphrase-\(UUID().uuidString)"

    /// The x'…' text a raw key from ``hex`` becomes.
    static var rawMaterial: [UInt8] { Array("x'\(hex)'".utf8) }

    /// Writes `text` to `name` in `folder` with `mode`; returns the path.
    func keyFile(_ folder: TemporaryDirectory, _ name: String = "key", _ text: String, mode: mode_t = 0o600) throws
        -> String {
        let path = folder.file(name)
        try writeFile(path, text)
        #expect(chmod(path, mode) == 0)
        return path
    }

    /// The error `body` throws, checked to hold none of the secrets.
    func refusal(_ body: () throws -> Key, secrets: [String] = [hex, passphrase]) -> KeySourceError? {
        do {
            _ = try body()
            return nil
        } catch {
            guard let error = error as? KeySourceError else {
                Issue.record("not a KeySourceError: \(error)")
                return nil
            }
            for secret in secrets {
                #expect(!error.description.localizedCaseInsensitiveContains(secret), "a key in: \(error)")
                #expect(!error.source.localizedCaseInsensitiveContains(secret))
            }
            return error
        }
    }

    // MARK: Key files

    @Test("a key file of the owner's only, 0600 or 0400, gives the key: hex (one newline, upper case) and passphrase")
    func fileSuccess() throws {
        let folder = try TemporaryDirectory()
        let hexFile = try keyFile(folder, "hex", Self.hex.uppercased() + "\n", mode: 0o400)
        let raw = try Key.fromFile(hexFile, format: .rawHex)
        #expect(raw.kind == .rawKey)
        #expect(raw.material.withUnsafeBytes { Array($0) } == Self.rawMaterial)
        let passFile = try keyFile(folder, "pass", Self.passphrase + "\r\n")
        let pass = try Key.fromFile(passFile, format: .passphrase)
        #expect(pass.kind == .passphrase)
        #expect(pass.material.withUnsafeBytes { Array($0) } == Array(Self.passphrase.utf8))
        // Only one line ending goes: a second newline is part of the passphrase.
        let twice = try Key.fromFile(try keyFile(folder, "twice", Self.passphrase + "\n\n"), format: .passphrase)
        #expect(twice.material.withUnsafeBytes { Array($0) } == Array((Self.passphrase + "\n").utf8))
        // The key opens what the same key created.
        let db = folder.file("k.db")
        let created = try Database(path: db, key: .rawKey(hex: Array(Self.hex.utf8)))
        try created.execute("CREATE TABLE t(a)")
        created.close()
        let reopened = try Database(path: db, key: raw)
        #expect(try reopened.scalar(Int.self, "SELECT count(*) FROM t") == 0)
    }

    @Test("a key file group or others can read or write is refused, naming the chmod", arguments: [0o640, 0o604, 0o620, 0o602, 0o644, 0o666])
    func fileUnprotected(mode: Int) throws {
        let folder = try TemporaryDirectory()
        let path = try keyFile(folder, "key file's", Self.hex, mode: mode_t(mode))
        let error = try #require(refusal { try Key.fromFile(path, format: .rawHex) })
        #expect(error.kind == .unprotected)
        #expect(error.message.contains("mode 0\(String(mode, radix: 8))"), "\(error)")
        #expect(error.message.contains("chmod go-rwx '\(folder.path)/key file'\\''s'"), "\(error)")
    }

    @Test("a key file another user owns is refused, naming the chown")
    func fileForeignOwner() throws {
        let folder = try TemporaryDirectory()
        let path: String
        if geteuid() == 0 {
            path = try keyFile(folder, "foreign", Self.hex, mode: 0o600)
            #expect(chown(path, 65534, 65534) == 0)
        } else {
            path = "/etc/passwd" // root's, and readable by everyone
        }
        let error = try #require(refusal { try Key.fromFile(path, format: .rawHex) })
        #expect(error.kind == .foreignOwner, "\(error)")
        #expect(error.message.contains("not to uid \(geteuid())"), "\(error)")
        #expect(error.message.contains("chown \(geteuid()) '\(path)'"), "\(error)")
    }

    @Test("a missing key file, a directory, a FIFO, an empty or malformed file: each refused with what to do")
    func fileOtherRefusals() throws {
        // "63" in the folder's name on purpose: a UUID holds it one time in eight, and a check that read the count
        // in the path made this test fail that often (CI, stop 52).
        let folder = try TemporaryDirectory(prefix: "SQLCipherKitTests-63")
        let missing = try #require(refusal {
            try Key.fromFile(folder.file("absent"), format: .rawHex)
        })
        // The path is not repeated (issue 44: an operator may have typed the key where its path belongs).
        #expect(missing.kind == .notFound && missing.message.contains("nothing at the path given")
                && !missing.message.contains("absent"), "\(missing)")
        #expect(chmod(folder.path, 0o700) == 0)
        let directory = try #require(refusal { try Key.fromFile(folder.path, format: .rawHex) })
        #expect(directory.kind == .notAFile && directory.message.contains("a directory"), "\(directory)")
        let fifo = folder.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let pipe = try #require(refusal { try Key.fromFile(fifo, format: .rawHex) })
        #expect(pipe.kind == .notAFile && pipe.message.contains("a FIFO"), "\(pipe)")
        let empty = try #require(refusal {
            try Key.fromFile(try keyFile(folder, "empty", "\n"), format: .passphrase)
        })
        #expect(empty.kind == .invalidKey && empty.message.contains("empty"), "\(empty)")
        // Hex with a digit too few: the message gives neither the digits nor how many there are (issue 44).
        // The message names the file, whose folder's random name may hold "63": the count is looked for in the rest.
        let short = String(Self.hex.dropLast())
        let shortPath = try keyFile(folder, "short", short)
        let malformed = try #require(refusal({
            try Key.fromFile(shortPath, format: .rawHex)
        }, secrets: [short]))
        let withoutPath = malformed.message.replacingOccurrences(of: shortPath, with: "PATH")
        #expect(malformed.kind == .invalidKey && withoutPath.contains("64 digits") && withoutPath.contains("PATH")
                && !withoutPath.contains("63"), "\(malformed)")
        let large = try #require(refusal {
            try Key.fromFile(try keyFile(folder, "large", String(repeating: "a", count: 70_000)), format: .passphrase)
        })
        #expect(large.kind == .tooLarge, "\(large)")
    }

    // MARK: Credentials

    /// A credentials directory as systemd gives one: 0700, the credential 0400.
    func credentials(_ folder: TemporaryDirectory, _ entries: [String: String], mode: mode_t = 0o400) throws -> String {
        let directory = folder.file("credentials")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        for (name, text) in entries {
            try writeFile(directory + "/" + name, text)
            #expect(chmod(directory + "/" + name, mode) == 0)
        }
        #expect(chmod(directory, 0o700) == 0)
        return directory
    }

    @Test("a credential in $CREDENTIALS_DIRECTORY gives the key, at 0400 and at the 0440 an ACL entry shows")
    func credentialSuccess() throws {
        for mode: mode_t in [0o400, 0o440] {
            let folder = try TemporaryDirectory()
            let directory = try credentials(folder, ["db-key": Self.hex + "\n"], mode: mode)
            let key = try Key.fromCredential("db-key", format: .rawHex, directory: directory)
            #expect(key.material.withUnsafeBytes { Array($0) } == Self.rawMaterial)
        }
    }

    @Test("without CREDENTIALS_DIRECTORY the error shows the unit line; a missing credential lists those present")
    func credentialRefusals() throws {
        let unset = try #require(refusal {
            try Key.fromCredential("db-key", format: .rawHex, directory: nil)
        })
        #expect(unset.kind == .credentialsNotProvided, "\(unset)")
        // NAME, never the name given (issue 44: it may be the key itself).
        #expect(unset.message.contains("LoadCredentialEncrypted=NAME:/etc/credstore.encrypted/NAME")
                && !unset.message.contains("db-key"), "\(unset)")
        #expect(unset.message.contains("CREDENTIALS_DIRECTORY is not set"))
        if getenv("CREDENTIALS_DIRECTORY") == nil {
            // The public call reads the environment: here, as in any process systemd did not start, it is unset.
            let viaEnvironment = refusal { try Key.fromCredential("db-key", format: .rawHex) }
            #expect(viaEnvironment == unset)
        }
        let folder = try TemporaryDirectory()
        let directory = try credentials(folder, ["other": Self.hex, "tls-key": Self.hex])
        let missing = try #require(refusal {
            try Key.fromCredential("db-key", format: .rawHex, directory: directory)
        })
        #expect(missing.kind == .notFound, "\(missing)")
        #expect(missing.message.contains("(it has: other, tls-key)"), "\(missing)")
        for name in ["", "..", "../key", "a/b"] {
            let invalid = try #require(refusal {
                try Key.fromCredential(name, format: .rawHex, directory: directory)
            })
            #expect(invalid.kind == .invalidCredentialName, "\(name): \(invalid)")
        }
        let open = try TemporaryDirectory()
        let everyone = try credentials(open, ["db-key": Self.hex], mode: 0o444)
        let unprotected = try #require(refusal {
            try Key.fromCredential("db-key", format: .rawHex, directory: everyone)
        })
        #expect(unprotected.kind == .unprotected && unprotected.message.contains("every user"), "\(unprotected)")
    }

    // MARK: Commands

    @Test("a key command's output gives the key: found on PATH, one newline dropped")
    func commandSuccess() throws {
        let folder = try TemporaryDirectory()
        let path = try keyFile(folder, "hex", Self.hex + "\n")
        let key = try Key.fromCommand("cat", arguments: [path], format: .rawHex)
        #expect(key.material.withUnsafeBytes { Array($0) } == Self.rawMaterial)
        let pass = try keyFile(folder, "pass", Self.passphrase + "\n")
        let viaShell = try Key.fromCommand("/bin/sh", arguments: ["-c", "cat '\(pass)'"], format: .passphrase)
        #expect(viaShell.material.withUnsafeBytes { Array($0) } == Array(Self.passphrase.utf8))
    }

    @Test("a key command that fails, is killed, cannot start, prints junk or too much: refused, its output unused")
    func commandFailures() throws {
        let folder = try TemporaryDirectory()
        let path = try keyFile(folder, "hex", Self.hex)
        // It printed the key, then failed: the key is not used, and not in the message.
        let failed = try #require(refusal {
            try Key.fromCommand("/bin/sh", arguments: ["-c", "cat '\(path)'; exit 3"], format: .rawHex)
        })
        #expect(failed.kind == .commandFailed && failed.message.contains("exited with status 3"), "\(failed)")
        let killed = try #require(refusal {
            try Key.fromCommand("/bin/sh", arguments: ["-c", "cat '\(path)'; kill -9 $$"], format: .rawHex)
        })
        #expect(killed.kind == .commandFailed && killed.message.contains("killed by signal 9"), "\(killed)")
        let absent = try #require(refusal {
            try Key.fromCommand(folder.file("no-such-program"), format: .rawHex)
        })
        #expect(absent.kind == .commandFailed && absent.message.contains("cannot start"), "\(absent)")
        let junk = "not-a-key-\(UUID().uuidString)"
        let malformed = try #require(refusal({
            try Key.fromCommand("/bin/sh", arguments: ["-c", "cat \"$0\"", try keyFile(folder, "junk", junk)],
                                format: .rawHex)
        }, secrets: [junk]))
        #expect(malformed.kind == .invalidKey, "\(malformed)")
        let large = try #require(refusal {
            try Key.fromCommand("/bin/sh", arguments: ["-c", "head -c 100000 /dev/zero"], format: .passphrase)
        })
        #expect(large.kind == .tooLarge, "\(large)")
    }

    @Test("a key command that outlives its timeout is killed and refused")
    func commandTimeout() throws {
        let started = ContinuousClock.now
        let slow = try #require(refusal {
            try Key.fromCommand("sleep", arguments: ["30"], format: .rawHex, timeout: .milliseconds(300))
        })
        #expect(slow.kind == .commandTimedOut && slow.message.contains("did not finish within 300 ms"), "\(slow)")
        // It was killed, not waited for (30 s).
        #expect(ContinuousClock.now - started < .seconds(20))
        // Output closed, but the process lingers: the exit must come within the timeout too.
        let lingering = try #require(refusal {
            try Key.fromCommand("/bin/sh", arguments: ["-c", "exec >&-; sleep 30"], format: .rawHex,
                                timeout: .milliseconds(300))
        })
        #expect(lingering.kind == .commandTimedOut, "\(lingering)")
        // What the command started dies with it (without a terminal, the command has a process group of its own).
        let folder = try TemporaryDirectory()
        let pidFile = folder.file("pid")
        let parent = try #require(refusal {
            try Key.fromCommand("/bin/sh", arguments: ["-c", "sleep 30 & echo $! > '\(pidFile)'; wait"], format: .rawHex,
                                timeout: .milliseconds(500))
        })
        #expect(parent.kind == .commandTimedOut, "\(parent)")
        if isatty(STDIN_FILENO) == 0 {
            let pid = try #require(Int32(String(decoding: try contents(of: pidFile), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(Self.isGone(pid), "the command's child \(pid) outlived the timeout")
        }
    }

    /// Whether process `pid` has ended (gone, or a zombie not yet reaped), waiting up to 5 s for a SIGKILL to land.
    static func isGone(_ pid: Int32) -> Bool {
        for _ in 0..<500 {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            if stat.split(separator: ")").last?.split(separator: " ").first == "Z" { return true }
            usleep(10_000)
        }
        return false
    }
}
