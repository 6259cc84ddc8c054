import Foundation
import ProcessTestSupport
import Testing

/// The process's first opens, made by many threads at once (`ReliabilityHelper first-opens`). SQLite marks itself
/// initialised before it runs SQLCipher's set-up, outside its lock: a thread whose `sqlite3_initialize` returns in
/// that window keys its connection while SQLCipher is not set up yet, and the keying fails (seen once in a
/// parallel test run, as a misleading "OpenSSL cannot serve" error). `Database` runs the one initialisation
/// through a Swift static, which makes every other thread wait for it.
@Suite("First opens from many threads at once",
       .hangGuard(.minutes(3), hang: "threads that wait forever on the one-time engine initialisation"))
struct FirstOpensTests {
    @Test("16 threads' first opens in each of 30 new processes: every one keys, opens and writes")
    func concurrentFirstOpens() throws {
        var failures: [String] = []
        for _ in 0..<30 {
            let child = try HelperProcess(["first-opens", "16"], environment: [:])
            let lines = child.finish()
            if !lines.contains("first-opens: 16 of 16 opened and wrote") { failures.append(contentsOf: lines) }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }
}
