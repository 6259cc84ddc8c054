import Foundation
import SQLCipherKit

/// The shared part of encrypt and decrypt: refuse to overwrite, export with a progress bar.
enum Transfer {
    static func export(_ source: Database, to output: String, key: Key?, cipher: CipherSettings, force: Bool,
                       label: String) throws {
        let bar = ProgressBar(label)
        Interruption.route(to: source.interruptHandle)
        try Interruption.stopIfSignalled("nothing was written")
        do {
            try source.export(to: output, key: key, cipher: cipher, replacing: force, progress: bar.update)
        } catch {
            guard error.kind == .invalidArgument, !force, FileManager.default.fileExists(atPath: output) else {
                throw error
            }
            throw CommandFailure(message: "\(output) already exists: pass --force to replace it",
                                 status: .failure)
        }
        bar.finish()
    }
}
