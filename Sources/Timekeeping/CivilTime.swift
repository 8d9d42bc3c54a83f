// Civil (wall-clock) dates and times, and the arithmetic of the proleptic
// Gregorian calendar, without Foundation.

/// A moment as seconds since 1970-01-01 00:00:00 UTC (leap seconds ignored, as POSIX does).
public typealias UnixTime = Int64

/// A wall-clock date and time, with no time zone.
public struct CivilTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var year: Int
    public var month: Int  // 1...12
    public var day: Int  // 1...31
    public var hour: Int  // 0...23
    public var minute: Int  // 0...59
    public var second: Int  // 0...59

    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// The civil time `seconds` after 1970-01-01 00:00:00 (in whatever zone these are local seconds of).
    public init(localSeconds seconds: Int64) {
        let days = seconds.floorDivided(by: 86_400)
        let rest = Int(seconds - days * 86_400)
        let (y, m, d) = civilFromDays(days)
        self.init(year: y, month: m, day: d, hour: rest / 3600, minute: rest / 60 % 60, second: rest % 60)
    }

    /// Seconds since 1970-01-01 00:00:00 of this wall-clock time, as if it were UTC.
    public var localSeconds: Int64 {
        daysFromCivil(year, month, day) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// Days since 1970-01-01 of the date.
    public var dayNumber: Int64 { daysFromCivil(year, month, day) }

    /// ISO weekday: 1 Monday ... 7 Sunday.
    public var weekday: Int { isoWeekday(dayNumber) }

    public static func < (a: CivilTime, b: CivilTime) -> Bool {
        (a.year, a.month, a.day, a.hour, a.minute, a.second) < (b.year, b.month, b.day, b.hour, b.minute, b.second)
    }

    public var description: String {
        "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2)) \(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
    }
}

func pad(_ value: Int, _ width: Int) -> String {
    let text = String(abs(value))
    return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - text.count)) + text
}

extension Int64 {
    func floorDivided(by divisor: Int64) -> Int64 {
        let q = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? q - 1 : q
    }
}

/// Whether `year` is a leap year in the Gregorian calendar.
public func isLeapYear(_ year: Int) -> Bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// The number of days in `month` of `year`.
public func daysInMonth(_ year: Int, _ month: Int) -> Int {
    switch month {
    case 2: isLeapYear(year) ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
}

/// Days from 1970-01-01 to the given date (Howard Hinnant's algorithm).
public func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int64 {
    let y = Int64(month <= 2 ? year - 1 : year)
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let m = Int64(month)
    let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
}

/// The date `days` after 1970-01-01.
public func civilFromDays(_ days: Int64) -> (year: Int, month: Int, day: Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
    let y = yoe + era * 400
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (Int(m <= 2 ? y + 1 : y), Int(m), Int(d))
}

/// ISO weekday (1 Monday ... 7 Sunday) of the day `days` after 1970-01-01 (a Thursday).
public func isoWeekday(_ days: Int64) -> Int {
    Int((days + 3).floorMod(7)) + 1
}

extension Int64 {
    func floorMod(_ m: Int64) -> Int64 {
        let r = self % m
        return r < 0 ? r + m : r
    }
}
