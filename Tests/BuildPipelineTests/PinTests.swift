import Foundation
import ProcessTestSupport
import Testing

/// Bumping the engine is one file: `Vendor/sqlcipher.pin`. Everything else reads the pin, or what the build
/// generated from it (`Vendor/build/pin.json`, `MANIFEST.json`), or asks the engine itself.
@Suite("The pin is one file")
struct PinTests {
    /// Tracked files that may name the pinned release: the pin, and the files that explain its history.
    /// docs/ENGINE.md may do so only in its engine-history section (see ``historyHeading``).
    /// BENCHMARKS.md is `Benchmarks/run.sh`'s report, which records the engine it measured.
    static let historyFiles: Set<String> = ["Vendor/sqlcipher.pin", "BENCHMARKS.md"]
    /// Folders whose files record the engine they were written about: the fuzzer's reports of engine bugs
    /// (Tests/Fuzz/known-issues/) name the release a bug was found in, and stay true after a bump.
    static let historyFolders = ["Tests/Fuzz/known-issues/"]
    /// The file with the engine's history, and the heading of the one section of it that may name the release.
    static let historyDocument = "docs/ENGINE.md"
    static let historyHeading = "## The engine: version, history, security notes"

    /// The strings a bump changes: the SQLCipher and SQLite versions, the tarball's name and its checksum.
    static func pinnedStrings(_ pin: Pin) -> [String] {
        [pin.sqlcipherVersion, pin.sqliteVersion, pin.tarball, pin.sha256]
    }

    /// Where `needle` stands in `text` as a whole version (not inside a longer number: 1.2.3 is not in 11.2.3 or 1.2.34).
    static func lines(of needle: String, in text: String) -> [Int] {
        var found: [Int] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var searchStart = line.startIndex
            while let range = line.range(of: needle, range: searchStart..<line.endIndex) {
                let before = range.lowerBound == line.startIndex ? nil : line[line.index(before: range.lowerBound)]
                let after = range.upperBound == line.endIndex ? nil : line[range.upperBound]
                let extendsNumber = { (c: Character?) in c.map { $0.isNumber || $0 == "." } ?? false }
                // A trailing full stop ends a sentence, not a version: "1.2.3." still counts.
                let afterIsSentenceEnd = after == "." && (line.index(after: range.upperBound) == line.endIndex
                    || !line[line.index(after: range.upperBound)].isNumber)
                if !extendsNumber(before) && (!extendsNumber(after) || afterIsSentenceEnd) {
                    found.append(number + 1)
                    break
                }
                searchStart = range.upperBound
            }
        }
        return found
    }

    /// The line range of docs/ENGINE.md's engine-history section (its heading to the next `## `).
    static func historySection(of document: String) -> ClosedRange<Int>? {
        let lines = document.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == historyHeading }) else { return nil }
        let end = lines[(start + 1)...].firstIndex(where: { $0.hasPrefix("## ") }) ?? lines.count
        return (start + 1)...end
    }

    /// Every place outside the pin's history files that names the pinned release, as "path:line: string".
    static func copiesOfThePin(_ pin: Pin, root: URL) throws -> [String] {
        let listing = try run("/usr/bin/git", ["-C", root.path, "ls-files", "-z"])
        #expect(listing.status == 0, "\(listing)")
        let files = listing.output.split(separator: "\0").map(String.init)
        #expect(files.count > 50, "git ls-files listed only \(files.count) files")
        var copies: [String] = []
        for file in files where !historyFiles.contains(file) && !historyFolders.contains(where: file.hasPrefix) {
            guard let data = FileManager.default.contents(atPath: root.appendingPathComponent(file).path) else {
                continue // listed but deleted in the work tree
            }
            let text = String(decoding: data, as: UTF8.self)
            let allowed = file == historyDocument ? historySection(of: text) : nil
            for needle in pinnedStrings(pin) {
                for line in lines(of: needle, in: text) where !(allowed?.contains(line) ?? false) {
                    copies.append("\(file):\(line): \(needle)")
                }
            }
        }
        return copies
    }

    @Test("no tracked file but the pin (and its history) names the pinned release")
    func pinnedReleaseIsNamedOnce() throws {
        let pin = try Pin.current.get()
        let copies = try Self.copiesOfThePin(pin, root: Repository.root)
        #expect(copies.isEmpty, """
            the pinned release is written outside Vendor/sqlcipher.pin; read it from the pin \
            (Vendor/build/pin.json, Pin in ProcessTestSupport) or the engine instead:
            \(copies.joined(separator: "\n"))
            """)
        let history = try String(contentsOf: Repository.root.appendingPathComponent(Self.historyDocument), encoding: .utf8)
        #expect(Self.historySection(of: history) != nil,
                "\(Self.historyDocument) has no '\(Self.historyHeading)' section")
    }

    @Test("the scan finds a copy: a version in code, in a test, in README.md, and in docs/ENGINE.md outside its history section")
    func scanFindsCopies() throws {
        let pin = try Pin.current.get()
        let folder = try TemporaryDirectory()
        let root = URL(fileURLWithPath: folder.path)
        func write(_ path: String, _ text: String) throws {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try writeFile(url.path, text)
        }
        try write("Vendor/sqlcipher.pin", "PIN_VERSION=\(pin.sqlcipherVersion)\n")
        try write("Sources/A.swift", "let v = \"\(pin.sqlcipherVersion) community\"\n")
        try write("Tests/B.swift", "// built on SQLite \(pin.sqliteVersion).\n")
        try write("Sources/C.swift", "let notIt = \"1\(pin.sqlcipherVersion)\" + \"\(pin.sqlcipherVersion)1\"\n")
        try write("README.md", "Links the engine \(pin.sqlcipherVersion).\n")
        try write(Self.historyDocument, """
            # R
            The engine is \(pin.tarball).
            \(Self.historyHeading)
            Bumped to \(pin.sqlcipherVersion) for its fixes.
            ## Next
            Checksum \(pin.sha256)
            """)
        for _ in 0..<60 { try write("filler/\(UUID().uuidString)", "x\n") }
        #expect(try run("/usr/bin/git", ["-C", root.path, "init", "-q"]).status == 0)
        #expect(try run("/usr/bin/git", ["-C", root.path, "add", "-A"]).status == 0)
        let copies = Set(try Self.copiesOfThePin(pin, root: root))
        #expect(copies == [
            "Sources/A.swift:1: \(pin.sqlcipherVersion)",
            "Tests/B.swift:1: \(pin.sqliteVersion)",
            "README.md:1: \(pin.sqlcipherVersion)",
            "docs/ENGINE.md:2: \(pin.tarball)", "docs/ENGINE.md:2: \(pin.sqlcipherVersion)",
            "docs/ENGINE.md:6: \(pin.sha256)",
        ], "\(copies.sorted())")
    }
}
