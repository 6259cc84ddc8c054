import Foundation
import ProcessTestSupport
import ReliabilitySupport
import SQLCipherKit
import Testing

/// Tampering: one byte of an encrypted database flipped at hundreds of offsets (salt, page data, IV, HMAC),
/// each on a fresh copy. Every flip must be reported — a refused open for page 1, an integrity failure naming
/// the page otherwise — and no read may ever return data other than the original.
///
/// What SQLCipher does, as observed on the pinned engine: a flip anywhere in page 1 (salt included) fails the open with
/// `SQLITE_NOTADB`; `cipher_integrity_check` numbers pages from 1 (byte `o` is on page `o / 4096 + 1`) and
/// names only the flipped page; a read that reaches the page fails with `SQLITE_CORRUPT` ("database disk image
/// is malformed") for b-tree pages, but with a plain `SQLITE_ERROR` ("SQL logic error", kind `.sqlite`) for
/// overflow pages.
@Suite("Reliability: tampering")
struct TamperingTests {
    static let pageSize = 4096
    /// SQLCipher 4's reserve at the end of each page: a 16-byte IV, then a 64-byte HMAC-SHA512.
    static let ivRange = 4016..<4032
    static let hmacRange = 4032..<4096
    static let saltRange = 0..<16

    @Test("Every flipped byte is reported, and never read back as different data")
    func everyFlipIsReported() throws {
        let started = Date()
        let folder = try TemporaryDirectory()
        let seed = reliabilitySeed()
        var generator = SplitMix64(seed: seed)
        let keyBytes = (0..<Key.rawKeyLength).map { _ in UInt8.random(in: 0...255) }
        let target = try TamperTarget.make(in: folder, name: "raw", key: try Key.rawKey(keyBytes),
                                           secrets: [Hex.string(keyBytes), Hex.string(keyBytes).uppercased()],
                                           cipher: CipherSettings())
        let pages = target.pristine.count / Self.pageSize
        try #require(target.pristine.count % Self.pageSize == 0 && (10...16).contains(pages),
                     "the sample database has \(target.pristine.count) bytes")

        // ≥ 20 offsets in each area that matters, the rest uniform over the file.
        func offset(in range: Range<Int>, page: Int) -> Int {
            (page - 1) * Self.pageSize + Int.random(in: range, using: &generator)
        }
        var offsets: [Int] = []
        offsets += (0..<20).map { _ in offset(in: Self.saltRange, page: 1) }
        offsets += (0..<24).map { _ in offset(in: Self.ivRange, page: Int.random(in: 1...pages, using: &generator)) }
        offsets += (0..<24).map { _ in offset(in: Self.hmacRange, page: Int.random(in: 1...pages, using: &generator)) }
        offsets += (0..<20).map { _ in offset(in: Self.saltRange.upperBound..<Self.ivRange.lowerBound, page: 1) }
        offsets += (0..<128).map { _ in Int.random(in: 0..<target.pristine.count, using: &generator) }

        var summary = TamperSummary()
        for (index, offset) in offsets.enumerated() {
            let mask = UInt8.random(in: 1...255, using: &generator)
            let mode: OpenMode = index.isMultiple(of: 2) ? .readWrite : .readOnly
            let result = target.check(flipping: offset, with: mask, mode: mode)
            summary.add(result)
            #expect(result.findings.isEmpty, "seed \(seed), flip #\(index): \(result)")
        }

        // A passphrase derives the key from the salt: flips of the salt and page 1, with the KDF on every open.
        let passphrase = "tamper-\(UUID().uuidString)"
        let passphraseTarget = try TamperTarget.make(in: folder, name: "passphrase", key: try Key.passphrase(passphrase),
                                                     secrets: [passphrase], cipher: CipherSettings())
        var passphraseOffsets = (0..<4).map { _ in offset(in: Self.saltRange, page: 1) }
        passphraseOffsets += (0..<3).map { _ in offset(in: Self.saltRange.upperBound..<Self.ivRange.lowerBound, page: 1) }
        passphraseOffsets.append(offset(in: Self.ivRange.lowerBound..<Self.hmacRange.upperBound, page: 1))
        for (index, offset) in passphraseOffsets.enumerated() {
            let mask = UInt8.random(in: 1...255, using: &generator)
            let result = passphraseTarget.check(flipping: offset, with: mask, mode: index.isMultiple(of: 2) ? .readOnly : .readWrite)
            summary.add(result)
            #expect(result.findings.isEmpty, "seed \(seed), passphrase flip #\(index): \(result)")
        }

        #expect(summary.flips >= 200)
        print("RELIABILITY tampering: \(summary.flips) flips, \(summary.unreported) unreported, "
              + "\(summary.wrongData) wrong data, \(String(format: "%.1f", Date().timeIntervalSince(started))) s "
              + "(\(pages) pages, seed \(seed); outcomes \(summary.outcomesText))")
    }

    @Test("Without HMAC, the same checker catches a flip that reads back as silently different data")
    func checkerCatchesUnauthenticatedFlip() throws {
        let folder = try TemporaryDirectory()
        let keyBytes = [UInt8](repeating: 0x42, count: Key.rawKeyLength)
        let target = try TamperTarget.make(in: folder, name: "nohmac", key: try Key.rawKey(keyBytes),
                                           secrets: [Hex.string(keyBytes)], cipher: CipherSettings(usesHMAC: false))
        // Row data: the middle of page 6, a leaf page of the note table whose cells fill it (the content is the
        // same on every run, and so is its layout). Without HMAC the reserve is the IV only and this byte is
        // ciphertext of a row's blob: flipping it garbles one 16-byte block, which decrypts to different bytes
        // of that row, and nothing notices.
        let offset = 5 * TamperingTests.pageSize + 2_048
        let result = target.check(flipping: offset, with: 0x01, mode: .readOnly)
        #expect(result.findings.contains { $0.hasPrefix("unreported") }, "\(result)")
        #expect(result.findings.contains { $0.hasPrefix("wrong data") }, "\(result)")

        // With HMAC (SQLCipher 4's default), the same flip of the same database is caught.
        let authenticated = try TamperTarget.make(in: folder, name: "hmac", key: try Key.rawKey(keyBytes),
                                                  secrets: [Hex.string(keyBytes)], cipher: CipherSettings())
        let caught = authenticated.check(flipping: offset, with: 0x01, mode: .readOnly)
        #expect(caught.findings.isEmpty, "\(caught)")

        // And the checker finds nothing wrong with an unmodified copy.
        let unchanged = authenticated.check(flipping: nil, with: 0, mode: .readOnly)
        #expect(unchanged.findings.isEmpty, "\(unchanged)")
    }
}

/// A sample database and its original content, to check flipped copies of it against.
struct TamperTarget {
    let folder: TemporaryDirectory
    let name: String
    let path: String
    let pristine: Data
    let key: Key
    /// Texts that no error may contain (the key in hex, the passphrase).
    let secrets: [String]
    let cipher: CipherSettings
    /// The rows each query returned on the original file.
    let expected: [String: [Row]]

    /// Every table, and the index through an indexed query: together they read every page.
    static let queries = [
        "SELECT * FROM sqlite_schema",
        "SELECT * FROM note",
        "SELECT * FROM tag",
        "SELECT title, id FROM note INDEXED BY note_title WHERE title > '' ORDER BY title",
    ]

    /// A database of 10–16 pages of 4096 bytes: a table of text, blob and real rows (two with overflow pages),
    /// its index, and a second table; rollback journal, closed.
    static func make(in folder: TemporaryDirectory, name: String, key: Key, secrets: [String],
                     cipher: CipherSettings) throws -> TamperTarget {
        let path = folder.file("\(name)-original.db")
        let db = try Database(path: path, key: key, configuration: .init(cipher: cipher))
        try db.setJournalMode(.delete)
        try db.execute("""
            CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT NOT NULL, body BLOB, score REAL);
            CREATE INDEX note_title ON note(title);
            CREATE TABLE tag(note_id INTEGER NOT NULL, label TEXT NOT NULL);
            """)
        // Deterministic content, the same on every run.
        var content = SplitMix64(seed: 0x7A3B_E11D)
        try db.transaction {
            for id in 1...30 {
                let length = id % 15 == 0 ? 5_000 : Int.random(in: 500...900, using: &content)
                let body = (0..<length).map { _ in UInt8.random(in: 0...255, using: &content) }
                let title = "note \(id) — é ü 漢字 " + String(repeating: "x", count: id % 7)
                try db.execute("INSERT INTO note(id, title, body, score) VALUES (?, ?, ?, ?)",
                               [id, title, body, Double(id) / 7])
                try db.execute("INSERT INTO tag(note_id, label) VALUES (?, ?), (?, ?)",
                               [id, "label-\(id % 5)", id, "tag \(id * 31)"])
            }
        }
        db.close()
        let reader = try Database(path: path, key: key, configuration: .init(mode: .readOnly, cipher: cipher))
        var expected: [String: [Row]] = [:]
        for query in queries { expected[query] = try reader.fetchAll(query) }
        reader.close()
        return TamperTarget(folder: folder, name: name, path: path, pristine: try contents(of: path), key: key, secrets: secrets,
                            cipher: cipher, expected: expected)
    }

    /// What a copy must show.
    enum Expectation {
        /// The original bytes: opens, passes both integrity checks, reads back the original rows.
        case unmodified
        /// One byte flipped on `page`: page 1 (with the salt) is refused at open with
        /// ``SQLCipherError/Kind/wrongKeyOrNotADatabase``; any other page opens and the cipher integrity check
        /// names exactly that page.
        case flipped(page: Int)
        /// Changed in any way (flips, truncation, extension, zeroed pages): refused at open (any typed error),
        /// or reported by an integrity check, or failing a read — never passing everything.
        case mutated
    }

    /// Flips the byte at `offset` (XOR `mask`) in a fresh copy (nil: an unmodified copy) and checks it.
    func check(flipping offset: Int?, with mask: UInt8, mode: OpenMode) -> TamperResult {
        var bytes = pristine
        if let offset { bytes[offset] ^= mask }
        var result = check(bytes: bytes, expecting: offset.map { .flipped(page: $0 / TamperingTests.pageSize + 1) }
                           ?? .unmodified, mode: mode)
        result.offset = offset
        result.mask = mask
        return result
    }

    /// Writes `bytes` to a fresh copy, opens it in `mode` with the key and reads everything: every table, the
    /// index, both integrity checks (and, read-write, one insert). What went wrong, if anything: besides what
    /// `expectation` requires, no read may return rows other than the original ones, and no error may show the
    /// key.
    func check(bytes: Data, expecting expectation: Expectation, mode: OpenMode) -> TamperResult {
        var result = TamperResult()
        let copy = folder.file("\(name)-copy.db")
        do {
            try writeFile(copy, bytes)
        } catch {
            result.findings.append("setup: cannot write the copy: \(error)")
            return result
        }
        defer { for suffix in ["", "-journal", "-wal", "-shm"] { unlink(copy + suffix) } }
        var page: Int?
        if case .flipped(let flipped) = expectation { page = flipped }
        result.page = page
        // For .mutated: whether anything noticed.
        var detected = false

        /// Records a thrown error and what it must not contain.
        func note(_ error: SQLCipherError, during step: String) {
            detected = true
            result.outcomes.append("\(step): \(error.kind.rawValue)")
            let texts = [error.description, error.message, String(reflecting: error)]
            for secret in secrets where texts.contains(where: { $0.localizedCaseInsensitiveContains(secret) }) {
                result.findings.append("key leak: the \(step) error shows the key: \(error)")
            }
        }

        let db: Database
        do {
            db = try Database(path: copy, key: key, configuration: .init(mode: mode, cipher: cipher))
        } catch {
            note(error, during: "open")
            switch expectation {
            case .flipped(page: 1) where error.kind != .wrongKeyOrNotADatabase:
                result.findings.append("wrong error: a page 1 flip failed the open with \(error.kind), not "
                                       + "wrongKeyOrNotADatabase: \(error)")
            case .flipped(page: 1), .mutated:
                break
            case .flipped, .unmodified:
                result.findings.append("unexpected refusal: the open failed: \(error)")
            }
            return result
        }
        defer { db.close() }
        if case .flipped(page: 1) = expectation {
            result.findings.append("unreported: page 1 was flipped and the open succeeded")
        }

        // The cipher integrity check must name the flipped page, and only that one.
        do {
            let failures = try db.cipherIntegrityCheck().filter(\.isFailure)
            result.outcomes.append("integrity: \(failures.map(\.message))")
            detected = detected || !failures.isEmpty
            switch expectation {
            case .flipped(page: 1), .mutated:
                break
            case .flipped(let page):
                if failures.isEmpty {
                    result.findings.append("unreported: the cipher integrity check found nothing wrong")
                } else if failures.map(\.page) != [page] {
                    result.findings.append("wrong page: the cipher integrity check named \(failures.map(\.message)), "
                                           + "not page \(page)")
                }
            case .unmodified:
                if !failures.isEmpty {
                    result.findings.append("false alarm: the unmodified copy fails its integrity check: \(failures)")
                }
            }
        } catch {
            note(error, during: "cipher integrity check")
            result.findings.append("the cipher integrity check threw instead of reporting: \(error)")
        }

        // Every read either fails, typed, or returns exactly the original rows.
        for query in TamperTarget.queries {
            do {
                let rows = try db.fetchAll(query)
                if case .mutated = expectation, bytes.count <= 1, rows.isEmpty {
                    // To SQLite an empty file is an empty database, whatever the key: it opens and holds no
                    // table (every other query fails with "no such table"). So is a 1-byte file: SQLite's unix
                    // VFS reports that size as 0 (unixFileSize, ticket #3260: it writes one byte into a new empty
                    // file itself), with the codec's engine as with plain SQLite.
                    result.outcomes.append("read: an empty database")
                } else if rows != expected[query] {
                    result.findings.append("wrong data: \(query) returned \(rows.count) rows that differ from the "
                                           + "original \(expected[query]?.count ?? 0)")
                }
            } catch {
                note(error, during: "read")
            }
        }

        guard case .mutated = expectation else { return result }
        do {
            let problems = try db.integrityCheck()
            detected = detected || !problems.isEmpty
        } catch {
            note(error, during: "integrity check")
        }
        if mode != .readOnly {
            do {
                // No fsync: the copy is thrown away.
                try db.execute("PRAGMA synchronous = OFF")
                try db.execute("INSERT INTO tag(note_id, label) VALUES (?, ?)", [31, "written to a mutated copy"])
            } catch {
                note(error, during: "write")
            }
        }
        if !detected && bytes != pristine {
            result.findings.append("unreported: the mutated copy opened, passed both integrity checks and read back")
        }
        return result
    }
}

/// What one flip led to.
struct TamperResult: CustomStringConvertible {
    var offset: Int?
    var mask: UInt8 = 0
    var page: Int?
    /// What happened: errors by step, the integrity messages.
    var outcomes: [String] = []
    /// What went wrong: empty when the flip was handled as it must be.
    var findings: [String] = []

    var description: String {
        "offset \(offset.map(String.init) ?? "none") (page \(page.map(String.init) ?? "-"), "
            + "byte \((offset ?? 0) % TamperingTests.pageSize)) ^ 0x\(String(mask, radix: 16)): "
            + "findings \(findings), outcomes \(outcomes)"
    }
}

/// Counts over many flips, for the summary line.
struct TamperSummary {
    var flips = 0, unreported = 0, wrongData = 0
    var outcomes: [String: Int] = [:]

    /// The outcomes and their counts, for the summary line: `open: wrongKeyOrNotADatabase 61, …`.
    var outcomesText: String {
        outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    mutating func add(_ result: TamperResult) {
        flips += 1
        if result.findings.contains(where: { $0.hasPrefix("unreported") }) { unreported += 1 }
        if result.findings.contains(where: { $0.hasPrefix("wrong data") }) { wrongData += 1 }
        for outcome in result.outcomes where !outcome.hasPrefix("integrity") {
            outcomes[outcome, default: 0] += 1
        }
    }
}

/// The seed for a randomized reliability test: `RELIABILITY_SEED` from the environment to replay a failure,
/// else a fresh one (every summary and failure message names it).
func reliabilitySeed() -> UInt64 {
    ProcessInfo.processInfo.environment["RELIABILITY_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 1...UInt64.max >> 1)
}
