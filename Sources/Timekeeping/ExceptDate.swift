// A date an alarm does not ring on (`--except 2026-12-24`), a whole month (`2026-12`), or the same
// day or month every year (`12-24`, `december`).

/// A day, or a month, whose occurrences are left out; read in the alarm's zone. Without a year it
/// comes back every year.
public struct ExceptDate: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// nil: every year.
    public var year: Int?
    public var month: Int
    /// nil: the whole month.
    public var day: Int?

    public init(year: Int?, month: Int, day: Int? = nil) {
        self.year = year
        self.month = month
        self.day = day
    }

    static let monthNames = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                             "november", "december"]

    /// `2026-12-24`, `2026-12`, `12-24` (every year) or `december`/`dec` (every year); errors say
    /// what is wrong (without quoting the text: the caller does).
    public init(parsing text: String) throws(RuleError) {
        let lower = text.lowercased()
        if lower.count >= 3, let index = Self.monthNames.firstIndex(where: { $0.hasPrefix(lower) }) {
            self.init(year: nil, month: index + 1)
            return
        }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        let digits = parts.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        let form = parts.map(\.count)
        guard digits, [[4, 2, 2], [4, 2], [2, 2]].contains(form) else {
            throw RuleError("not a date (YYYY-MM-DD), a month (YYYY-MM), a day of every year (MM-DD) or a month's name")
        }
        let numbers = parts.map { Int($0)! }
        let year: Int? = form[0] == 4 ? numbers[0] : nil
        let month = form[0] == 4 ? numbers[1] : numbers[0]
        if let year, !CalendarExpression.years.contains(year) {
            throw RuleError("year \(year) is out of range \(CalendarExpression.years.lowerBound)-\(CalendarExpression.years.upperBound)")
        }
        guard (1...12).contains(month) else { throw RuleError("month \(month) is out of range 1-12") }
        var day: Int?
        if form.count == 3 || form == [2, 2] {
            let d = numbers[numbers.count - 1]
            // Every year: 29 February counts (it comes in leap years).
            let length = year.map { daysInMonth($0, month) } ?? daysInMonth(2000, month)
            guard (1...length).contains(d) else {
                throw RuleError("day \(d) is out of range 1-\(length) for \(year.map { pad($0, 4) + "-" } ?? "")\(pad(month, 2))")
            }
            day = d
        }
        self.init(year: year, month: month, day: day)
    }

    /// Whether the wall-clock time falls on this day (or in this month).
    public func contains(_ civil: CivilTime) -> Bool {
        (year.map { $0 == civil.year } ?? true) && civil.month == month && (day.map { $0 == civil.day } ?? true)
    }

    public var description: String {
        guard let year else { return day.map { "\(pad(month, 2))-\(pad($0, 2))" } ?? Self.monthNames[month - 1] }
        return "\(pad(year, 4))-\(pad(month, 2))" + (day.map { "-\(pad($0, 2))" } ?? "")
    }

    public static func < (a: ExceptDate, b: ExceptDate) -> Bool {
        (a.year ?? 0, a.month, a.day ?? 0) < (b.year ?? 0, b.month, b.day ?? 0)
    }
}
