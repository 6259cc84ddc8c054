import FluentKit
import Foundation
import Hummingbird

/// A todo: what to do, whether it is done, and when it was created and last changed.
public final class Todo: Model, @unchecked Sendable {
    public static let schema = "todos"

    @ID(key: .id) public var id: UUID?
    @Field(key: "title") public var title: String
    @Field(key: "completed") public var completed: Bool
    @Timestamp(key: "created_at", on: .create) public var createdAt: Date?
    @Timestamp(key: "updated_at", on: .update) public var updatedAt: Date?

    public init() {}

    public init(id: UUID? = nil, title: String, completed: Bool = false) {
        self.id = id
        self.title = title
        self.completed = completed
    }
}

/// The `todos` table.
struct CreateTodo: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(Todo.schema)
            .id()
            .field("title", .string, .required)
            .field("completed", .bool, .required)
            .field("created_at", .datetime)
            .field("updated_at", .datetime)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(Todo.schema).delete()
    }
}

/// A todo as the API shows it.
public struct TodoDTO: ResponseCodable, Equatable {
    public var id: UUID
    public var title: String
    public var completed: Bool
    public var createdAt: Date?
    public var updatedAt: Date?

    init(_ todo: Todo) throws {
        self.id = try todo.requireID()
        self.title = todo.title
        self.completed = todo.completed
        self.createdAt = todo.createdAt
        self.updatedAt = todo.updatedAt
    }
}

/// The body of `POST /todos`.
public struct CreateTodoRequest: Codable, Sendable {
    public var title: String
    public var completed: Bool?

    public init(title: String, completed: Bool? = nil) {
        self.title = title
        self.completed = completed
    }
}

/// The body of `PATCH /todos/:id`: the fields to change.
public struct UpdateTodoRequest: Codable, Sendable {
    public var title: String?
    public var completed: Bool?

    public init(title: String? = nil, completed: Bool? = nil) {
        self.title = title
        self.completed = completed
    }
}
