import Foundation
import SQLCipherKit
import Testing
import VaporTesting
import VaporTodo

@Suite("VaporTodo: the todo API over HTTP, on an encrypted database")
struct TodoAPITests {
    @Test("create, list, read, update and delete over HTTP; the file is encrypted and opens with its key only")
    func crud() async throws {
        let folder = try TestFolder()
        let passphrase = "vapor-todo key \(UUID().uuidString)"
        let settings = TodoSettings(databasePath: folder.path + "/todo.db",
                                    keySource: .file(try folder.keyFile("key", passphrase, mode: 0o600)))
        let marker = "todo-marker-\(UUID().uuidString)", renamed = "todo-renamed-\(UUID().uuidString)"

        try await withApp(configure: { try await configure($0, settings: settings) }) { app in
            let client = try app.testing()
            // Create.
            var response = try await client.sendRequest(.POST, "todos") { try $0.content.encode(CreateTodoRequest(title: marker)) }
            #expect(response.status == .created)
            let first = try response.content.decode(TodoDTO.self)
            #expect(first.title == marker && !first.completed && first.createdAt != nil)
            response = try await client.sendRequest(.POST, "todos") {
                try $0.content.encode(CreateTodoRequest(title: "second", completed: true))
            }
            #expect(response.status == .created)
            let second = try response.content.decode(TodoDTO.self)
            response = try await client.sendRequest(.POST, "todos") { try $0.content.encode(CreateTodoRequest(title: "  ")) }
            #expect(response.status == .badRequest)

            // List and read.
            response = try await client.sendRequest(.GET, "todos")
            #expect(response.status == .ok)
            #expect(try response.content.decode([TodoDTO].self).map(\.id) == [first.id, second.id])
            response = try await client.sendRequest(.GET, "todos/\(first.id)")
            #expect(try response.content.decode(TodoDTO.self) == first)
            #expect(try await client.sendRequest(.GET, "todos/not-a-uuid").status == .badRequest)

            // Update.
            response = try await client.sendRequest(.PATCH, "todos/\(first.id)") {
                try $0.content.encode(UpdateTodoRequest(title: renamed, completed: true))
            }
            #expect(response.status == .ok)
            let updated = try response.content.decode(TodoDTO.self)
            #expect(updated.title == renamed && updated.completed && updated.updatedAt != nil)
            response = try await client.sendRequest(.GET, "todos/\(first.id)")
            #expect(try response.content.decode(TodoDTO.self).title == renamed)
            response = try await client.sendRequest(.GET, "todos?completed=false")
            #expect(try response.content.decode([TodoDTO].self).isEmpty)

            // Delete.
            #expect(try await client.sendRequest(.DELETE, "todos/\(second.id)").status == .noContent)
            #expect(try await client.sendRequest(.GET, "todos/\(second.id)").status == .notFound)
            #expect(try await client.sendRequest(.DELETE, "todos/\(second.id)").status == .notFound)
            response = try await client.sendRequest(.GET, "todos")
            #expect(try response.content.decode([TodoDTO].self).map(\.id) == [first.id])
        }

        // The app is shut down: what is on disk.
        try folder.expectEncrypted("todo.db", markers: [marker, renamed])
        #expect {
            _ = try Database(path: folder.path + "/todo.db", key: .passphrase("not the key"), mode: .readOnly)
        } throws: { SQLCipherError.Kind.wrongKeyOrNotADatabase ~= $0 }
        let db = try Database(path: folder.path + "/todo.db", key: .passphrase(passphrase), mode: .readOnly)
        let rows = try db.fetchAll("SELECT title, completed FROM todos")
        #expect(rows.count == 1)
        #expect(try rows.first?.get("title", as: String.self) == renamed)
        #expect(try rows.first?.get("completed", as: Int.self) == 1)
        db.close()

        // The app does not boot with another key; the message names no key.
        let wrong = TodoSettings(databasePath: settings.databasePath,
                                 keySource: .file(try folder.keyFile("wrong-key", "another key", mode: 0o400)))
        await #expect {
            try await withApp(configure: { try await configure($0, settings: wrong) }) { _ in }
        } throws: { error in
            "\(error)".contains("The key does not open") && !"\(error)".contains("another key")
        }
    }

    @Test("a key file that group or others can read stops boot, naming the chmod; the message holds no key")
    func unprotectedKeyFile() async throws {
        let folder = try TestFolder()
        let settings = TodoSettings(databasePath: folder.path + "/todo.db",
                                    keySource: .file(try folder.keyFile("key", "open key", mode: 0o644)))
        await #expect {
            try await withApp(configure: { try await configure($0, settings: settings) }) { _ in }
        } throws: { error in
            guard let error = error as? TodoBootError else { return false }
            return error.kind == .unprotected && error.message.contains("chmod go-rwx")
                && !error.message.contains("open key")
        }
        #expect(!FileManager.default.fileExists(atPath: settings.databasePath))
    }

    @Test("the environment names exactly one key source and a known format")
    func environment() throws {
        let file = try TodoSettings(environment: ["TODO_KEY_FILE": "/run/key", "TODO_DATABASE": "/data/t.db"])
        #expect(file == TodoSettings(databasePath: "/data/t.db", keySource: .file("/run/key")))
        let credential = try TodoSettings(environment: ["TODO_KEY_CREDENTIAL": "todo-key", "TODO_KEY_FORMAT": "raw-hex"])
        #expect(credential == TodoSettings(databasePath: "todo.db", keySource: .credential("todo-key"), keyFormat: .rawHex))
        #expect { try TodoSettings(environment: [:]) } throws: { "\($0)".contains("no key source: set TODO_KEY_FILE") }
        #expect { try TodoSettings(environment: ["TODO_KEY_FILE": "a", "TODO_KEY_CREDENTIAL": "b"]) } throws: {
            "\($0)".contains("two key sources")
        }
        #expect { try TodoSettings(environment: ["TODO_KEY_FILE": "a", "TODO_KEY_FORMAT": "base64"]) } throws: {
            "\($0)".contains("'passphrase' or 'raw-hex'")
        }
    }

    @Test("a credential outside systemd stops boot, naming the unit line to add")
    func credentialOutsideSystemd() async throws {
        try #require(ProcessInfo.processInfo.environment[Key.credentialsDirectoryVariable] == nil,
                     "run without CREDENTIALS_DIRECTORY")
        let folder = try TestFolder()
        let settings = TodoSettings(databasePath: folder.path + "/todo.db", keySource: .credential("todo-key"))
        #expect { try settings.key() } throws: { error in
            guard let error = error as? TodoBootError else { return false }
            return error.kind == .credentialsNotProvided && error.message.contains("LoadCredential")
        }
    }
}

/// A temporary folder, removed with its contents when the value is released.
final class TestFolder {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("vapor-todo-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `contents` into the file `name` with `mode`; returns its path.
    func keyFile(_ name: String, _ contents: String, mode: Int) throws -> String {
        let file = path + "/" + name
        try Data(contents.utf8).write(to: URL(fileURLWithPath: file))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file)
        return file
    }

    /// Expects the database `name` (and its -wal and -shm files, when present) to show neither SQLite's header
    /// nor any of `markers`.
    func expectEncrypted(_ name: String, markers: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))
        #expect(bytes.count > 0, sourceLocation: sourceLocation)
        #expect(!bytes.starts(with: Data("SQLite format 3\0".utf8)), "the file is plain SQLite",
                sourceLocation: sourceLocation)
        for suffix in ["", "-wal", "-shm"] {
            guard let bytes = FileManager.default.contents(atPath: path + "/" + name + suffix) else { continue }
            for marker in markers {
                #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(marker) is readable in \(name)\(suffix)",
                        sourceLocation: sourceLocation)
            }
        }
    }
}
