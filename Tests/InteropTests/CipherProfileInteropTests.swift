import Foundation
import ProcessTestSupport
import SQLCipherKit
import Testing

extension InteropTests {
    @Test("CipherSettings.sha256 files are read by the sqlcipher3 wheel with the same settings only, both ways")
    func sha256ProfileInterop() throws {
        let folder = try TemporaryDirectory()
        let key = try Key.passphrase(Self.passphrase)

        // The API writes with the SHA-256 profile: Python reads it with the same two pragmas, and not without.
        let ours = folder.file("api-sha256.db")
        try apiWrite(ours, key: key, cipher: .sha256)
        let read = try python(["read", ours, "--sha256"], key: Self.passphrase)
        #expect(read.status == 0, "\(read)")
        if read.status == 0 {
            let report = try decodeReport(read.stdout)
            #expect(try report.databaseRows() == Self.rows)
            #expect(report.integrityCheck == ["ok"] && report.cipherIntegrityCheck == [])
        }
        let defaults = try python(["read", ours], key: Self.passphrase)
        #expect(defaults.status == 3, "SQLCipher's defaults opened a SHA-256 file: \(defaults)")

        // Python writes with the same pragmas: the API reads it with .sha256 and refuses it with the defaults.
        let theirs = folder.file("python-sha256.db")
        let input = try JSONEncoder().encode(Self.rows.map { $0.map(TaggedValue.init) })
        let write = try python(["write", theirs, "--sha256"], key: Self.passphrase, input: input)
        try #require(write.status == 0, "\(write)")
        #expect(try apiRead(theirs, key: key, cipher: .sha256) == Self.rows)
        #expect(errorKind { _ = try apiRead(theirs, key: key) } == .wrongKeyOrNotADatabase)
        let settings = try Database(path: theirs, key: key, configuration: .init(mode: .readOnly, cipher: .sha256))
            .cipherSettings()
        #expect(settings.hmacAlgorithm == .sha256 && settings.kdfAlgorithm == .sha256)
    }
}
