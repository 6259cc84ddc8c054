import Foundation
import SQLCipherKit

#if canImport(Glibc)
import Glibc
#endif

/// The shell's dot commands: a line that starts with `.` where a statement would start.
extension ShellSession {
    /// What a dot command did.
    enum DotResult {
        case done
        /// It failed (the message is out).
        case failed
        /// It ends the session, or the `.read` file it came from.
        case end(Ending)
    }

    /// The commands and what they do, for `.help` (and the shell's own help text).
    static let dotCommandHelp: [(usage: String, summary: String)] = [
        (".tables [PATTERN]", "List the tables and views (PATTERN: a LIKE pattern)"),
        (".schema [PATTERN]", "Show the CREATE statements (of the tables matching PATTERN)"),
        (".indexes [TABLE]", "List the indexes (of the tables matching TABLE)"),
        (".mode table|csv|json|line", "Set the output format (no argument: show it)"),
        (".headers on|off", "Print column names in table and csv mode"),
        (".timer on|off", "Print the time each statement took"),
        (".read FILE", "Run the SQL and dot commands in FILE"),
        (".output FILE|stdout", "Send rows to FILE (created with mode 600) or back to standard output"),
        (".backup FILE", "Write an encrypted copy of the database, with the same key, to the new file FILE"),
        (".check", "Check page authentication and structure (as sqlcipherkit check)"),
        (".info", "Show the format, cipher settings and page layout (as sqlcipherkit info)"),
        (".quit, .exit", "Leave the shell (so does Ctrl-D on an empty line)"),
        (".help", "Show this list"),
    ]

    /// Runs the dot command on `line`.
    func runDotCommand(_ line: String) -> DotResult {
        let words = Self.words(of: line)
        guard let name = words.first else { return .done }
        let arguments = Array(words.dropFirst())
        do {
            switch name {
            case ".quit", ".exit":
                return .end(.quit)
            case ".help":
                try requireArguments(arguments, 0...0, usage: ".help")
                let width = Self.dotCommandHelp.map(\.usage.count).max() ?? 0
                for (usage, summary) in Self.dotCommandHelp {
                    try output.line(usage + String(repeating: " ", count: width - usage.count) + "  " + summary)
                }
            case ".tables":
                try requireArguments(arguments, 0...1, usage: ".tables [PATTERN]")
                try listNames("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE "
                              + "'sqlite\\_%' ESCAPE '\\'", matching: arguments.first, column: "name")
            case ".indexes", ".indices":
                try requireArguments(arguments, 0...1, usage: ".indexes [TABLE]")
                try listNames("SELECT name FROM sqlite_schema WHERE type = 'index'", matching: arguments.first,
                              column: "tbl_name")
            case ".schema":
                try requireArguments(arguments, 0...1, usage: ".schema [PATTERN]")
                var sql = "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' "
                    + "ESCAPE '\\'"
                if arguments.first != nil { sql += " AND tbl_name LIKE ?1" }
                sql += " ORDER BY tbl_name, type DESC, name"
                for row in try database.fetchAll(sql, StatementArguments(arguments)) {
                    try output.line(RowPrinter.text(row[0]) + ";")
                }
            case ".mode":
                try requireArguments(arguments, 0...1, usage: ".mode table|csv|json|line")
                guard let argument = arguments.first else {
                    try output.line(format.rawValue)
                    break
                }
                guard let mode = RowFormat(rawValue: argument.lowercased()) else {
                    throw CommandFailure(message: "unknown mode \(argument): use table, csv, json or line",
                                         status: .usage)
                }
                format = mode
            case ".headers", ".header":
                headers = try onOff(arguments, usage: ".headers on|off")
            case ".timer":
                timer = try onOff(arguments, usage: ".timer on|off")
            case ".read":
                try requireArguments(arguments, 1...1, usage: ".read FILE")
                return try read(arguments[0])
            case ".output":
                try requireArguments(arguments, 0...1, usage: ".output FILE|stdout")
                let file = arguments.first.flatMap { $0 == "stdout" ? nil : $0 }
                let next = try file.map(ShellOutputFile.open) ?? .standardOutput
                let previous = output
                output = next
                try previous.close()
            case ".backup", ".save":
                try requireArguments(arguments, 1...1, usage: ".backup FILE")
                try backup(to: arguments[0])
            case ".check":
                try requireArguments(arguments, 0...0, usage: ".check")
                try check()
            case ".info":
                try requireArguments(arguments, 0...0, usage: ".info")
                try info()
            default:
                throw CommandFailure(message: "unknown command \(name): enter .help for the list of commands",
                                     status: .usage)
            }
            try output.flush()
            return .done
        } catch {
            fail(error)
            return .failed
        }
    }

    /// The words of a dot command line: split at white space; '…' or "…" keep a word with spaces together.
    static func words(of line: String) -> [String] {
        var words: [String] = []
        var word = ""
        var quote: Character?
        var inWord = false
        for character in line {
            if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                inWord = true
            } else if character.isWhitespace {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        return words
    }

    private func requireArguments(_ arguments: [String], _ count: ClosedRange<Int>, usage: String) throws {
        guard count.contains(arguments.count) else {
            throw CommandFailure(message: "wrong number of arguments: use \(usage)", status: .usage)
        }
    }

    private func onOff(_ arguments: [String], usage: String) throws -> Bool {
        try requireArguments(arguments, 1...1, usage: usage)
        switch arguments[0].lowercased() {
        case "on", "yes", "true", "1": return true
        case "off", "no", "false", "0": return false
        default: throw CommandFailure(message: "\(arguments[0]) is neither on nor off: use \(usage)", status: .usage)
        }
    }

    /// Prints the first column of `sql`'s rows, one a line, filtered by `pattern` on `column` (LIKE).
    private func listNames(_ sql: String, matching pattern: String?, column: String) throws {
        let filtered = sql + (pattern == nil ? "" : " AND \(column) LIKE ?1") + " ORDER BY 1"
        for row in try database.fetchAll(filtered, StatementArguments(pattern.map { [$0] } ?? [])) {
            try output.line(RowPrinter.text(row[0]))
        }
    }

    /// `.read FILE`: the file's lines, as if typed (dot commands included), not recorded in the history.
    private func read(_ file: String) throws -> DotResult {
        guard readDepth < Self.maximumReadDepth else {
            throw CommandFailure(message: ".read files nest more than \(Self.maximumReadDepth) deep: does "
                + "\(file) read itself?", status: .failure)
        }
        let descriptor = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CommandFailure(message: "cannot read \(file) (\(String(cString: strerror(errno)))): check "
                + "the path", status: .failure)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw CommandFailure(message: "\(file) is not a regular file: .read takes a file of SQL",
                                 status: .failure)
        }
        readDepth += 1
        defer { readDepth -= 1 }
        let failuresBefore = failures
        switch run(PlainLineSource(descriptor: descriptor), recording: false, script: true) {
        case .endOfInput: return failures == failuresBefore ? .done : .failed
        case .stopped: return bail ? .end(.stopped) : .failed
        case let ending: return .end(ending)
        }
    }

    /// `.backup FILE`: the library's online backup, encrypted with the session's key, to a new file.
    private func backup(to file: String) throws {
        var existing = stat()
        guard lstat(file, &existing) != 0 else {
            throw CommandFailure(message: "\(file) already exists: .backup writes a new file; choose another "
                + "name or remove it", status: .failure)
        }
        try database.backup(to: file, key: key, replacing: false)
        try output.line("backed up to \(file)")
    }

    /// `.check`: the library's integrity check, on a connection of its own.
    private func check() throws {
        let report = try Database.checkIntegrity(path: path, key: key, cipher: cipher)
        for note in report.notes { try output.line("note: \(note)") }
        let failures = report.failures
        for failure in failures { try output.line("\(failure)") }
        guard failures.isEmpty else {
            throw CommandFailure(message: "\(path) failed its integrity check (\(failures.count) problem"
                + "\(failures.count == 1 ? "" : "s")): it was tampered with or is corrupt; restore it from a "
                + "backup", status: .integrityFailure)
        }
        try output.line("ok")
    }

    /// `.info`: what `sqlcipherkit info` prints.
    private func info() throws {
        let info = try Database.inspect(path: path, key: key, cipher: cipher)
        for line in info.textLines { try output.line(line) }
    }
}
