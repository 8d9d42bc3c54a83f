import Timekeeping

/// The dates a test hands the real daemon, the real clock, or a file the daemon reads against now:
/// each is made from now, so the test means the same on any day of any year (docs/testing.md, "How a
/// test gets its dates"). A test of a pure function keeps its literal dates, with a literal reference
/// instant beside them (`chime next --after`, `clock: .fixed(…)`).
///
/// `scripts/check-test-dates.py` (in `make check`) finds a literal date in a test that talks to the
/// real daemon.
public enum TestDates {
    /// Now, from the system's clock (what the daemon under test reads too).
    public static func now() -> Instant { WallClock.system.now() }

    /// The UTC day `days` after today's, at `hour:minute` UTC. A year ahead (`days: 365`) is far from
    /// any edge of the run; a few days ahead keeps a weekly rule's first occurrence in reach.
    public static func utcDay(in days: Int, hour: Int = 9, minute: Int = 0) -> CivilTime {
        let seconds = now().seconds
        let today = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let (year, month, day) = civilFromDays(today + Int64(days))
        return CivilTime(year: year, month: month, day: day, hour: hour, minute: minute)
    }

    /// The first day on or after `days` from today (UTC) that falls on ISO `weekday` (1 Monday ... 7
    /// Sunday), at `hour:minute`.
    public static func utcDay(in days: Int, onWeekday weekday: Int, hour: Int = 9, minute: Int = 0) -> CivilTime {
        var day = utcDay(in: days, hour: hour, minute: minute)
        while day.weekday != weekday { day = day.addingDays(1) }
        return day
    }

    /// The first year from `years` after this one (UTC) in which `month`/`day` falls on ISO `weekday`:
    /// a test written about one December (a Tuesday the 1st, Christmas Eve a Thursday) holds in it.
    public static func year(from years: Int = 1, whereMonth month: Int, day: Int, isWeekday weekday: Int) -> Int {
        var year = utcDay(in: 0).year + years
        while CivilTime(year: year, month: month, day: day).weekday != weekday { year += 1 }
        return year
    }

    /// The instant ISO 8601 text with its UTC offset means, as chime's `--json` writes one
    /// (`2026-12-02T07:00:00.25+01:00`, `…Z`); nil for other text.
    public static func instant(iso8601 text: String) -> Instant? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count, range.allSatisfy({ (48...57).contains(bytes[$0]) }) else { return nil }
            return range.reduce(0) { $0 * 10 + Int(bytes[$1] - 48) }
        }
        guard bytes.count >= 20, let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19) else { return nil }
        var index = 19
        var nanosecond: Int64 = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, (48...57).contains(bytes[index]) {
                if digits < 9 { nanosecond = nanosecond * 10 + Int64(bytes[index] - 48); digits += 1 }
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<9 { nanosecond *= 10 }
        }
        var offset = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: "Z"), index + 1 == bytes.count {
            offset = 0
        } else if index + 6 == bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-"),
                  let hours = number(index + 1..<index + 3), let minutes = number(index + 4..<index + 6) {
            offset = (hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
        } else {
            return nil
        }
        let local = CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second).localSeconds
        return Instant(seconds: local - Int64(offset), nanosecond: nanosecond)
    }

    /// The next 29 February after today (UTC), at `hour:minute`.
    public static func nextLeapDay(hour: Int = 9, minute: Int = 0) -> CivilTime {
        let today = utcDay(in: 0)
        var year = today.year
        while !isLeapYear(year) || CivilTime(year: year, month: 2, day: 29) <= today { year += 1 }
        return CivilTime(year: year, month: 2, day: 29, hour: hour, minute: minute)
    }
}

extension CivilTime {
    /// The same time of day, `days` later (or earlier).
    public func addingDays(_ days: Int) -> CivilTime {
        let (year, month, day) = civilFromDays(dayNumber + Int64(days))
        return CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// The same day at `hour:minute`.
    public func at(hour: Int, minute: Int = 0) -> CivilTime { CivilTime(year: year, month: month, day: day, hour: hour, minute: minute) }

    /// iCalendar's form as UTC: `20270105T093000Z`.
    public var icsUTC: String { icsLocal + "Z" }

    /// iCalendar's floating or TZID form: `20270105T093000`.
    public var icsLocal: String { icsDate + "T" + twoDigits(hour) + twoDigits(minute) + twoDigits(second) }

    /// iCalendar's date form: `20270105`.
    public var icsDate: String { fourDigits(year) + twoDigits(month) + twoDigits(day) }

    /// The command line's and the alarm file's form: `2027-01-05 09:30`.
    public var dateAndMinute: String { date + " " + twoDigits(hour) + ":" + twoDigits(minute) }

    /// `2027-01-05`.
    public var date: String { fourDigits(year) + "-" + twoDigits(month) + "-" + twoDigits(day) }

    /// The instant this civil time means read as UTC.
    public var asUTC: Instant { Instant(seconds: localSeconds) }
}

private func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
private func fourDigits(_ value: Int) -> String { String(repeating: "0", count: max(0, 4 - String(value).count)) + String(value) }
