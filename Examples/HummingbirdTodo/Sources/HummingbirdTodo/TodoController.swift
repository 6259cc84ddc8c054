import FluentKit
import Foundation
import Hummingbird
import Logging

/// `/todos`: create, list, read, update and delete todos, each request on a FluentKit `Database` of `databases`.
struct TodoController: Sendable {
    let databases: Databases

    func addRoutes(to group: RouterGroup<BasicRequestContext>) {
        group.post(use: create)
        group.get(use: list)
        group.get(":id", use: read)
        group.patch(":id", use: update)
        group.delete(":id", use: delete)
    }

    /// `POST /todos` with `{"title": …, "completed": …}`: 201 and the new todo.
    @Sendable func create(request: Request, context: BasicRequestContext) async throws -> EditedResponse<TodoDTO> {
        let input = try await request.decode(as: CreateTodoRequest.self, context: context)
        let todo = Todo(title: try Self.validTitle(input.title), completed: input.completed ?? false)
        try await todo.create(on: database(context))
        return EditedResponse(status: .created, response: try TodoDTO(todo))
    }

    /// `GET /todos`, optionally `?completed=true|false`: the todos, oldest first.
    @Sendable func list(request: Request, context: BasicRequestContext) async throws -> [TodoDTO] {
        var query = Todo.query(on: try database(context))
        if let completed = request.uri.queryParameters.get("completed") {
            guard let value = Bool(completed) else {
                throw HTTPError(.badRequest, message: "completed is 'true' or 'false'")
            }
            query = query.filter(\.$completed == value)
        }
        return try await query.sort(\.$createdAt).sort(\.$id).all().map(TodoDTO.init)
    }

    /// `GET /todos/:id`: the todo, or 404.
    @Sendable func read(request: Request, context: BasicRequestContext) async throws -> TodoDTO {
        try TodoDTO(try await find(context))
    }

    /// `PATCH /todos/:id` with the fields to change: the changed todo.
    @Sendable func update(request: Request, context: BasicRequestContext) async throws -> TodoDTO {
        let input = try await request.decode(as: UpdateTodoRequest.self, context: context)
        let todo = try await find(context)
        if let title = input.title { todo.title = try Self.validTitle(title) }
        if let completed = input.completed { todo.completed = completed }
        try await todo.update(on: database(context))
        return try TodoDTO(todo)
    }

    /// `DELETE /todos/:id`: 204, or 404.
    @Sendable func delete(request: Request, context: BasicRequestContext) async throws -> HTTPResponse.Status {
        try await find(context).delete(on: database(context))
        return .noContent
    }

    /// The database for one request, logging with the request's logger.
    private func database(_ context: BasicRequestContext) throws -> any Database {
        guard let database = databases.database(.sqlcipher, logger: context.logger,
                                                on: databases.eventLoopGroup.any()) else {
            throw HTTPError(.serviceUnavailable, message: "the database is shut down")
        }
        return database
    }

    private func find(_ context: BasicRequestContext) async throws -> Todo {
        let id = try context.parameters.require("id", as: UUID.self)
        guard let todo = try await Todo.find(id, on: database(context)) else {
            throw HTTPError(.notFound, message: "no todo \(id)")
        }
        return todo
    }

    private static func validTitle(_ title: String) throws -> String {
        let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw HTTPError(.badRequest, message: "a todo needs a title") }
        return trimmed
    }
}
