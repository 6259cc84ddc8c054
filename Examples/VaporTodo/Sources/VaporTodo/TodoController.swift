import Fluent
import Foundation
import Vapor

/// `/todos`: create, list, read, update and delete todos.
struct TodoController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        let todos = routes.grouped("todos")
        todos.post(use: create)
        todos.get(use: list)
        todos.group(":id") { todo in
            todo.get(use: read)
            todo.patch(use: update)
            todo.delete(use: delete)
        }
    }

    /// `POST /todos` with `{"title": …, "completed": …}`: 201 and the new todo.
    func create(req: Request) async throws -> Response {
        let input = try req.content.decode(CreateTodoRequest.self)
        let todo = Todo(title: try Self.validTitle(input.title), completed: input.completed ?? false)
        try await todo.create(on: req.db)
        return try await TodoDTO(todo).encodeResponse(status: .created, for: req)
    }

    /// `GET /todos`, optionally `?completed=true|false`: the todos, oldest first.
    func list(req: Request) async throws -> [TodoDTO] {
        var query = Todo.query(on: req.db)
        if let completed = try req.query.get(Bool?.self, at: "completed") {
            query = query.filter(\.$completed == completed)
        }
        return try await query.sort(\.$createdAt).sort(\.$id).all().map(TodoDTO.init)
    }

    /// `GET /todos/:id`: the todo, or 404.
    func read(req: Request) async throws -> TodoDTO {
        try TodoDTO(try await Self.find(req))
    }

    /// `PATCH /todos/:id` with the fields to change: the changed todo.
    func update(req: Request) async throws -> TodoDTO {
        let input = try req.content.decode(UpdateTodoRequest.self)
        let todo = try await Self.find(req)
        if let title = input.title { todo.title = try Self.validTitle(title) }
        if let completed = input.completed { todo.completed = completed }
        try await todo.update(on: req.db)
        return try TodoDTO(todo)
    }

    /// `DELETE /todos/:id`: 204, or 404.
    func delete(req: Request) async throws -> HTTPStatus {
        try await Self.find(req).delete(on: req.db)
        return .noContent
    }

    private static func find(_ req: Request) async throws -> Todo {
        guard let id = req.parameters.get("id", as: UUID.self) else {
            throw Abort(.badRequest, reason: "the todo's id is not a UUID")
        }
        guard let todo = try await Todo.find(id, on: req.db) else {
            throw Abort(.notFound, reason: "no todo \(id)")
        }
        return todo
    }

    private static func validTitle(_ title: String) throws -> String {
        let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw Abort(.badRequest, reason: "a todo needs a title") }
        return trimmed
    }
}
