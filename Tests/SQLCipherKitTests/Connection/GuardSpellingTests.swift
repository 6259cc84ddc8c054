import Foundation
import ProcessTestSupport
import Testing

/// The SQL guard judged by effect, not by the spellings it knows: `ReliabilityHelper guard-spellings` (a child
/// process, because some cipher pragmas change process-wide state) generates thousands of spellings of every
/// rule and of its allowed neighbours, runs each on an unguarded connection to measure what it does, and on a
/// SQLCipherKit connection to read the guard's verdict (and, when allowed, its effect there, temporary files
/// included). Refused must mean: the SQL would have acted; except for ATTACH and export in SQL text and cipher
/// setters, which are refused with any value (the current one included: those spellings must show no effect).
@Suite("SQL guard: every spelling, judged by its effect")
struct GuardSpellingTests {
    /// The cipher configurations the spellings run under (`RELIABILITY_CIPHER`, GuardSpellings+Configuration.swift in
    /// the helper): SQLCipher 4's defaults (""), and since issue 43 the settings where VACUUM INTO was broken and
    /// where the cipher and page_size rules meet other current values.
    static let configurations = ["", "page-1024", "page-65536", "compat-3", "hmac-off"]

    @Test("Refused exactly when the spelling would act (temp_store FILE, keying, page_size, keyed URIs); cipher setters with any value",
          arguments: configurations)
    func refusedExactlyWhenItActs(configuration: String) throws {
        // tmpfs when there is one: the cases write thousands of small files and SQLite syncs each.
        let shared = "/dev/shm"
        let folder = access(shared, W_OK) == 0 ? try TemporaryDirectory(in: shared) : try TemporaryDirectory()
        let work = folder.file("work"), temporary = folder.file("tmp")
        for path in [work, temporary] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        let seed = reliabilitySeed()
        let replay = "seed \(seed) (RELIABILITY_SEED=\(seed) RELIABILITY_CIPHER='\(configuration)' replays it)"
        let child = try HelperProcess(["guard-spellings", work], environment: [
            "RELIABILITY_KEY_HEX": randomKeyHex(), "RELIABILITY_SEED": String(seed),
            "TMPDIR": temporary, "SQLITE_TMPDIR": temporary, "RELIABILITY_CIPHER": configuration,
        ])
        var lines: [String] = []
        while let line = child.readLine(timeout: 600) { lines.append(line) }
        child.finish()
        let summary = lines.last { $0.hasPrefix("spellings ") } ?? ""
        print("GUARD SPELLINGS [\(configuration.isEmpty ? "SQLCipher 4 defaults" : configuration)]: \(summary); \(replay)")
        for line in lines where line.hasPrefix("family ") { print("GUARD SPELLINGS \(line)") }
        let mismatches = lines.filter { $0.hasPrefix("mismatch") }.joined(separator: "\n")
        #expect(child.exitStatus == 0, "\(replay)\n\(mismatches)\n\(child.standardError)")
        let counts = summary.split(separator: " ").compactMap { Int($0) }
        #expect(counts.count == 4 && counts[0] >= 3_000 && counts[3] == 0, "\(summary); \(replay)")

        // Each family on its own: at least its size when this was written, no mismatch, and both verdicts where
        // the rule decides by effect (a family all refused or all allowed proves one side of the rule only);
        // the families refused whatever their effect, every spelling refused.
        //   family NAME: T spellings, R refused, A allowed, M mismatches
        let minimum = ["key pragmas": 400, "temp_store": 1_500, "cipher settings": 500, "page_size": 100,
                       "VACUUM INTO": 200, "ATTACH / sqlcipher_export / unknown cipher_ setters": 100,
                       "cipher settings set to their current value": 100]
        let alwaysRefused: Set = ["ATTACH / sqlcipher_export / unknown cipher_ setters",
                                  "cipher settings set to their current value"]
        var families: [String: [Int]] = [:]
        for line in lines where line.hasPrefix("family ") {
            let body = line.dropFirst("family ".count)
            guard let colon = body.lastIndex(of: ":") else { continue }
            families[String(body[..<colon])] = body[colon...].split(separator: " ").compactMap { Int($0) }
        }
        #expect(Set(families.keys) == Set(minimum.keys), "families reported: \(families.keys.sorted()); \(replay)")
        for (family, least) in minimum {
            guard let numbers = families[family], numbers.count == 4 else { continue }
            let (total, refused, allowed, mismatched) = (numbers[0], numbers[1], numbers[2], numbers[3])
            #expect(total >= least, "\(family): \(total) spellings, fewer than \(least); \(replay)")
            #expect(mismatched == 0, "\(family): \(mismatched) mismatches; \(replay)")
            if alwaysRefused.contains(family) {
                #expect(refused == total && allowed == 0, "\(family): \(allowed) allowed; \(replay)")
            } else {
                #expect(refused > 0 && allowed > 0, "\(family): \(refused) refused, \(allowed) allowed; \(replay)")
            }
        }
        // The spill check can see a file (a decoy held open under the temporary folder, before the cases)…
        #expect(lines.contains("spill control: a decoy held open under SQLITE_TMPDIR was seen"), "\(replay)")
        // …and the child's temporary folder stays empty: nothing spilled there, not even for a moment.
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).isEmpty)
    }
}
