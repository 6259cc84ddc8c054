import Foundation

extension Data: DatabaseValueConvertible {
    /// A blob.
    public var databaseValue: DatabaseValue { .blob(Array(self)) }
    /// As `[UInt8]`.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Data? {
        [UInt8].fromDatabaseValue(value).map { Data($0) }
    }
    /// Binds the blob from the data's own storage.
    public func bind(to parameter: StatementParameter) throws(SQLCipherError) {
        try parameter.check(withUnsafeBytes { parameter.bindBlob($0) })
    }
    /// Blobs, and the UTF-8 bytes of text.
    public static func read(from column: StatementColumn) -> Data? {
        switch column.storageClass {
        case .blob, .text: Data(column.bytes)
        default: nil
        }
    }
}
