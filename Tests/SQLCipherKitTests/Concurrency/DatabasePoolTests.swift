import Foundation
import ProcessTestSupport
import Synchronization
import Testing
@testable import SQLCipherKit

@Suite("DatabasePool",
       .hangGuard(.minutes(3), hang: "a pool read or write whose caller is never resumed, or a writer never released"))
struct DatabasePoolTests {
    static let compatibilities = [4, 3]

    private func configuration(compatibility: Int, readers: Int = 3) -> DatabasePool.Configuration {
        DatabasePool.Configuration(readerCount: readers,
                                   database: .init(cipher: CipherSettings(compatibility: compatibility)))
    }

    @Test("a database created by a pool (key derived once) opens with the passphrase, and vice versa",
          arguments: compatibilities)
    func keyDerivedOnceMatchesPassphrase(compatibility: Int) throws {
        let folder = try TemporaryDirectory()
        let key = try Key.passphrase("pool passphrase \(compatibility)")
        let cipher = CipherSettings(compatibility: compatibility)
        let marker = "pool-marker-\(UUID().uuidString)"

        // Pool first (new database: the writer makes the salt), then a plain passphrase connection.
        let fromPool = folder.file("from-pool.db")
        let pool = try DatabasePool(path: fromPool, key: key, configuration: configuration(compatibility: compatibility))
        try pool.write { db in
            try db.execute("CREATE TABLE t(v TEXT)")
            try db.execute("INSERT INTO t VALUES (?)", [marker])
        }
        #expect(try pool.read { try $0.scalar(String.self, "SELECT v FROM t") } == marker)
        // The key was derived once: the readers were keyed with the derived raw key, not the passphrase (only
        // the writer of a new database uses the passphrase, to create the salt).
        #expect(pool.connectionKeyKinds.readers.allSatisfy { $0 == .rawKeyWithSalt })
        #expect(pool.connectionKeyKinds.writer == .passphrase)
        pool.close()
        let direct = try Database(path: fromPool, key: key, configuration: .init(cipher: cipher))
        #expect(try direct.scalar(String.self, "SELECT v FROM t") == marker)
        #expect(try direct.journalMode() == .wal)
        direct.close()
        #expect(try !data(contents(of: fromPool), contains: marker))

        // A passphrase connection first, then a pool over the existing file (salt read from the file).
        let fromDirect = folder.file("from-direct.db")
        let writer = try Database(path: fromDirect, key: key, configuration: .init(cipher: cipher))
        try writer.execute("CREATE TABLE t(v TEXT)")
        try writer.execute("INSERT INTO t VALUES ('written directly')")
        writer.close()
        let second = try DatabasePool(path: fromDirect, key: key, configuration: configuration(compatibility: compatibility))
        #expect(try second.read { try $0.scalar(String.self, "SELECT v FROM t") } == "written directly")
        #expect(second.connectionKeyKinds.writer == .rawKeyWithSalt, "an existing file: every connection uses the derived key")
        #expect(second.connectionKeyKinds.readers == [Key.Kind?](repeating: .rawKeyWithSalt, count: 3))
        try second.write { try $0.execute("INSERT INTO t VALUES ('through the pool')") }
        second.close()
        let check = try Database(path: fromDirect, key: key, configuration: .init(cipher: cipher))
        #expect(try check.scalar(Int.self, "SELECT count(*) FROM t") == 2)

        // The derived key is exactly what SQLCipher derives: it opens the file on its own.
        let salt = Array(try contents(of: fromDirect).prefix(16))
        let derived = try KeyDerivation.rawKey(from: key, salt: salt, settings: cipher)
        #expect(derived.kind == .rawKeyWithSalt)
        #expect(try Database(path: fromDirect, key: derived, configuration: .init(cipher: cipher))
            .scalar(Int.self, "SELECT count(*) FROM t") == 2)
    }

    @Test("closing a pool checkpoints the WAL into the file and removes the -wal and -shm files")
    func closeRemovesSideFiles() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("side.db")
        let pool = try DatabasePool(path: path, key: .passphrase("side files"), configuration: .init(readerCount: 2))
        try await pool.write { db in try db.execute("CREATE TABLE t(a); INSERT INTO t VALUES (1)") }
        #expect(try await pool.read { try $0.scalar(Int.self, "SELECT a FROM t") } == 1)
        pool.close()
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))
    }

    @Test("a wrong passphrase fails the pool at open, and leaves the file unchanged")
    func wrongKey() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("p.db")
        try Database(path: path, key: .passphrase("right")).execute("CREATE TABLE t(a)")
        let before = try contents(of: path)
        #expect(thrownError { try DatabasePool(path: path, key: .passphrase("wrong")) }?.kind == .wrongKeyOrNotADatabase)
        #expect(try contents(of: path) == before)
    }

    @Test("a pool opened by name on a plaintext file: plain SQLite, in WAL, readers see the writer's commits")
    func unencryptedPool() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("plain.db")
        let marker = "plain-pool-\(UUID().uuidString)"
        let pool = try DatabasePool(unencryptedPath: path, configuration: .init(readerCount: 2))
        #expect(!pool.isEncrypted)
        #expect(pool.connectionKeyKinds.writer == nil)
        #expect(pool.connectionKeyKinds.readers == [nil, nil])
        try pool.write { db in
            try db.execute("CREATE TABLE t(v TEXT)")
            try db.execute("INSERT INTO t VALUES (?)", [marker])
        }
        #expect(try pool.read { try $0.scalar(String.self, "SELECT v FROM t") } == marker)
        #expect(try pool.read { try $0.textValue("PRAGMA journal_mode") } == "wal")
        #expect(try pool.read { try $0.scalar(Int.self, "PRAGMA synchronous") } == 3, "EXTRA, as an encrypted pool")
        // The SQL guard is the same: no key in SQL text, no ATTACH from SQL, on a plaintext connection too.
        #expect(thrownError { try pool.write { try $0.execute("PRAGMA key = 'x'") } }?.kind == .misuse)
        #expect(thrownError { try pool.write { try $0.execute("ATTACH 'other.db' AS o") } }?.kind == .misuse)
        pool.close()
        let bytes = try contents(of: path)
        #expect(bytes.starts(with: Array("SQLite format 3\0".utf8)), "a plain SQLite file")
        #expect(data(bytes, contains: marker), "its rows are plaintext, as asked for by name")
        #expect(try Database(unencryptedPath: path).scalar(String.self, "SELECT v FROM t") == marker)

        let encrypted = try DatabasePool(path: folder.file("encrypted.db"), key: .passphrase("k"))
        #expect(encrypted.isEncrypted)
        encrypted.close()
    }

    @Test("a plaintext pool refuses an encrypted file, an encrypted pool a plaintext one; rekey is refused")
    func unencryptedPoolRefusals() throws {
        let folder = try TemporaryDirectory()
        let encryptedPath = folder.file("encrypted.db")
        try Database(path: encryptedPath, key: .passphrase("k")).execute("CREATE TABLE t(a)")
        let encryptedBefore = try contents(of: encryptedPath)
        #expect(thrownError { try DatabasePool(unencryptedPath: encryptedPath) }?.kind == .wrongKeyOrNotADatabase)
        #expect(try contents(of: encryptedPath) == encryptedBefore)

        let plainPath = folder.file("plain.db")
        try Database(unencryptedPath: plainPath).execute("CREATE TABLE t(a); INSERT INTO t VALUES (1)")
        let plainBefore = try contents(of: plainPath)
        #expect(thrownError { try DatabasePool(path: plainPath, key: .passphrase("k")) }?.kind == .wrongKeyOrNotADatabase)
        #expect(thrownError { try DatabasePool(path: plainPath, key: .rawKey([UInt8](repeating: 1, count: 32))) }?
            .kind == .wrongKeyOrNotADatabase)
        #expect(try contents(of: plainPath) == plainBefore)

        let pool = try DatabasePool(unencryptedPath: plainPath)
        let error = thrownError { try pool.rekey(to: .passphrase("k")) }
        #expect(error?.kind == .misuse)
        #expect(error?.message.contains("Database.encrypt") == true)
        #expect(try pool.read { try $0.scalar(Int.self, "SELECT a FROM t") } == 1, "the pool still serves")
        pool.close()
        #expect(try Database(unencryptedPath: plainPath).scalar(Int.self, "SELECT a FROM t") == 1)
    }

    @Test("a plaintext pool's backup is refused with a typed error that names the export, and leaves nothing behind")
    func unencryptedPoolBackup() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("plain.db")
        let pool = try DatabasePool(unencryptedPath: path)
        try pool.write { try $0.execute("CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('backup-marker')") }
        let target = folder.file("copy.db")
        let error = thrownError { try pool.backup(to: target, key: .passphrase("copy key")) }
        #expect(error?.kind == .misuse)
        #expect(error?.message.contains("Database.export(to:key:cipher:)") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            == ["plain.db", "plain.db-shm", "plain.db-wal"], "no copy, no temporary file")
        #expect(try pool.read { try $0.scalar(String.self, "SELECT v FROM t") } == "backup-marker")
        pool.close()
    }

    /// Whether another process sees the `RESERVED` lock byte of the database at `path` locked (fcntl F_GETLK).
    private func reservedLockSeen(_ path: String) throws -> Bool {
        let probe = """
            import fcntl, os, struct, sys
            fd = os.open(sys.argv[1], os.O_RDWR)
            layout = "hhxxxxqqi4x"  # struct flock on LP64 Linux
            query = struct.pack(layout, fcntl.F_WRLCK, os.SEEK_SET, 0x40000001, 1, 0)
            answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
            print("locked" if struct.unpack(layout, answer)[0] != fcntl.F_UNLCK else "free")
            """
        let result = try runProcess("/usr/bin/env", ["python3", "-c", probe, path])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "locked"
    }

    @Test("reading an open file's salt for a pool keeps the locks other connections of this process hold on it")
    func saltReadKeepsLocks() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("locked.db")
        let key = try Key.passphrase("locks")
        let writer = try Database(path: path, key: key)
        try writer.execute("CREATE TABLE t(a)")
        // Read before the transaction: the test's own read of the file (open, close) would drop the lock.
        let header = Array(try contents(of: path).prefix(16))
        try writer.execute("BEGIN IMMEDIATE; INSERT INTO t VALUES (1)")
        #expect(try reservedLockSeen(path), "control: another process sees the write transaction's RESERVED lock")
        let salt = try DatabasePool.existingSalt(path: path, settings: CipherSettings())
        #expect(salt == header)
        #expect(try reservedLockSeen(path), "the lock is still held after the salt was read (a close(2) drops it)")
        try writer.execute("COMMIT")
        #expect(try !reservedLockSeen(path), "control: the lock is gone after COMMIT")
        writer.close()
        #expect(try DatabasePool.existingSalt(path: folder.file("missing.db"), settings: CipherSettings()) == nil)
        try writeFile(folder.file("short.db"), [UInt8](repeating: 1, count: 10))
        #expect(try DatabasePool.existingSalt(path: folder.file("short.db"), settings: CipherSettings()) == nil)
    }

    @Test("rekey through the pool, then reopen with the new key")
    func rekeyThroughPool() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("rekey.db")
        let pool = try DatabasePool(path: path, key: .passphrase("before"))
        try pool.write { db in try db.execute("CREATE TABLE t(a); INSERT INTO t VALUES (1)") }
        try pool.rekey(to: .passphrase("after"))
        #expect(try pool.read { try $0.scalar(Int.self, "SELECT a FROM t") } == 1, "readers use the new key")
        try pool.write { try $0.execute("INSERT INTO t VALUES (2)") }
        pool.close()
        #expect(thrownError { try Database(path: path, key: .passphrase("before")) }?.kind == .wrongKeyOrNotADatabase)
        #expect(try Database(path: path, key: .passphrase("after")).scalar(Int.self, "SELECT sum(a) FROM t") == 3)
        let raw = try Key.rawKey([UInt8](repeating: 7, count: 32))
        let again = try DatabasePool(path: path, key: .passphrase("after"))
        try again.rekey(to: raw)
        again.close()
        #expect(try Database(path: path, key: raw).scalar(Int.self, "SELECT count(*) FROM t") == 2)
    }

    @Test("a connection closed while the pool lent it (by the work's own code, or by a failed rekey) is replaced before the next work that needs it: the next read or write, sync, async, group-committed or in a session, runs on a new connection with the pool's connection key (found by an attacker: the pool kept failing with \"closed\" until it was closed)",
          arguments: ["passphrase", "raw key", "unencrypted"])
    func closedConnectionsAreReplaced(_ kind: String) async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("replace.db")
        var configuration = DatabasePool.Configuration(readerCount: 1)
        configuration.database.busyTimeout = .milliseconds(50)
        let key: Key? = switch kind {
        case "passphrase": try .passphrase("replace")
        case "raw key": try .rawKey([UInt8](repeating: 3, count: 32))
        default: nil
        }
        let pool = try key.map { try DatabasePool(path: path, key: $0, configuration: configuration) }
            ?? (try DatabasePool(unencryptedPath: path, configuration: configuration))
        defer { pool.close() }
        let open = { () throws -> Database in
            try key.map { try Database(path: path, key: $0) } ?? (try Database(unencryptedPath: path))
        }
        try synchronously { try pool.write { try $0.execute("CREATE TABLE t(x)") } }
        // The one reader, closed by a sync read, then by an async one.
        try synchronously { () throws in
            _ = try? pool.read { $0.close() }
            #expect(try pool.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") } == 0)
        }
        _ = try? await pool.read { $0.close() }
        #expect(try await pool.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") } == 0)
        // The writer: a sync write, an async (group-committed) one, a writer session, each followed by a write.
        try synchronously { () throws in
            #expect(thrownError { try pool.write { $0.close() } }?.kind == .misuse)
            try pool.write { try $0.execute("INSERT INTO t VALUES (1)") }
        }
        var closedAsync: SQLCipherError?
        do { try await pool.write { $0.close() } } catch { closedAsync = error as? SQLCipherError }
        #expect(closedAsync?.kind == .misuse)
        try await pool.write { try $0.execute("INSERT INTO t VALUES (2)") }
        _ = try? await pool.writeSession { session in try await session.execute { $0.close() } }
        try await pool.write { try $0.execute("INSERT INTO t VALUES (3)") }
        // The new connections are keyed as the pool keys its readers (a passphrase pool: with the derived key).
        let kinds = pool.connectionKeyKinds
        #expect(kinds.readers.allSatisfy { $0 == kinds.writer } && (kinds.writer == nil) == (key == nil), "\(kinds)")
        try synchronously { () throws in
            let other = try open()
            if key != nil {
                // A rekey that finds the file locked closes the writer; the file keeps the pool's key.
                try other.execute("BEGIN IMMEDIATE")
                #expect(thrownError { try pool.rekey(to: .passphrase("new")) }?.kind == .busy)
                try other.execute("ROLLBACK")
            }
            try pool.write { try $0.execute("INSERT INTO t VALUES (4)") }
            #expect(try pool.read { try $0.scalar(Int.self, "SELECT sum(x) FROM t") } == 10)
            #expect(try other.scalar(Int.self, "SELECT sum(x) FROM t") == 10)
        }
    }

    @Test("a pool's rekey that commits, then fails (its observer closes the writer at the first statement after the rekey's commit, the journal mode's, so the check under the new key fails): the pool takes the new key, and the writer it opens in place of the closed one, its readers and a new connection open with it (found by a reviewer: the replacement opened with the old key, for good)")
    func rekeyCommittedThenFailed() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("rekeyed.db")
        let observer = MisusingObserver()
        let pool = try DatabasePool(path: path, key: .passphrase("before"),
                                    configuration: .init(readerCount: 1, database: .init(observer: observer)))
        defer { pool.close() }
        try pool.write { db in
            try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
            observer.database.withLock { $0 = Unowned(db) }
        }
        // The pool reads the salt, then rekeys; the rekey's first statement after its commit reads the journal mode.
        observer.action.withLock { $0 = .closeAtContextAfter("cipher_salt") }
        let error = thrownError { try pool.rekey(to: .passphrase("after")) }
        #expect(error?.kind == .misuse && error?.message.contains("the rekey was committed") == true,
                "\(String(describing: error))")
        #expect(observer.action.withLock { $0 } == nil, "the observer never closed the writer")
        try pool.write { try $0.execute("INSERT INTO t VALUES (2)") }
        #expect(try pool.read { try $0.scalar(Int.self, "SELECT sum(x) FROM t") } == 3)
        #expect(try Database(path: path, key: .passphrase("after")).scalar(Int.self, "SELECT sum(x) FROM t") == 3)
    }

    @Test("a pool closed from inside its own async work (a write's closure, with group commit on or off; its observer's writerAcquired for such a write or a writer session; a writer session, which then awaits a read; a read such a session awaits) returns, and the pool's connections are closed once that work has released them, which a close() from outside waits for (found by an attacker: the close waited for the writer the work held, for ever)",
          arguments: ["write, group commit", "write", "writerAcquired, group commit", "writerAcquired", "writerAcquired, session",
                      "session, then a read", "writerQueueChanged", "session awaiting a read that closes"])
    func closedFromItsOwnAsyncWork(_ route: String) async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("close.db")
        let observer = PoolClosingObserver()
        var configuration = DatabasePool.Configuration(readerCount: 1, database: .init(observer: observer))
        if !route.hasSuffix("group commit") { configuration.groupCommit = .off }
        let pool = try DatabasePool(path: path, key: .passphrase("close"), configuration: configuration)
        observer.pool = pool
        try await pool.write { try $0.execute("CREATE TABLE t(x)") }
        let fromTheClosure = route.hasPrefix("write,") || route == "write"
        if route.hasPrefix("writerAcquired") { observer.armed.withLock { $0 = true } }
        // The writer held by a sync write on a thread of its own until the observer, told the async write queued,
        // closes the pool (a reviewer: the close queued behind the write's own wait).
        let holder = route == "writerQueueChanged" ? try await holdWriterUntilQueueChanges(pool, observer) : nil
        await waitForReturn(within: .seconds(30), "\(route): a pool closed from inside its own work") {
            if route.hasSuffix("session") {
                _ = try? await pool.writeSession { session in
                    try await session.execute { try $0.execute("INSERT INTO t VALUES (1)") }
                }
            } else if route == "session awaiting a read that closes" {
                // The read's closure closes, on a pool thread, where no session's mark is: its end performed the close,
                // and waited for the writer the session held, while the session awaited the read (a reviewer).
                _ = try? await pool.writeSession { _ in
                    _ = try? await pool.read { _ in pool.close() }
                }
            } else if route.hasPrefix("session") {
                // Closed inside the session, then a read the session awaits, which a pool thread runs (a reviewer:
                // the read's end performed the close, and waited for the writer the session held).
                _ = try? await pool.writeSession { _ in
                    pool.close()
                    _ = try? await pool.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") }
                }
            } else {
                _ = try? await pool.write { db in
                    try db.execute("INSERT INTO t VALUES (1)")
                    if fromTheClosure { pool.close() }
                }
            }
        }
        if let holder { await waitForReturn(within: .seconds(30), "the holder's write", holder) }
        #expect(observer.armed.withLock { $0 } == false, "\(route): the observer was never told")
        #expect(observer.armedAtQueue.withLock { $0 } == nil, "\(route): the observer was never told")
        #expect(pool.isClosed)
        // Closed, not only marked: a close() from outside returns once the last connection to close removed the
        // write-ahead log.
        try await offPool { pool.close() }
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "\(route): the connections are still open")
    }

    @Test("a close asked inside async work (a write's closure, with group commit on or off; a writer session) is performed on a thread of its own, not on the task's: with every task on one thread (a task executor of one thread, as the cooperative pool of a 1-core machine), the writer session queued next, which awaits the closing call, still runs, and every call returns (stop 63 left it undone: the close blocked that thread, waiting for the session that needed it; a reviewer: the close waited for the session, which awaited the closing call)",
          arguments: ["write", "write, group commit", "session"])
    func closeAskedInsideAsyncWorkLeavesTheTasksThread(_ route: String) async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("close.db")
        let observer = PoolClosingObserver() // no pool: it only tells when a write queues (armedAtQueue)
        var configuration = DatabasePool.Configuration(readerCount: 1, database: .init(observer: observer))
        if route != "write, group commit" { configuration.groupCommit = .off }
        let pool = try DatabasePool(path: path, key: .passphrase("close"), configuration: configuration)
        try await pool.write { try $0.execute("CREATE TABLE t(x)") }
        let executor = SerialThreadExecutor()
        let holding = Shared(false), queuedInTime = Shared(true)
        let nextSession = Shared<String?>(nil)
        await waitForReturn(within: .seconds(30), "\(route): a close asked inside async work, one thread for every task") {
            let closing = Task(executorPreference: executor) {
                if route == "session" {
                    _ = try? await pool.writeSession { session in
                        try await session.execute { try $0.execute("INSERT INTO t VALUES (1)") }
                        // Until the next session queues for the writer, without holding the one thread.
                        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                            observer.armedAtQueue.withLock { $0 = { continuation.resume() } }
                            holding.update { $0 = true }
                        }
                        pool.close()
                    }
                } else {
                    _ = try? await pool.write { db in
                        try db.execute("INSERT INTO t VALUES (1)")
                        // Wait until the next session queues for the writer.
                        let queued = DispatchSemaphore(value: 0) // off the pool: the pool's worker thread runs this
                        observer.armedAtQueue.withLock { $0 = { queued.signal() } }
                        holding.update { $0 = true }
                        let waited = queued.wait(timeout: .now() + 20) // off the pool: as above
                        if waited == .timedOut { queuedInTime.update { $0 = false } }
                        pool.close()
                    }
                }
            }
            while !holding.get() { try? await Task.sleep(for: .milliseconds(5)) }
            let next = Task(executorPreference: executor) {
                let result = await outcome {
                    try await pool.writeSession { _ in
                        await closing.value
                        return "ran"
                    }
                }
                nextSession.update { $0 = (try? result.get()) ?? "failed: \(String(describing: result.error))" }
            }
            await closing.value
            await next.value
        }
        #expect(queuedInTime.get(), "\(route): the next session never queued for the writer")
        #expect(nextSession.get() != nil)
        #expect(pool.isClosed)
        try await offPool { pool.close() }
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "\(route): the connections are still open")
    }

    @Test("a write running while another thread closes the pool returns at its end, without waiting for that close (a reviewer: it waited, as though its own work had asked the close, for a close that waits for a reader)",
          arguments: [false, true])
    func writeDoesNotWaitForAnotherCallersClose(groupCommit: Bool) async throws {
        let folder = try TemporaryDirectory()
        var configuration = DatabasePool.Configuration(readerCount: 1)
        if !groupCommit { configuration.groupCommit = .off }
        let pool = try DatabasePool(path: folder.file("outside.db"), key: .passphrase("outside"),
                                    configuration: configuration)
        try await pool.write { try $0.execute("CREATE TABLE t(x)") }
        // A reader held until the test lets it go: the outside close waits for it.
        let reader = try await HeldReader(pool)
        let closeDone = DispatchSemaphore(value: 0) // off the pool: signalled and waited on threads of the test's own
        let (write, returned) = try await writeUntilClosed(pool)
        Thread.detachNewThread {
            pool.close()
            closeDone.signal()
        }
        for _ in 0..<4000 where !returned.get() { try await Task.sleep(for: .milliseconds(5)) }
        #expect(returned.get(), "the write waited for the close another thread asked")
        reader.letGo()
        await write.value
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                closeDone.wait() // off the pool: a thread of its own
                continuation.resume()
            }
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file("outside.db") + "-wal"))
    }

    @Test("a close asked in a read's closure does not hold back a write that ends meanwhile: the write returns while the closure still waits for it (a reviewer: the write performed the close, which waited for that closure's reader)",
          arguments: [false, true])
    func closeAskedInAReadStaysTheReads(groupCommit: Bool) async throws {
        let folder = try TemporaryDirectory()
        var configuration = DatabasePool.Configuration(readerCount: 1)
        if !groupCommit { configuration.groupCommit = .off }
        let pool = try DatabasePool(path: folder.file("nested.db"), key: .passphrase("nested"),
                                    configuration: configuration)
        try await pool.write { try $0.execute("CREATE TABLE t(x)") }
        let sawTheReturn = Shared<Bool?>(nil)
        let readDone = DispatchSemaphore(value: 0) // off the pool: signalled and waited on threads of the test's own
        let (write, returned) = try await writeUntilClosed(pool)
        Thread.detachNewThread {
            _ = try? pool.read { _ in
                pool.close()
                let started = ContinuousClock.now
                while !returned.get() && ContinuousClock.now - started < .seconds(20) {
                    usleep(2000) // off the pool: a thread of the test's own
                }
                sawTheReturn.update { $0 = returned.get() }
            }
            readDone.signal()
        }
        await write.value
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                readDone.wait() // off the pool: a thread of its own
                continuation.resume()
            }
        }
        #expect(sawTheReturn.get() == true, "the write returned only after the read's closure gave up waiting for it")
        #expect(pool.isClosed)
        try await offPool { pool.close() }
        #expect(!FileManager.default.fileExists(atPath: folder.file("nested.db") + "-wal"),
                "the connections were not closed")
    }

    @Test("after a nested close, a close() from the observer's events that the closing causes (the writer's release, the close's own statement) is nested and returns, and a close() from outside returns once the connections are closed (a reviewer: those events were reported outside the pool's work, where a close waited for the close in progress, for ever)",
          arguments: ["connectionReleased", "statementFinished"])
    func closeFromTheClosingsOwnEvents(_ event: String) async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("events.db")
        let observer = EventClosingObserver(event: event)
        var configuration = DatabasePool.Configuration(readerCount: 1, database: .init(observer: observer))
        configuration.groupCommit = .off
        let pool = try DatabasePool(path: path, key: .passphrase("events"), configuration: configuration)
        observer.pool = pool
        try await pool.write { try $0.execute("CREATE TABLE t(x)") }
        await waitForReturn(within: .seconds(30), "\(event): a close from an event of the closing") {
            _ = try? await pool.write { db in
                try db.execute("INSERT INTO t VALUES (1)")
                observer.armed.withLock { $0 = true }
                pool.close()
            }
            _ = try? await offPool { pool.close() }
        }
        #expect(observer.closedFromTheEvent.withLock { $0 }, "\(event): the observer never closed from the event")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("a close() from outside after a nested close interrupts what still runs (a reviewer: the nested close interrupts nothing, and the later close waited for a statement without end)")
    func closeFromOutsideInterruptsAfterANestedClose() async throws {
        let folder = try TemporaryDirectory()
        let pool = try DatabasePool(path: folder.file("endless.db"), key: .passphrase("endless"),
                                    configuration: .init(readerCount: 1))
        try await pool.write { try $0.execute("CREATE TABLE t(x)") }
        let started = Shared(false), readError = Shared<SQLCipherError?>(nil)
        let readDone = DispatchSemaphore(value: 0) // off the pool: signalled and waited on threads of the test's own
        Thread.detachNewThread {
            do {
                _ = try pool.read { db in
                    pool.close()
                    started.update { $0 = true }
                    return try db.scalar(Int.self, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                        + "SELECT count(*) FROM c")
                }
            } catch {
                readError.update { $0 = error as? SQLCipherError }
            }
            readDone.signal()
        }
        for _ in 0..<4000 where !started.get() { try await Task.sleep(for: .milliseconds(5)) }
        try #require(started.get(), "the read did not start")
        await waitForReturn(within: .seconds(30), "a close from outside while a statement without end runs") {
            _ = try? await offPool { pool.close() }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                readDone.wait() // off the pool: a thread of its own
                continuation.resume()
            }
        }
        #expect(readError.get()?.kind == .interrupted, "\(String(describing: readError.get()))")
        #expect(!FileManager.default.fileExists(atPath: folder.file("endless.db") + "-wal"))
    }

    @Test("a close() from the observer's currentContext(), which an async write or a writer session asks while it holds the writer, is nested and returns (found by an attacker: it waited, as a close from outside, for the writer its caller held)",
          arguments: ["write", "session"])
    func closeFromCurrentContext(_ route: String) async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("context.db")
        let observer = ContextClosingObserver()
        var configuration = DatabasePool.Configuration(readerCount: 1, database: .init(observer: observer))
        configuration.groupCommit = .off
        let pool = try DatabasePool(path: path, key: .passphrase("context"), configuration: configuration)
        observer.pool = pool
        try await pool.write { try $0.execute("CREATE TABLE t(x)") }
        observer.armed.withLock { $0 = true }
        await waitForReturn(within: .seconds(30), "\(route): a close from currentContext()") {
            if route == "session" {
                _ = try? await pool.writeSession { session in
                    try await session.execute { try $0.execute("INSERT INTO t VALUES (1)") }
                }
            } else {
                _ = try? await pool.write { try $0.execute("INSERT INTO t VALUES (1)") }
            }
            _ = try? await offPool { pool.close() }
        }
        #expect(observer.closes.withLock { $0 } > 0, "\(route): the observer never closed")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("a close() from outside, on a task that shares its one thread with an async write's task, returns: the write gives the writer back on the pool's thread, not on its task's (found by an attacker: the close held the one thread, and the write could not give the writer back)",
          arguments: [false, true])
    func closeFromATaskOnTheWritesExecutor(groupCommit: Bool) async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("executor.db")
        var configuration = DatabasePool.Configuration(readerCount: 1)
        if !groupCommit { configuration.groupCommit = .off }
        let pool = try DatabasePool(path: path, key: .passphrase("executor"), configuration: configuration)
        try await pool.write { try $0.execute("CREATE TABLE t(x)") }
        let executor = SerialThreadExecutor()
        let inWrite = Shared(false)
        await waitForReturn(within: .seconds(30), "a close from a task on the write's executor") {
            let write = Task(executorPreference: executor) {
                _ = try? await pool.write { db in
                    try db.execute("INSERT INTO t VALUES (1)")
                    inWrite.update { $0 = true }
                    usleep(200_000) // off the pool: the pool's worker thread runs the write's closure
                }
            }
            while !inWrite.get() { try? await Task.sleep(for: .milliseconds(5)) }
            let close = Task(executorPreference: executor) { pool.close() }
            await close.value
            await write.value
        }
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("a close() from outside after work closed the pool's writer removes the -wal file: a read-write connection closes last (found by an attacker: after a close interrupted a rekey, only read-only readers were left, which cannot)")
    func closeAfterTheWriterWasClosed() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("writer.db")
        let pool = try DatabasePool(path: path, key: .passphrase("writer"), configuration: .init(readerCount: 2))
        try await pool.write { try $0.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        _ = try? await pool.write { db in db.close() }
        #expect(try await pool.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") } == 1)
        try await offPool { pool.close() }
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "the -wal file was left behind")
        #expect(try Database(path: path, key: .passphrase("writer")).scalar(Int.self, "SELECT count(*) FROM t") == 1)
    }

    @Test("a rekey waiting for the connections when a nested close comes fails (misuse) and leaves the file under its key, its readers not reopened (found by an attacker: it went on after the close had begun)")
    func rekeyWaitingWhenClosed() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("rekey.db")
        let pool = try DatabasePool(path: path, key: .passphrase("before"), configuration: .init(readerCount: 1))
        try await pool.write { try $0.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        let holding = Shared(false), go = Shared(false), rekeyError = Shared<SQLCipherError?>(nil)
        let readDone = DispatchSemaphore(value: 0), rekeyDone = DispatchSemaphore(value: 0) // off the pool: threads' own
        Thread.detachNewThread {
            _ = try? pool.read { _ in
                holding.update { $0 = true }
                while !go.get() { usleep(2000) } // off the pool: a thread of the test's own
                pool.close()
            }
            readDone.signal()
        }
        for _ in 0..<4000 where !holding.get() { try await Task.sleep(for: .milliseconds(5)) }
        try #require(holding.get(), "the reader was not held")
        Thread.detachNewThread {
            do { try pool.rekey(to: .passphrase("after")) } catch { rekeyError.update { $0 = error as? SQLCipherError } }
            rekeyDone.signal()
        }
        // The rekey takes the writer, then waits for the reader.
        try await Task.sleep(for: .milliseconds(300))
        go.update { $0 = true }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                readDone.wait() // off the pool: a thread of its own
                rekeyDone.wait() // off the pool: a thread of its own
                continuation.resume()
            }
        }
        try await offPool { pool.close() }
        #expect(rekeyError.get()?.kind == .misuse, "\(String(describing: rekeyError.get()))")
        #expect(try Database(path: path, key: .passphrase("before")).scalar(Int.self, "SELECT count(*) FROM t") == 1)
    }

    @Test("4 writer tasks and 8 reader tasks: every acknowledged write is there, no busy error, no partial transaction")
    func concurrentWritersAndReaders() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("stress.db")
        let pool = try DatabasePool(path: path, key: .rawKey([UInt8](repeating: 1, count: 32)),
                                    configuration: .init(readerCount: 4))
        try await pool.write { db in try db.execute("CREATE TABLE t(batch INTEGER, amount INTEGER)") }
        // A fixed amount of work rather than a deadline: on a busy machine the tasks may start late, and each
        // writer still commits its batches while the readers keep reading until the last writer is done.
        let batchesPerWriter = 60
        let acknowledged = Shared<[Int]>([])
        let writersDone = Shared(0)

        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    defer { writersDone.update { $0 += 1 } }
                    for batch in 0..<batchesPerWriter {
                        let id = writer * 1_000_000 + batch
                        // Each transaction inserts a pair summing to zero: a reader seeing one row of a pair
                        // would see a partial transaction.
                        try await pool.write { db in
                            try db.execute("INSERT INTO t VALUES (?, 5)", [id])
                            try db.execute("INSERT INTO t VALUES (?, -5)", [id])
                        }
                        acknowledged.update { $0.append(id) }
                    }
                }
            }
            for _ in 0..<8 {
                group.addTask {
                    var lastCount = 0
                    var reads = 0
                    while writersDone.get() < 4 || reads == 0 {
                        let (count, sum, odd) = try await pool.read { db in
                            (try db.scalar(Int.self, "SELECT count(*) FROM t") ?? 0,
                             try db.scalar(Int.self, "SELECT coalesce(sum(amount), 0) FROM t") ?? 0,
                             try db.scalar(Int.self, "SELECT count(*) FROM (SELECT batch FROM t GROUP BY batch HAVING count(*) != 2)") ?? 0)
                        }
                        #expect(count % 2 == 0 && sum == 0 && odd == 0, "a reader saw a partial transaction")
                        #expect(count >= lastCount, "a reader went back in time")
                        lastCount = count
                        reads += 1
                    }
                }
            }
            try await group.waitForAll()
        }
        let ids = acknowledged.get()
        #expect(ids.count == 4 * batchesPerWriter)
        let stored = try await pool.read { db in
            try Set(db.fetchAll("SELECT DISTINCT batch FROM t").map { try $0.get(0, as: Int.self) })
        }
        #expect(stored == Set(ids), "acknowledged writes are missing")
        pool.close()
    }

    @Test("cancelling an async read interrupts it")
    func cancelRead() async throws {
        let folder = try TemporaryDirectory()
        let pool = try DatabasePool(path: folder.file("cancel.db"), key: .rawKey([UInt8](repeating: 2, count: 32)))
        let endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
        let task = Task { try await pool.read { try $0.scalar(Int.self, endless) } }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        let result = await task.result
        guard case .failure(let error) = result else {
            Issue.record("an endless read finished")
            return
        }
        #expect((error as? SQLCipherError)?.kind == .interrupted, "\(error)")
        #expect(try await pool.read { try $0.scalar(Int.self, "SELECT 1") } == 1, "the pool still works")

        // Cancelled between statements (many short ones, where an interrupt has nothing to stop).
        let manyShort = Task {
            try await pool.read { db in
                for _ in 0..<100_000_000 { _ = try db.scalar(Int.self, "SELECT 1") }
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        manyShort.cancel()
        let shortResult = await manyShort.result
        #expect((shortResult.error as? SQLCipherError)?.kind == .interrupted, "a loop of short statements ran on")

        // Cancelled before it starts: the work never runs.
        let ran = Shared(false)
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await pool.read { _ in ran.update { $0 = true } }
        }
        let earlyResult = await early.result
        #expect(throws: (any Error).self) { try earlyResult.get() }
        #expect(!ran.get())
        pool.close()
    }

    @Test("closing a pool with work in flight fails that work cleanly, and later work too")
    func closeWithWorkInFlight() async throws {
        let folder = try TemporaryDirectory()
        let pool = try DatabasePool(path: folder.file("close.db"), key: .rawKey([UInt8](repeating: 3, count: 32)))
        let endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
        let reading = Task { try await pool.read { try $0.scalar(Int.self, endless) } }
        let writing = Task { try await pool.write { try $0.execute("CREATE TABLE t AS \(endless)") } }
        try await Task.sleep(for: .milliseconds(300))
        pool.close()
        for result in [await reading.result.map { _ in () }, await writing.result] {
            guard case .failure(let error) = result else {
                Issue.record("endless work finished")
                continue
            }
            let kind = (error as? SQLCipherError)?.kind
            #expect(kind == .interrupted || kind == .misuse, "\(error)")
        }
        #expect(pool.isClosed)
        let closedRead = await outcome { try await pool.read { _ in 1 } }
        #expect((closedRead.error as? SQLCipherError)?.kind == .misuse)
        await #expect(throws: SQLCipherError.self) { try await pool.write { _ in 1 } }
        // Nothing was committed by the interrupted write, and the file is sound.
        let check = try Database(path: folder.file("close.db"), key: .rawKey([UInt8](repeating: 3, count: 32)))
        #expect(try check.scalar(Int.self, "SELECT count(*) FROM sqlite_schema WHERE name = 't'") == 0)
        #expect(try check.integrityCheck().isEmpty)
    }

    @Test("a barrier write runs while no read runs")
    func barrier() async throws {
        let folder = try TemporaryDirectory()
        let pool = try DatabasePool(path: folder.file("barrier.db"), key: .rawKey([UInt8](repeating: 4, count: 32)),
                                    configuration: .init(readerCount: 2))
        try await pool.write { try $0.execute("CREATE TABLE t(a)") }
        let activeReads = Shared(0)
        let overlap = Shared(false)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<20 {
                        try await pool.read { _ in
                            activeReads.update { $0 += 1 }
                            usleep(2000) // off the pool: a pool read's body runs on the library's worker thread
                            activeReads.update { $0 -= 1 }
                        }
                    }
                }
            }
            group.addTask {
                for _ in 0..<5 {
                    try await offPool {
                        try pool.barrierWrite { db in // off the pool: offPool runs it on a thread of its own
                            if activeReads.get() != 0 { overlap.update { $0 = true } }
                            try db.execute("INSERT INTO t VALUES (1)")
                        }
                    }
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            try await group.waitForAll()
        }
        #expect(!overlap.get(), "a read ran during a barrier write")
        #expect(try await pool.read { try $0.scalar(Int.self, "SELECT count(*) FROM t") } == 5)
        pool.close()
    }
}

/// Runs `body` as synchronous code: inside it, a pool's calls resolve to their blocking variants.
private func synchronously<Result>(_ body: () throws -> Result) throws -> Result {
    try body()
}

/// Runs `body` in a task of its own and waits for it from a thread of its own, at most `limit` (far above what it
/// needs). A body still running then is a deadlock, which may block the cooperative threads this test would report
/// from (an attacker saw two such hangs stall every async test): the run is ended with `what` on standard error, as
/// the suite's hang guard does.
/// Starts an `async` write into `pool`'s table `t` whose closure, once running, waits until the pool is closed (20 s
/// at most); returns once the closure runs, with the write's task and a flag set when the write returned.
private func writeUntilClosed(_ pool: DatabasePool) async throws -> (Task<Void, Never>, Shared<Bool>) {
    let inWrite = Shared(false), returned = Shared(false)
    let write = Task {
        _ = await outcome {
            try await pool.write { db in
                try db.execute("INSERT INTO t VALUES (1)")
                inWrite.update { $0 = true }
                let started = ContinuousClock.now
                while !pool.isClosed && ContinuousClock.now - started < .seconds(20) {
                    usleep(2000) // off the pool: the pool's worker thread runs the write's closure
                }
            }
        }
        returned.update { $0 = true }
    }
    for _ in 0..<4000 where !inWrite.get() { try await Task.sleep(for: .milliseconds(5)) }
    try #require(inWrite.get(), "the write did not start")
    return (write, returned)
}

private func waitForReturn(within limit: Duration, _ what: String, _ body: @escaping @Sendable () async -> Void) async {
    let finished = DispatchSemaphore(value: 0)
    Task.detached {
        await body()
        finished.signal()
    }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread.detachNewThread {
            let seconds = Double(limit.components.seconds)
            guard finished.wait(timeout: .now() + seconds) == .success else {
                let message = "HANG: \(what) did not return within \(limit); ending the test process so that the run "
                    + "fails instead of waiting forever\n"
                FileHandle.standardError.write(Data(message.utf8))
                exit(124)
            }
            continuation.resume()
        }
    }
}

/// An observer that closes its pool when told the writer was acquired, once armed.
private final class PoolClosingObserver: DatabaseObserver, @unchecked Sendable {
    // Set once, before the pool's work: read from the pool's threads after.
    weak var pool: DatabasePool?
    let armed = Mutex(false)
    /// Armed for writerQueueChanged: closes the pool when a write queues, then runs the closure.
    let armedAtQueue = Mutex<(@Sendable () -> Void)?>(nil)

    func writerAcquired(_ event: PoolWaitEvent) {
        guard armed.withLock({ armed in defer { armed = false }; return armed }) else { return }
        pool?.close()
    }

    func writerQueueChanged(_ event: PoolQueueEvent) {
        guard event.queueDepth > 0, let then = armedAtQueue.withLock({ armed in defer { armed = nil }; return armed })
        else { return }
        pool?.close()
        then()
    }
}

/// Holds `pool`'s writer with a sync write on a thread of its own, and arms `observer` to close the pool when a write
/// queues behind it, then let it go. Returns once the writer is held; the returned closure returns once the holder's
/// write has ended.
private func holdWriterUntilQueueChanges(_ pool: DatabasePool, _ observer: PoolClosingObserver) async throws
    -> @Sendable () async -> Void {
    let holding = Mutex(false)
    let letGo = DispatchSemaphore(value: 0)
    let ended = DispatchSemaphore(value: 0)
    observer.armedAtQueue.withLock { $0 = { letGo.signal() } }
    Thread.detachNewThread {
        _ = try? pool.write { _ in
            holding.withLock { $0 = true }
            // Off the cooperative pool: a thread of the test's own, held until the observer lets it go.
            letGo.wait()
        }
        ended.signal()
    }
    while !holding.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
    return {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                ended.wait()
                continuation.resume()
            }
        }
    }
}

/// An observer that closes its pool, once armed, at the first of `event` (the writer's release, or a statement's end).
private final class EventClosingObserver: DatabaseObserver, @unchecked Sendable {
    // Set once, before the pool's work: read from the pool's threads after.
    weak var pool: DatabasePool?
    let event: String
    let armed = Mutex(false)
    let closedFromTheEvent = Mutex(false)

    init(event: String) { self.event = event }

    private func closeIfArmed(_ name: String) {
        guard name == event, armed.withLock({ armed in defer { armed = false }; return armed }) else { return }
        pool?.close()
        closedFromTheEvent.withLock { $0 = true }
    }

    func connectionReleased(_ event: PoolReleaseEvent) {
        if event.role == .writer { closeIfArmed("connectionReleased") }
    }

    /// The close's own statement (the writer's `SELECT 1` that clears an interrupt), not the write's.
    func statementFinished(_ event: StatementEvent) {
        if event.sql == "SELECT 1" { closeIfArmed("statementFinished") }
    }
}

/// An observer whose currentContext() closes its pool, every time once armed.
private final class ContextClosingObserver: DatabaseObserver, @unchecked Sendable {
    // Set once, before the pool's work: read from the pool's threads after.
    weak var pool: DatabasePool?
    let armed = Mutex(false)
    let closes = Mutex(0)

    func currentContext() -> (any Sendable)? {
        guard armed.withLock({ $0 }) else { return nil }
        pool?.close()
        closes.withLock { $0 += 1 }
        return nil
    }
}
