// Runs FluentKit models on an encrypted file: timestamps, an enum, a JSON field, parent and children, a unique and
// a foreign-key constraint. Usage: fluent-consumer FOLDER MARKER, with the passphrase in FLUENT_CONSUMER_KEY.
//
// In an async function, not top-level code: there, `try await db.schema(…).create()` can resolve to FluentKit's
// EventLoopFuture overload, which returns before the statement runs.
import FluentKit
import FluentSQLCipherDriver
import Foundation
import Logging
import NIOPosix
import SQLCipherKit

enum Genre: String, Codable { case fiction, essay }
struct Details: Codable, Equatable { var pages: Int; var tags: [String] }

final class Author: Model, @unchecked Sendable {
    static let schema = "authors"
    @ID(key: .id) var id: UUID?
    @Field(key: "name") var name: String
    @Children(for: \.$author) var books: [Book]
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    init() {}
    init(name: String) { self.name = name }
}

final class Book: Model, @unchecked Sendable {
    static let schema = "books"
    @ID(key: .id) var id: UUID?
    @Field(key: "title") var title: String
    @Enum(key: "genre") var genre: Genre
    @Field(key: "details") var details: Details
    @Parent(key: "author_id") var author: Author
    init() {}
    init(title: String, genre: Genre, details: Details, authorID: UUID) {
        self.title = title
        self.genre = genre
        self.details = details
        self.$author.id = authorID
    }
}

@main
struct FluentConsumer {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let passphrase = ProcessInfo.processInfo.environment["FLUENT_CONSUMER_KEY"] else {
            FileHandle.standardError.write(Data("usage: FLUENT_CONSUMER_KEY=… fluent-consumer FOLDER MARKER\n".utf8))
            exit(2)
        }
        let path = arguments[1] + "/fluent.db", marker = arguments[2]

        let databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
        databases.use(try .sqlcipher(path: path, key: .passphrase(passphrase), sqlLogLevel: nil), as: .sqlcipher)
        let db = databases.database(.sqlcipher, logger: Logger(label: "consumer"), on: MultiThreadedEventLoopGroup.singleton.any())!

        try await db.schema("authors").id().field("name", .string, .required).field("created_at", .datetime)
            .unique(on: "name").create()
        try await db.schema("books").id().field("title", .string, .required).field("genre", .string, .required)
            .field("details", .json, .required).field("author_id", .uuid, .required, .references("authors", "id")).create()

        let author = Author(name: marker)
        try await author.create(on: db)
        try await Book(title: "One", genre: .fiction, details: Details(pages: 300, tags: ["a"]), authorID: author.id!)
            .create(on: db)
        let loaded = try await Author.query(on: db).with(\.$books).first()!
        print("children \(loaded.books.count) genre \(loaded.books[0].genre) pages \(loaded.books[0].details.pages)")
        print("timestamp \(loaded.createdAt != nil)")
        do {
            try await Author(name: marker).create(on: db)
            print("unique not enforced")
        } catch let error as any DatabaseError where error.isConstraintFailure {
            print("unique enforced")
        }
        do {
            try await Book(title: "Orphan", genre: .essay, details: Details(pages: 1, tags: []), authorID: UUID()).create(on: db)
            print("foreign key not enforced")
        } catch let error as any DatabaseError where error.isConstraintFailure {
            print("foreign key enforced")
        }
        await databases.shutdownAsync()
        do {
            _ = try DatabaseConfigurationFactory.sqlcipher(path: path, key: .passphrase(passphrase + "!"))
            print("wrong key accepted")
        } catch let error as SQLCipherError where error.kind == .wrongKeyOrNotADatabase {
            print("wrong key refused")
        }
    }
}
