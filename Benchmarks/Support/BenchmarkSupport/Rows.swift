/// The rows and the point-select order every implementation uses: generated once per process, deterministically,
/// before anything is measured, so that each variant writes and reads exactly the same values.
public struct Rows: Sendable {
    /// The number of rows the bulk insert writes, and that the scan and point selects read.
    public static let count = 100_000
    /// The number of point selects (by primary key, in a shuffled order).
    public static let pointSelectCount = 100_000
    /// The number of single-row transactions.
    public static let transactionCount = 10_000
    /// The length of each text value, in UTF-8 bytes.
    public static let textLength = 40
    /// The length of each blob value, in bytes.
    public static let blobLength = 64

    /// The primary keys, 1 through ``count``.
    public let ids: [Int64]
    /// ASCII text of ``textLength`` bytes, different in every row.
    public let texts: [String]
    /// The real column.
    public let reals: [Double]
    /// Blobs of ``blobLength`` bytes.
    public let blobs: [[UInt8]]
    /// The same texts, back to back (``textLength`` bytes each), for the C loops.
    public let flatTexts: [UInt8]
    /// The same blobs, back to back (``blobLength`` bytes each), for the C loops.
    public let flatBlobs: [UInt8]
    /// The primary keys to select, in a pseudo-random order that visits every row once.
    public let selectIDs: [Int64]
    /// The sum of ``reals``, which the scan must find.
    public let realSum: Double

    /// Generates the rows. A fixed linear congruential generator keeps them the same in every process.
    public init() {
        var state: UInt64 = 0x5EED_5EED_5EED_5EED
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 11
        }
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ".utf8)
        var ids: [Int64] = []
        var texts: [String] = []
        var reals: [Double] = []
        var blobs: [[UInt8]] = []
        var flatTexts: [UInt8] = []
        var flatBlobs: [UInt8] = []
        for index in 0..<Rows.count {
            ids.append(Int64(index + 1))
            let text = (0..<Rows.textLength).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] }
            texts.append(String(decoding: text, as: UTF8.self))
            flatTexts += text
            reals.append(Double(next() % 1_000_000) / 100)
            let blob = (0..<Rows.blobLength).map { _ in UInt8(truncatingIfNeeded: next()) }
            blobs.append(blob)
            flatBlobs += blob
        }
        var order = ids
        for index in stride(from: order.count - 1, to: 0, by: -1) {
            order.swapAt(index, Int(next() % UInt64(index + 1)))
        }
        self.ids = ids
        self.texts = texts
        self.reals = reals
        self.blobs = blobs
        self.flatTexts = flatTexts
        self.flatBlobs = flatBlobs
        selectIDs = Array(order.prefix(Rows.pointSelectCount))
        realSum = reals.reduce(0, +)
    }
}

/// What the point selects read, folded so that every column value is used and checked.
public struct PointSelectChecksum: Equatable, Sendable {
    /// The number of rows found.
    public var rows = 0
    /// The total length of the texts read, in bytes.
    public var textBytes = 0
    /// The total length of the blobs read, in bytes.
    public var blobBytes = 0
    /// The sum of the reals read.
    public var realSum = 0.0

    /// An empty checksum.
    public init() {}

    /// What reading every row of `rows` once must give.
    public static func expected(for rows: Rows) -> PointSelectChecksum {
        var checksum = PointSelectChecksum()
        checksum.rows = rows.selectIDs.count
        checksum.textBytes = rows.selectIDs.count * Rows.textLength
        checksum.blobBytes = rows.selectIDs.count * Rows.blobLength
        checksum.realSum = rows.selectIDs.reduce(0.0) { $0 + rows.reals[Int($1) - 1] }
        return checksum
    }

    /// Whether `other` read the same values (the real sums may differ in the last bits with the order of addition).
    public func matches(_ other: PointSelectChecksum) -> Bool {
        rows == other.rows && textBytes == other.textBytes && blobBytes == other.blobBytes
            && abs(realSum - other.realSum) <= 1e-6 * max(1, abs(realSum))
    }
}
