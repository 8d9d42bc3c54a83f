// A date an alarm does not ring on (`--except 2026-12-24`), or a whole month (`--except 2026-12`).

/// A day, or a month, whose occurrences are left out; read in the alarm's zone.
public struct ExceptDate: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    /// nil: the whole month.
    public var day: Int?

    public init(year: Int, month: Int, day: Int? = nil) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// `2026-12-24` or `2026-12`; errors say what is wrong (without quoting the text: the caller does).
    public init(parsing text: String) throws(RuleError) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, parts[0].count == 4, parts.dropFirst().allSatisfy({ $0.count == 2 }),
            parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }),
            let year = Int(parts[0]), let month = Int(parts[1])
        else { throw RuleError("not a date (YYYY-MM-DD) or a month (YYYY-MM)") }
        guard CalendarExpression.years.contains(year) else {
            throw RuleError("year \(year) is out of range \(CalendarExpression.years.lowerBound)-\(CalendarExpression.years.upperBound)")
        }
        guard (1...12).contains(month) else { throw RuleError("month \(month) is out of range 1-12") }
        var day: Int?
        if parts.count == 3 {
            guard let d = Int(parts[2]), (1...daysInMonth(year, month)).contains(d) else {
                throw RuleError("day \(parts[2]) is out of range 1-\(daysInMonth(year, month)) for \(pad(year, 4))-\(pad(month, 2))")
            }
            day = d
        }
        self.init(year: year, month: month, day: day)
    }

    /// Whether the wall-clock time falls on this day (or in this month).
    public func contains(_ civil: CivilTime) -> Bool {
        civil.year == year && civil.month == month && (day.map { $0 == civil.day } ?? true)
    }

    public var description: String {
        "\(pad(year, 4))-\(pad(month, 2))" + (day.map { "-\(pad($0, 2))" } ?? "")
    }

    public static func < (a: ExceptDate, b: ExceptDate) -> Bool {
        (a.year, a.month, a.day ?? 0) < (b.year, b.month, b.day ?? 0)
    }
}
