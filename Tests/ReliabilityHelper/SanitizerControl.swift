#if canImport(Glibc)
import Glibc
#endif
import CSQLCipher

/// `ReliabilityHelper sanitizer-control`: the positive control of the sanitizer part (Tests/Sanitized): hands the
/// engine a statement without its terminating NUL (`sqlite3_prepare_v2` with length -1 reads until one), in a heap
/// block of exactly its length. SQLite's tokenizer, inside the engine, reads the byte past the block: an engine
/// built with AddressSanitizer and linked into this binary reports a heap-buffer-overflow there and aborts. An
/// engine without it reads on unnoticed, and this prints "control: no report" and exits 0, which the part counts as
/// a failure of the control: the Swift suites it runs would then not be checked by the sanitizers at all.
enum SanitizerControl {
    static func run(_ arguments: [String]) -> Never {
        let text = Array("SELECT 1".utf8)
        let block = UnsafeMutablePointer<CChar>.allocate(capacity: text.count)
        for (index, byte) in text.enumerated() { block[index] = CChar(bitPattern: byte) }
        var db: OpaquePointer?
        guard sqlite3_open(":memory:", &db) == SQLITE_OK else { fail("cannot open an in-memory database") }
        var statement: OpaquePointer?
        _ = sqlite3_prepare_v2(db, block, -1, &statement, nil)
        sqlite3_finalize(statement)
        sqlite3_close(db)
        block.deallocate()
        print("control: no report")
        exit(0)
    }
}
