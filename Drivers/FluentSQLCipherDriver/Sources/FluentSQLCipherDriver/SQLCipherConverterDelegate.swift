import FluentKit
import FluentSQL
import SQLKit

/// How FluentKit's data types become SQLite column types: the same as fluent-sqlite-driver's, so that its files
/// read back the same (dates are REAL seconds since 1970, enums TEXT).
struct SQLCipherConverterDelegate: SQLConverterDelegate {
    func customDataType(_ dataType: DatabaseSchema.DataType) -> (any SQLExpression)? {
        switch dataType {
        case .string: SQLRaw("TEXT")
        case .datetime: SQLRaw("REAL")
        case .int64: SQLRaw("INTEGER")
        case .enum: SQLRaw("TEXT")
        default: nil
        }
    }
}
