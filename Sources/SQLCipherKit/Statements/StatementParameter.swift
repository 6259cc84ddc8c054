import CSQLCipher

/// One parameter of a prepared ``Statement``, handed to ``DatabaseValueConvertible/bind(to:)``: binds a value
/// straight from the caller's storage, with no ``DatabaseValue`` in between.
///
/// You meet this type only when you make a type of your own bind faster than through its
/// ``DatabaseValueConvertible/databaseValue``:
///
/// ```swift
/// extension UserID: DatabaseValueConvertible {
///     var databaseValue: DatabaseValue { .integer(rawValue) }
///     static func fromDatabaseValue(_ value: DatabaseValue) -> UserID? { … }
///     func bind(to parameter: StatementParameter) throws(SQLCipherError) {
///         try parameter.bind(integer: rawValue)
///     }
/// }
/// ```
///
/// It is valid only during the call it is passed to. SQLite copies every value before a bind returns
/// (`SQLITE_TRANSIENT`), so the storage needs to live no longer than the call.
public struct StatementParameter {
    // The statement's handle, and the statement itself only for errors: unretained (a struct holding a strong or
    // unowned reference retains and releases it around each bind, which cost more than binding an integer).
    @usableFromInline
    let handle: OpaquePointer
    @usableFromInline
    let owner: Unmanaged<Statement>
    /// The parameter's index, from 1.
    public let index: Int32

    @inlinable
    init(statement: Statement, index: Int32) {
        handle = statement.handle
        owner = Unmanaged.passUnretained(statement)
        self.index = index
    }

    /// `SQLITE_TRANSIENT`: SQLite copies the value before the bind returns (a C macro Swift does not import).
    @inlinable
    static var transient: sqlite3_destructor_type {
        unsafeBitCast(OpaquePointer(bitPattern: -1)!, to: sqlite3_destructor_type.self)
    }

    /// Throws the error of a bind whose result code is `code`.
    @inlinable
    func check(_ code: Int32) throws(SQLCipherError) {
        guard code == SQLITE_OK else { throw failure(code) }
    }

    @usableFromInline
    func failure(_ code: Int32) -> SQLCipherError {
        owner._withUnsafeGuaranteedRef { $0.error(code) }
    }

    /// Binds SQL NULL.
    public func bindNull() throws(SQLCipherError) {
        try check(sqlite3_bind_null(handle, index))
    }

    /// Binds an integer.
    @inlinable
    public func bind(integer: Int64) throws(SQLCipherError) {
        try check(sqlite3_bind_int64(handle, index, integer))
    }

    /// Binds a real.
    @inlinable
    public func bind(real: Double) throws(SQLCipherError) {
        try check(sqlite3_bind_double(handle, index, real))
    }

    /// Binds text, from the string's own UTF-8 storage (a native string is not copied before SQLite copies it).
    @inlinable
    public func bind(text: String) throws(SQLCipherError) {
        // With its byte count, so that text holding a NUL character is bound whole, not cut at the NUL. A native
        // string lends its storage in place; others (bridged, shared) are made contiguous in a copy first.
        if let code = text.utf8.withContiguousStorageIfAvailable({ bindText(UnsafeRawBufferPointer($0)) }) {
            try check(code)
        } else {
            var text = text
            try check(text.withUTF8 { bindText(UnsafeRawBufferPointer($0)) })
        }
    }

    /// Binds UTF-8 text; SQLite's result code.
    @inlinable
    func bindText(_ bytes: UnsafeRawBufferPointer) -> Int32 {
        // An empty string still needs a non-NULL pointer, or SQLite binds NULL.
        let start = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
        return sqlite3_bind_text64(handle, index, start.assumingMemoryBound(to: CChar.self),
                                   UInt64(bytes.count), StatementParameter.transient, UInt8(SQLITE_UTF8))
    }

    /// Binds UTF-8 text from `bytes` (not validated: SQLite stores them as they are).
    public func bind(utf8Text bytes: UnsafeRawBufferPointer) throws(SQLCipherError) {
        try check(bindText(bytes))
    }

    /// Binds a blob from `bytes`.
    @inlinable
    public func bind(blob bytes: UnsafeRawBufferPointer) throws(SQLCipherError) {
        try check(bindBlob(bytes))
    }

    /// Binds a blob; SQLite's result code.
    @inlinable
    func bindBlob(_ bytes: UnsafeRawBufferPointer) -> Int32 {
        // A zero-length blob still needs a non-NULL pointer, or SQLite binds NULL.
        sqlite3_bind_blob64(handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                            UInt64(bytes.count), StatementParameter.transient)
    }

    /// Binds `value` through its ``DatabaseValueConvertible/bind(to:)``; the common types (Int64, Int, Double,
    /// String, [UInt8]) directly. In a caller specialized for `T` the type test is decided at compile time and the
    /// bind is inlined: a call through the conformance (its witness thunk) cost as much as binding an integer.
    @inlinable @inline(__always)
    func bindValue<T: DatabaseValueConvertible>(_ value: T) throws(SQLCipherError) {
        if T.self == Int64.self {
            try bind(integer: unsafeBitCast(value, to: Int64.self))
        } else if T.self == Int.self {
            try bind(integer: Int64(unsafeBitCast(value, to: Int.self)))
        } else if T.self == Double.self {
            try bind(real: unsafeBitCast(value, to: Double.self))
        } else if T.self == String.self {
            try bind(text: unsafeBitCast(value, to: String.self))
        } else if T.self == [UInt8].self {
            try check(unsafeBitCast(value, to: [UInt8].self).withUnsafeBytes { bindBlob($0) })
        } else {
            try value.bind(to: self)
        }
    }

    /// Binds `value`.
    public func bind(_ value: DatabaseValue) throws(SQLCipherError) {
        switch value {
        case .null: try bindNull()
        case .integer(let integer): try bind(integer: integer)
        case .real(let real): try bind(real: real)
        case .text(let text): try bind(text: text)
        case .blob(let bytes): try check(bytes.withUnsafeBytes { bindBlob($0) })
        }
    }
}
