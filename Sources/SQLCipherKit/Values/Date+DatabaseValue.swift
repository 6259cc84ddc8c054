import Foundation
import Glibc

/// Dates are stored as UTC text `YYYY-MM-DD HH:MM:SS.SSS`, with millisecond precision: the format SQLite's date
/// and time functions read, which also sorts chronologically. Reading also accepts `YYYY-MM-DD`,
/// `YYYY-MM-DD HH:MM[:SS[.SSS]]` (with `T` or a space) and numbers as Unix time in seconds.
extension Date: DatabaseValueConvertible {
    /// UTC text `YYYY-MM-DD HH:MM:SS.SSS`, rounded to the millisecond.
    public var databaseValue: DatabaseValue {
        let milliseconds = (timeIntervalSince1970 * 1000).rounded()
        var seconds = time_t((milliseconds / 1000).rounded(.down))
        let millisecond = Int(milliseconds - Double(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { String(value).leftPadded(to: 2) }
        let text = String(Int(parts.tm_year) + 1900).leftPadded(to: 4) + "-" + two(parts.tm_mon + 1) + "-"
            + two(parts.tm_mday) + " " + two(parts.tm_hour) + ":" + two(parts.tm_min) + ":" + two(parts.tm_sec)
            + "." + String(millisecond).leftPadded(to: 3)
        return .text(text)
    }

    /// Text in the formats above, or a number of seconds since 1970.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Date? {
        switch value {
        case .integer(let seconds): return Date(timeIntervalSince1970: TimeInterval(seconds))
        case .real(let seconds): return Date(timeIntervalSince1970: seconds)
        case .text(let text): return parse(text)
        default: return nil
        }
    }

    private static func parse(_ text: String) -> Date? {
        let characters = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= characters.count else { return nil }
            var value = 0
            for byte in characters[range] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard let year = number(0..<4), characters.count >= 10, characters[4] == 45, characters[7] == 45,
              let month = number(5..<7), let day = number(8..<10), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var hour = 0, minute = 0, second = 0, millisecond = 0.0
        if characters.count > 10 {
            guard characters[10] == 32 || characters[10] == 84, let h = number(11..<13), characters.count >= 16,
                  characters[13] == 58, let m = number(14..<16), h < 24, m < 60 else { return nil }
            hour = h
            minute = m
            if characters.count > 16 {
                guard characters[16] == 58, let s = number(17..<19), s < 61 else { return nil }
                second = s
                if characters.count > 19 {
                    guard characters[19] == 46, characters.count > 20,
                          let fraction = number(20..<characters.count) else { return nil }
                    millisecond = Double(fraction) / pow(10, Double(characters.count - 20)) * 1000
                }
            }
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        return Date(timeIntervalSince1970: TimeInterval(seconds) + millisecond / 1000)
    }
}
