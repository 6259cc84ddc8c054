import Foundation
import ProcessTestSupport
import Testing

/// The SQL guard judged by effect, not by the spellings it knows: `ReliabilityHelper guard-spellings` (a child
/// process, because some cipher pragmas change process-wide state) generates thousands of spellings of every
/// rule and of its allowed neighbours, runs each on an unguarded connection to measure what it does, and on a
/// SQLCipherKit connection to read the guard's verdict (and, when allowed, its effect there, temporary files
/// included). Refused must mean: the SQL would have acted.
@Suite("SQL guard: every spelling, judged by its effect")
struct GuardSpellingTests {
    @Test("Refused exactly when the spelling would act (temp_store FILE, keying, cipher settings, page_size, keyed URIs)")
    func refusedExactlyWhenItActs() throws {
        // tmpfs when there is one: the cases write thousands of small files and SQLite syncs each.
        let shared = "/dev/shm"
        let folder = access(shared, W_OK) == 0 ? try TemporaryDirectory(in: shared) : try TemporaryDirectory()
        let work = folder.file("work"), temporary = folder.file("tmp")
        for path in [work, temporary] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        let child = try HelperProcess(["guard-spellings", work], environment: [
            "RELIABILITY_KEY_HEX": randomKeyHex(), "RELIABILITY_SEED": String(UInt64.random(in: 1...UInt64.max)),
            "TMPDIR": temporary, "SQLITE_TMPDIR": temporary,
        ])
        var lines: [String] = []
        while let line = child.readLine(timeout: 600) { lines.append(line) }
        child.finish()
        let summary = lines.last { $0.hasPrefix("spellings ") } ?? ""
        print("GUARD SPELLINGS: \(summary)")
        for line in lines where line.hasPrefix("family ") { print("GUARD SPELLINGS \(line)") }
        let mismatches = lines.filter { $0.hasPrefix("mismatch") }.joined(separator: "\n")
        #expect(child.exitStatus == 0, "\(mismatches)\n\(child.standardError)")
        let counts = summary.split(separator: " ").compactMap { Int($0) }
        #expect(counts.count == 4 && counts[0] >= 3_000 && counts[3] == 0, "\(summary)")
        // The child's temporary folder stays empty: nothing spilled there, not even for a moment.
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).isEmpty)
    }
}
