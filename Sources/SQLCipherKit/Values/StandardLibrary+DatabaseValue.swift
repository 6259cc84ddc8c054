// The standard library types SQLCipherKit converts: integers, reals, booleans, text, byte arrays and optionals.

extension Int64: DatabaseValueConvertible {
    /// An integer.
    public var databaseValue: DatabaseValue { .integer(self) }
    /// Integers; reals that are whole numbers in range.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Int64? {
        switch value {
        case .integer(let integer): integer
        case .real(let real): Int64(exactly: real)
        default: nil
        }
    }
    /// Binds the integer.
    @inlinable
    public func bind(to parameter: StatementParameter) throws(SQLCipherError) {
        try parameter.bind(integer: self)
    }
    /// Integers; reals that are whole numbers in range.
    @inlinable
    public static func read(from column: StatementColumn) -> Int64? {
        switch column.storageClass {
        case .integer: column.integer
        case .real: Int64(exactly: column.real)
        default: nil
        }
    }
}

extension Int: DatabaseValueConvertible {
    /// An integer.
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
    /// As `Int64`, when it fits.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Int? {
        Int64.fromDatabaseValue(value).flatMap { Int(exactly: $0) }
    }
    /// Binds the integer.
    @inlinable
    public func bind(to parameter: StatementParameter) throws(SQLCipherError) {
        try parameter.bind(integer: Int64(self))
    }
    /// As `Int64`, when it fits.
    @inlinable
    public static func read(from column: StatementColumn) -> Int? {
        Int64.read(from: column).flatMap { Int(exactly: $0) }
    }
}

extension Int32: DatabaseValueConvertible {
    /// An integer.
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
    /// As `Int64`, when it fits.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Int32? {
        Int64.fromDatabaseValue(value).flatMap { Int32(exactly: $0) }
    }
    /// Binds the integer.
    @inlinable
    public func bind(to parameter: StatementParameter) throws(SQLCipherError) {
        try parameter.bind(integer: Int64(self))
    }
    /// As `Int64`, when it fits.
    public static func read(from column: StatementColumn) -> Int32? {
        Int64.read(from: column).flatMap { Int32(exactly: $0) }
    }
}

extension Double: DatabaseValueConvertible {
    /// A real.
    public var databaseValue: DatabaseValue { .real(self) }
    /// Reals and integers.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Double? {
        switch value {
        case .real(let real): real
        case .integer(let integer): Double(integer)
        default: nil
        }
    }
    /// Binds the real.
    @inlinable
    public func bind(to parameter: StatementParameter) throws(SQLCipherError) {
        try parameter.bind(real: self)
    }
    /// Reals and integers.
    @inlinable
    public static func read(from column: StatementColumn) -> Double? {
        switch column.storageClass {
        case .real: column.real
        case .integer: Double(column.integer)
        default: nil
        }
    }
}

extension Bool: DatabaseValueConvertible {
    /// The integer 1 or 0, as SQLite stores booleans.
    public var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }
    /// Non-zero numbers are true.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Bool? {
        switch value {
        case .integer(let integer): integer != 0
        case .real(let real): real != 0
        default: nil
        }
    }
    /// Binds 1 or 0.
    public func bind(to parameter: StatementParameter) throws(SQLCipherError) {
        try parameter.bind(integer: self ? 1 : 0)
    }
    /// Non-zero numbers are true.
    public static func read(from column: StatementColumn) -> Bool? {
        switch column.storageClass {
        case .integer: column.integer != 0
        case .real: column.real != 0
        default: nil
        }
    }
}

extension String: DatabaseValueConvertible {
    /// Text.
    public var databaseValue: DatabaseValue { .text(self) }
    /// Text, and blobs that are valid UTF-8.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> String? {
        switch value {
        case .text(let text): text
        case .blob(let bytes): String(validating: bytes, as: UTF8.self)
        default: nil
        }
    }
    /// Binds the text from the string's own UTF-8 storage.
    @inlinable
    public func bind(to parameter: StatementParameter) throws(SQLCipherError) {
        try parameter.bind(text: self)
    }
    /// Text, and blobs that are valid UTF-8.
    public static func read(from column: StatementColumn) -> String? {
        switch column.storageClass {
        case .text: String(decoding: column.bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
        case .blob: String(validating: column.bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
        default: nil
        }
    }
}

extension Array: DatabaseValueConvertible where Element == UInt8 {
    /// A blob.
    public var databaseValue: DatabaseValue { .blob(self) }
    /// Blobs, and the UTF-8 bytes of text.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> [UInt8]? {
        switch value {
        case .blob(let bytes): bytes
        case .text(let text): Array(text.utf8)
        default: nil
        }
    }
    /// Binds the blob from the array's own storage.
    @inlinable
    public func bind(to parameter: StatementParameter) throws(SQLCipherError) {
        try parameter.check(withUnsafeBytes { parameter.bindBlob($0) })
    }
    /// Blobs, and the UTF-8 bytes of text.
    public static func read(from column: StatementColumn) -> [UInt8]? {
        switch column.storageClass {
        case .blob, .text: Array(column.bytes)
        default: nil
        }
    }
}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    /// NULL for nil, else the wrapped value's.
    public var databaseValue: DatabaseValue { self?.databaseValue ?? .null }
    /// nil for NULL (a successful conversion), else the wrapped type's conversion.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Wrapped?? {
        if case .null = value { return .some(nil) }
        return Wrapped.fromDatabaseValue(value).map { .some($0) }
    }
    /// Binds NULL for nil, else the wrapped value.
    @inlinable
    public func bind(to parameter: StatementParameter) throws(SQLCipherError) {
        if let self { try self.bind(to: parameter) } else { try parameter.bindNull() }
    }
    /// nil for NULL (a successful conversion), else the wrapped type's conversion.
    public static func read(from column: StatementColumn) -> Wrapped?? {
        if column.storageClass == .null { return .some(nil) }
        return Wrapped.read(from: column).map { .some($0) }
    }
}
