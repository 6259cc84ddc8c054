import BenchmarkSupport
import SQLCipherKit

/// The state of one benchmark process, created when a benchmark starts: registration (which every process runs
/// for every benchmark) stays cheap.
public final class BenchmarkProcess {
    /// Nothing is created until a benchmark runs.
    public init() {}

    private var folder: ScratchFolder?
    private var generated: Rows?
    private var proven = false

    /// The process's folder for database files, created on first use.
    public func scratch() throws -> ScratchFolder {
        if let folder { return folder }
        let created = try ScratchFolder("sqlcipherkit")
        folder = created
        return created
    }

    /// The rows, generated on first use.
    public var rows: Rows {
        if let generated { return generated }
        let created = Rows()
        generated = created
        return created
    }

    /// Proves that SQLCipherKit and the C baseline both run on SQLCipher, and records the engine's facts.
    public func proveEngine() throws {
        guard !proven else { return }
        let facts = try Engine.selfCheck()
        let raw = try RawConnection(rawC, path: ":memory:", keyMaterial: rawKeyMaterial)
        guard let cipher = try raw.text("PRAGMA cipher_version"), cipher == facts.cipherVersion else {
            throw BenchmarkFailure("the C baseline's engine gives no cipher_version: it is not SQLCipher")
        }
        EngineFacts.record("SQLCipherKitBenchmarks", "SQLCipherKit and its C baseline: \(facts); "
            + "cipher_version \(cipher) from the C connection too")
        proven = true
    }

    /// Removes the folder.
    public func finish() {
        folder?.remove()
        folder = nil
    }
}

