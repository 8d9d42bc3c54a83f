// Days off and time away: the days a person does not work (public holidays from the calendars they
// follow, and the weekdays that are not working days) and the stretches they are away. Each alarm
// says what a day off does to it (`on-holiday`): it rings as usual, is skipped, or moves, same time
// of day, to the nearest working day before or after, as remind's OMIT with BEFORE and AFTER does;
// time away silences every alarm it names, without making a missed alarm of it.
import ICalendar
import Timekeeping

/// What a day off does to an alarm's occurrence on it.
public enum HolidayPolicy: String, Hashable, Sendable, CaseIterable, Codable {
    /// It rings as on any other day (the default).
    case ring
    /// It is left out.
    case skip
    /// It moves to the nearest working day before, same time of day.
    case before
    /// It moves to the nearest working day after, same time of day.
    case after
}

/// The days off (holidays, by civil day), the working weekdays, and time away, as one value every
/// alarm's plan reads.
public struct DaysOff: Hashable, Sendable {
    /// A stretch of time away: no alarm it is for rings in [from, until).
    public struct Away: Hashable, Sendable {
        public var from: Instant
        public var until: Instant
        /// The alarms it is for; nil: every alarm.
        public var alarms: Set<String>?

        public init(from: Instant, until: Instant, alarms: Set<String>? = nil) {
            self.from = from
            self.until = until
            self.alarms = alarms
        }

        public func contains(_ instant: Instant) -> Bool { from <= instant && instant < until }
    }

    /// Each day off (days since 1970-01-01, as a wall clock reads them) and what it is
    /// ("Christmas Day"); several names on one day are joined.
    public private(set) var holidays: [Int64: String] = [:]
    /// The same days, sorted (for "is there a day off in this range").
    private var sortedDays: [Int64] = []
    /// The working weekdays, bit `weekday - 1` for ISO weekdays 1 (Monday) to 7 (Sunday).
    public private(set) var workingDays: UInt8 = 0b0001_1111
    /// Time away, by start.
    public private(set) var away: [Away] = []
    /// How many days, at most, an occurrence can move: one more than the longest run of days that
    /// are not working days (weekends and days off together), at most `maximumMove`.
    public private(set) var reach = 3

    /// The farthest an occurrence moves to find a working day; beyond it, it is left out.
    public static let maximumMove = 31

    /// No days off, Monday to Friday working days, no time away.
    public static let none = DaysOff()

    public init() {}

    /// `workingDays` as ISO weekdays (1 Monday ... 7 Sunday); at least one.
    public init(holidays: [Int64: String], workingDays: Set<Int> = Set(1...5), away: [Away] = []) {
        self.holidays = holidays
        sortedDays = holidays.keys.sorted()
        self.workingDays = workingDays.reduce(0) { (1...7).contains($1) ? $0 | UInt8(1 << ($1 - 1)) : $0 }
        if self.workingDays == 0 { self.workingDays = 0b0001_1111 }
        self.away = away.sorted { $0.from < $1.from }
        reach = Self.reach(days: sortedDays, working: self.workingDays)
    }

    /// The working weekdays, ISO numbered.
    public var workingWeekdays: Set<Int> { Set((1...7).filter { workingDays & (1 << ($0 - 1)) != 0 }) }

    /// Whether the plan of an alarm with `policy` can differ from its rule's.
    public func matters(to policy: HolidayPolicy?) -> Bool {
        !away.isEmpty || (policy ?? .ring) != .ring && !sortedDays.isEmpty
    }

    /// What the day is, when it is a day off.
    public func holiday(on day: Int64) -> String? { holidays[day] }

    public func isWorkingDay(_ day: Int64) -> Bool {
        workingDays & (1 << (isoWeekday(day) - 1)) != 0 && holidays[day] == nil
    }

    /// The nearest working day before `day`, within `maximumMove` days.
    public func workingDay(before day: Int64) -> Int64? {
        (1...Int64(Self.maximumMove)).lazy.map { day - $0 }.first { isWorkingDay($0) }
    }

    /// Whether a working day lies strictly between two days.
    public func hasWorkingDay(after first: Int64, before last: Int64) -> Bool {
        guard last - first > 1 else { return false }
        return (first + 1..<last).contains { isWorkingDay($0) }
    }

    /// Whether a day off falls in `days`.
    public func hasHoliday(in days: ClosedRange<Int64>) -> Bool {
        var low = 0, high = sortedDays.count
        while low < high {
            let mid = (low + high) / 2
            if sortedDays[mid] < days.lowerBound { low = mid + 1 } else { high = mid }
        }
        return low < sortedDays.count && sortedDays[low] <= days.upperBound
    }

    /// The days off and working days with only the time away that is for `identifier`.
    public func forAlarm(_ identifier: String) -> DaysOff {
        guard away.contains(where: { $0.alarms != nil }) else { return self }
        var copy = self
        copy.away = away.filter { $0.alarms?.contains(identifier) ?? true }
        return copy
    }

    /// The time away `instant` is in (the one that ends last, where they overlap).
    public func away(at instant: Instant) -> Away? {
        var found: Away?
        for stretch in away {
            if stretch.from > instant { break }
            if stretch.contains(instant), found.map({ stretch.until > $0.until }) ?? true { found = stretch }
        }
        return found
    }

    /// The same days off and working days with `away` as the time away.
    public func with(away: [Away]) -> DaysOff {
        var copy = self
        copy.away = away.sorted { $0.from < $1.from }
        return copy
    }

    /// Days off from several calendars together (names on one day joined with " · ").
    public static func merging(_ calendars: [[Int64: String]]) -> [Int64: String] {
        var all: [Int64: [String]] = [:]
        for calendar in calendars {
            for (day, names) in calendar {
                for name in names.split(separator: " · ").map(String.init) where !(all[day]?.contains(name) ?? false) { all[day, default: []].append(name) }
            }
        }
        return all.mapValues { $0.joined(separator: " · ") }
    }

    private static func reach(days: [Int64], working: UInt8) -> Int {
        // The longest run of non-working weekdays in a week (a week that works only Mondays rests
        // six days), then lengthened by the days off that touch such runs.
        func resting(_ day: Int64) -> Bool { working & (1 << (isoWeekday(day) - 1)) == 0 }
        var longest = 0, run = 0
        for day in Int64(0)..<14 {
            run = resting(day) ? run + 1 : 0
            longest = max(longest, run)
        }
        if !days.isEmpty {
            let holidays = Set(days)
            var index = 0
            while index < days.count {
                // From the run of rest before this day off to the end of the run after it.
                var start = days[index], end = days[index]
                while start - 1 >= days[index] - Int64(maximumMove), holidays.contains(start - 1) || resting(start - 1) { start -= 1 }
                while end + 1 <= days[index] + Int64(maximumMove), holidays.contains(end + 1) || resting(end + 1) { end += 1 }
                longest = max(longest, Int(end - start + 1))
                index += 1
                while index < days.count, days[index] <= end { index += 1 }
            }
        }
        return min(longest + 1, maximumMove)
    }
}

/// What becomes of one occurrence of an alarm.
public enum OccurrenceFate: Hashable, Sendable {
    /// It rings when its rule says.
    case rings
    /// A day off moves it (`on-holiday = "before"` or `"after"`).
    case moved(to: Instant, holiday: String)
    /// A day off leaves it out (`on-holiday = "skip"`, or no working day near enough to move to).
    case dropped(holiday: String)
    /// Time away silences it (until the time away ends).
    case away(until: Instant)
}

extension Trigger {
    /// What a day off does to this alarm (nil: it rings, `.ring`).
    public var holidayPolicy: HolidayPolicy { onHoliday ?? .ring }

    /// The next time the alarm fires strictly after `time`, with `off`'s days off and time away:
    /// an occurrence on a day off is left out or moved as the alarm's policy says (a moved one that
    /// lands where the alarm fires anyway is one occurrence), and one in time away is silent.
    /// Skips (`chime skip`) are of the times it fires, moved or not.
    public func nextFire(after time: Instant, off: DaysOff) -> Instant? {
        let policy = holidayPolicy
        guard off.matters(to: policy) else { return nextFire(after: time) }
        let zone = wallClockZone
        let moves = policy == .before || policy == .after
        let holidays = policy != .ring
        // How far, in time, an occurrence can move (the days, and an hour either way for a change of
        // offset on the way).
        let reach = TimeSpan.seconds(Int64(moves ? off.reach : 0) * 86_400 + (moves ? 3600 : 0))
        func day(_ instant: Instant) -> Int64 { zone.civil(at: instant.seconds).dayNumber }
        var t = time
        // An occurrence at or before `time` can move after it, from a day off after the last working
        // day before today (one on or before that working day rings there, or moves to it at latest).
        if policy == .after, off.hasHoliday(in: day(time - reach)...day(time)), let working = off.workingDay(before: day(time)) {
            let date = civilFromDays(working)
            t = min(time, Self.lastInstant(of: ExceptDate(year: date.year, month: date.month, day: date.day),
                                           around: CivilTime(year: date.year, month: date.month, day: date.day), in: zone))
        } else if policy == .after, off.hasHoliday(in: day(time - reach)...day(time)) {
            t = time - reach
        }
        var best: Instant?
        var steps = 0
        while steps < 20_000 + skipped.count {
            steps += 1
            guard let original = unskippedNextFire(after: t) else { break }
            if let best, original > best {
                // No later occurrence can come before the best one found: it would have to move back
                // (only `before` does) to the nearest working day before it, which is after the best
                // one's day once a working day lies between the two.
                guard policy == .before, original - reach <= best, !off.hasWorkingDay(after: day(best), before: day(original)) else { break }
            }
            t = original
            var fired = original
            if holidays, let name = off.holiday(on: day(original)) {
                switch fate(of: original, holiday: name, policy: policy, off: off, zone: zone) {
                case .moved(let to, _): fired = to
                default:
                    // Left out: so is the rest of that day.
                    let civil = zone.civil(at: original.seconds)
                    t = max(original, Self.lastInstant(of: ExceptDate(year: civil.year, month: civil.month, day: civil.day), around: civil, in: zone))
                    continue
                }
            }
            guard fired > time else { continue }
            if let away = off.away(at: fired) {
                // Past the time away: at once where nothing moves; where occurrences move, past
                // those that cannot move out of it.
                if fired == original, !moves {
                    t = max(original, away.until - TimeSpan(nanoseconds: 1))
                } else if original >= away.from + reach {
                    t = max(original, away.until - reach - TimeSpan(nanoseconds: 1))
                }
                continue
            }
            if skipped.contains(fired) { continue }
            if best.map({ fired < $0 }) ?? true { best = fired }
            if !moves { break }
        }
        // A plan that cannot be found in bounded work rings as the rule says: never no alarm at all.
        return best ?? (steps >= 20_000 + skipped.count ? nextFire(after: time) : nil)
    }

    /// The next reminder strictly after `time`, with `off`'s days off and time away.
    public func nextReminder(after time: Instant, off: DaysOff) -> (at: Instant, occurrence: Instant, lead: TimeSpan)? {
        guard off.matters(to: holidayPolicy) else { return nextReminder(after: time) }
        var best: (at: Instant, occurrence: Instant, lead: TimeSpan)?
        for lead in leads {
            guard let occurrence = nextFire(after: time + lead, off: off) else { continue }
            let at = occurrence - lead
            if best.map({ at < $0.at }) ?? true { best = (at, occurrence, lead) }
        }
        return best
    }

    /// What a day off (`holiday`) does to the occurrence at `original` under `policy`.
    func fate(of original: Instant, holiday: String, policy: HolidayPolicy, off: DaysOff, zone: Zone) -> OccurrenceFate {
        switch policy {
        case .ring: return .rings
        case .skip: return .dropped(holiday: holiday)
        case .before, .after:
            let civil = zone.civil(at: original.seconds)
            let step: Int64 = policy == .before ? -1 : 1
            for k in 1...Int64(DaysOff.maximumMove) {
                let day = civil.dayNumber + step * k
                guard off.isWorkingDay(day) else { continue }
                let date = civilFromDays(day)
                let moved = CivilTime(year: date.year, month: date.month, day: date.day, hour: civil.hour, minute: civil.minute, second: civil.second)
                // The same time of day there: the earlier of two, or when a gap ends.
                let seconds: Int64 = switch zone.resolve(moved) {
                case .unique(let t): t
                case .ambiguous(let earlier, _): earlier
                case .gap(let end): end
                }
                return .moved(to: Instant(seconds: seconds, nanosecond: original.nanosecond), holiday: holiday)
            }
            return .dropped(holiday: holiday)
        }
    }

    /// The occurrences after `time`, through `end` (at most `limit`), that a day off moves or drops
    /// or time away silences, each with its fate: what `chime show` says.
    public func changes(after time: Instant, through end: Instant, off: DaysOff, limit: Int = 20) -> [(original: Instant, fate: OccurrenceFate)] {
        guard off.matters(to: holidayPolicy) else { return [] }
        let zone = wallClockZone
        var out: [(original: Instant, fate: OccurrenceFate)] = []
        var t = time
        var steps = 0
        while out.count < limit, steps < 20_000, let original = unskippedNextFire(after: t), original <= end {
            steps += 1
            t = original
            var fired = original
            var moved: OccurrenceFate?
            if holidayPolicy != .ring, let name = off.holiday(on: zone.civil(at: original.seconds).dayNumber) {
                let fate = fate(of: original, holiday: name, policy: holidayPolicy, off: off, zone: zone)
                guard case .moved(let to, _) = fate else {
                    out.append((original, fate))
                    continue
                }
                fired = to
                moved = fate
            }
            if let away = off.away(at: fired) {
                out.append((original, .away(until: away.until)))
                // One line for a stretch of time away, not one per occurrence in it.
                if moved == nil { t = max(original, away.until - TimeSpan(nanoseconds: 1)) }
            } else if let moved {
                out.append((original, moved))
            }
        }
        return out
    }
}

extension OccurrenceFate {
    /// What became of the occurrence at `original`, in words: "Fri 25 Dec: Christmas Day, moved to
    /// Thu 24 Dec", "Fri 25 Dec: Christmas Day, skipped", "Mon 21 Dec 07:00: away until Mon 4 Jan".
    /// Days are read in `zone`; the year is said when it is not `now`'s.
    public func describe(_ original: Instant, in zone: Zone, now: Instant) -> String {
        let thisYear = zone.civil(at: now.seconds).year
        let day = DaysOff.day(original, in: zone, thisYear: thisYear)
        switch self {
        case .rings: return day
        case .moved(let to, let holiday): return "\(day): \(holiday), moved to \(DaysOff.day(to, in: zone, thisYear: thisYear))"
        case .dropped(let holiday): return "\(day): \(holiday), skipped"
        case .away(let until):
            let civil = zone.civil(at: original.seconds)
            return "\(day) \(DaysOff.pad(civil.hour)):\(DaysOff.pad(civil.minute)): away until \(DaysOff.until(until, in: zone, thisYear: thisYear))"
        }
    }
}

extension DaysOff {
    static let weekdayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// "Fri 25 Dec" (with the year when it is not `thisYear`).
    static func day(_ instant: Instant, in zone: Zone, thisYear: Int) -> String {
        let civil = zone.civil(at: instant.seconds)
        return "\(weekdayNames[civil.weekday - 1]) \(civil.day) \(monthNames[civil.month - 1])" + (civil.year == thisYear ? "" : " \(civil.year)")
    }

    /// When time away ends: "Mon 4 Jan" at midnight, "Mon 4 Jan 12:00" otherwise.
    public static func until(_ instant: Instant, in zone: Zone, thisYear: Int) -> String {
        let civil = zone.civil(at: instant.seconds)
        let time = civil.hour == 0 && civil.minute == 0 && civil.second == 0 ? "" : " \(pad(civil.hour)):\(pad(civil.minute))"
        return day(instant, in: zone, thisYear: thisYear) + time
    }
}

extension DaysOff {
    /// Working days as a person writes them (`mon-fri`, `mon,tue,thu`, `weekdays`, `sun-thu`), as
    /// ISO weekdays; nil for anything else.
    public static let workingDaysExample = "a list of days such as mon-fri, mon,tue,thu or weekdays"
    public static func workingDays(parsing text: String) -> Set<Int>? {
        let trimmed = text.trimmingCharacters(" ")
        // Letters and the separators of a day list only: the time is chime's.
        guard !trimmed.isEmpty, trimmed.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ",-. ".unicodeScalars.contains($0) }),
              case .calendar(let expression)? = try? Rule(parsing: trimmed + " 00:00") else { return nil }
        // Every day of the week (mon-sun) reads as no weekday limit at all.
        let bits = expression.weekdays ?? 0x7F
        guard bits != 0 else { return nil }
        return Set((1...7).filter { bits & (1 << ($0 - 1)) != 0 })
    }
}

extension DaysOff {
    /// When time away begins or ends, as a person writes it: a date (`2027-01-04`: its start, so
    /// "off until 4 January" rings again on the 4th) or a date and time (`2027-01-04 12:00`), in `zone`.
    public static func moment(_ text: String, in zone: Zone) -> Instant? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "T" })
        guard words.count == 1 || words.count == 2, let date = try? ExceptDate(parsing: String(words[0])), let year = date.year,
              let day = date.day else { return nil }
        var civil = CivilTime(year: year, month: date.month, day: day)
        if words.count == 2 {
            let parts = words[1].split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
            guard parts.count == 2 || parts.count == 3, let hour = parts[0], let minute = parts[1], (0...23).contains(hour),
                  (0...59).contains(minute), parts.count == 2 || (parts[2].map { (0...59).contains($0) } ?? false) else { return nil }
            civil = CivilTime(year: year, month: date.month, day: day, hour: hour, minute: minute, second: parts.count == 3 ? parts[2]! : 0)
        }
        let seconds: Int64 = switch zone.resolve(civil) {
        case .unique(let t): t
        case .ambiguous(let earlier, _): earlier
        case .gap(let end): end
        }
        return Instant(seconds: seconds)
    }

    /// The longest stretch of time away (a longer one is surely a typo in a year).
    public static let maximumAway = TimeSpan.seconds(2 * 366 * 86_400)
    /// The most stretches of time away kept.
    public static let maximumStretches = 256
}
