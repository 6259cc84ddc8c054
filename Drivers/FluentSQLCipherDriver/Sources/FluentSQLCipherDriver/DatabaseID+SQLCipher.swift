import FluentKit

extension DatabaseID {
    /// The identifier of an encrypted SQLCipher database: `app.databases.use(try .sqlcipher(…), as: .sqlcipher)`.
    public static var sqlcipher: DatabaseID { .init(string: "sqlcipher") }
}
