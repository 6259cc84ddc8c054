// MIT License, The SQLCipherKit authors.
import Foundation

/// The routes matrix's detector (issue 45): the effects a payload can leave, read the same way on a guarded
/// connection (`SQLRoutesTests.check`, which requires none) and on a connection without the guard
/// (`ReliabilityHelper route-controls`, which requires one for every case). One detector, so that the control
/// proves in every run that the very code judging the guarded cases sees what it looks for.
public struct RouteEffects {
    /// Reads the first column of the first row of a statement (nil on an error or no row).
    public typealias Query = (String) -> String?

    /// What is read before the route runs.
    public struct Before {
        let state: ProcessState
        let defaults: [String?]
    }

    /// The database's folder, the marker its rows hold in `t`, and how many rows.
    public let folder: String
    public let marker: String
    public let rowCount: Int
    /// SQLite's process-wide cipher defaults, read on a fresh connection.
    public let cipherDefaults: () -> [String?]

    public init(folder: String, marker: String, rowCount: Int, cipherDefaults: @escaping () -> [String?]) {
        self.folder = folder
        self.marker = marker
        self.rowCount = rowCount
        self.cipherDefaults = cipherDefaults
    }

    public func before() -> Before { Before(state: ProcessState.current(), defaults: cipherDefaults()) }

    /// The effects on the connection that ran the route, read through `query` before it closes: a copy of `t` in
    /// temp, temp_store FILE, and (with `reads`) `t` no longer read. A query that fails shows no copy: only a
    /// value read back counts.
    public func connectionEffects(reads: Bool = true, _ query: Query) -> [String] {
        var effects: [String] = []
        if let copies = query("SELECT count(*) FROM temp.sqlite_schema WHERE name = 't'"), copies != "0" {
            effects.append("a copy in temp")
        }
        if query("PRAGMA temp_store") == "1" { effects.append("temp_store is FILE") }
        if reads, query("SELECT count(*) FROM t") != "\(rowCount)" { effects.append("the connection no longer reads t") }
        return effects
    }

    /// The effects left once the connection is closed: process-wide state and cipher defaults changed since
    /// `before`, files written other than `asked` (and `allowedCopy`, a VACUUM INTO copy SQL may write: it must
    /// open like the database), the marker in plaintext in a new file, and a database that no longer opens with its
    /// key and settings (`reopen` opens a name in the folder, or nil) or fails its integrity check; without
    /// `reopen`, that last part is not judged (a file another program planted a schema in, which the guarded side
    /// refuses to load at all).
    public func fileEffects(since before: Before, asked: [String], allowedCopy: String?,
                            reopen: ((String) -> Query?)?) -> [String] {
        var effects: [String] = []
        let state = ProcessState.current()
        if state != before.state { effects.append("process-wide state changed (\(state))") }
        if cipherDefaults() != before.defaults { effects.append("a cipher default changed (\(cipherDefaults()))") }
        var files = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { !$0.hasPrefix("main.db") }.sorted()
        var checked = ["main.db"]
        if let allowedCopy, files.contains(allowedCopy) {
            files.removeAll { $0 == allowedCopy }
            checked.append(allowedCopy)
        }
        if files != asked.sorted() {
            effects.append("files written: \(files), asked for through a typed API: \(asked.sorted())")
        }
        for name in files where !asked.contains(name) {
            if let contents = FileManager.default.contents(atPath: folder + "/" + name),
               contents.range(of: Data(marker.utf8)) != nil {
                effects.append("the marker in plaintext in \(name)")
            }
        }
        for name in checked {
            guard let reopen else { break }
            guard let query = reopen(name) else {
                effects.append("\(name) no longer opens with its key and settings")
                continue
            }
            if query("SELECT count(*) FROM t") != "\(rowCount)" {
                effects.append("\(name) no longer reads its rows with its key and settings")
            } else if query("PRAGMA integrity_check") != "ok" {
                effects.append("\(name) fails integrity_check")
            }
        }
        return effects
    }
}
