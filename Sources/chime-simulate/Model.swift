// The model: what the person asked for, worked out the slow and simple way, with Foundation's
// calendar rather than chime's Timekeeping. Every occurrence of every alarm, by its instant: a
// wall time on each civil day in the zone that was the system's at that instant, left out on a
// holiday (for an alarm that skips them), in time away, when skipped, or after the alarm was
// removed; a snooze adds one.
import Foundation

final class ModelAlarm {
    let name: String
    let kind: AlarmKind
    let ring: Bool
    let skipHolidays: Bool
    let added: Int64
    /// When it was removed (no occurrence after it counts).
    var removed: Int64?
    /// Occurrences skipped with `chime skip`.
    var skipped: Set<Int64> = []
    /// Snoozes: pressed at, until, and how many of the model's stretches had passed then.
    var snoozes: [(at: Int64, until: Int64, stretch: Int)] = []
    /// The daemon's identifier for it.
    var identifier = ""
    /// The first of the model's swept stretches after it was set.
    var firstStretch = 0

    init(name: String, kind: AlarmKind, ring: Bool, skipHolidays: Bool, added: Int64) {
        self.name = name
        self.kind = kind
        self.ring = ring
        self.skipHolidays = skipHolidays
        self.added = added
    }
}

struct Model {
    var alarms: [String: ModelAlarm] = [:]
    /// The wall time the clock has passed through, each stretch in the zone that was the system's
    /// then: occurrences came due there. A clock set back passes through nothing; set forward, it
    /// passes through what it skipped.
    var swept: [(from: Int64, to: Int64, zone: String)] = []
    var now: Int64
    var zone: String
    /// Holidays by civil day number (days since 1970-01-01), with the stretches passed when each
    /// was made one (an occurrence that came due before is not taken back).
    var holidays: [Int64: Int] = [:]
    var away: [(from: Int64, until: Int64)] = []

    init(start: Int64, zone: String) {
        now = start
        self.zone = zone
    }

    /// The clock is at `time` now.
    mutating func follow(_ time: Int64) {
        if time > now { swept.append((now, time, zone)) }
        now = time
    }

    /// One thread plays a history (each process its own).
    nonisolated(unsafe) private static var calendars: [String: Calendar] = [:]
    static func calendar(_ zone: String) -> Calendar {
        if let calendar = calendars[zone] { return calendar }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zone)!
        calendars[zone] = calendar
        return calendar
    }

    /// The civil day number of `instant` in `zone`.
    static func dayNumber(_ instant: Int64, _ zone: String) -> Int64 {
        let parts = calendar(zone).dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(instant)))
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let midnight = utc.date(from: DateComponents(year: parts.year, month: parts.month, day: parts.day))!
        return Int64(midnight.timeIntervalSince1970) / 86_400
    }

    /// The rule's occurrences of `alarm` in (from, to] in `zone`, before days off and skips.
    func rule(_ alarm: ModelAlarm, after from: Int64, to: Int64, in zone: String) -> [Int64] {
        guard from < to else { return [] }
        switch alarm.kind {
        case .timer(let minutes):
            let at = alarm.added + Int64(minutes) * 60
            return at > from && at <= to ? [at] : []
        case .daily(let hour, let minute), .weekdays(let hour, let minute):
            var result: [Int64] = []
            let calendar = Self.calendar(zone)
            var day = calendar.startOfDay(for: Date(timeIntervalSince1970: TimeInterval(from - 86_400)))
            let last = Date(timeIntervalSince1970: TimeInterval(min(to, from + 800 * 86_400) + 86_400))
            while day <= last {
                var parts = calendar.dateComponents([.year, .month, .day, .weekday], from: day)
                let weekday = parts.weekday!  // 1: Sunday
                parts.hour = hour
                parts.minute = minute
                parts.weekday = nil
                if case .weekdays = alarm.kind, weekday == 1 || weekday == 7 {
                } else if let date = calendar.date(from: parts) {
                    let at = Int64(date.timeIntervalSince1970)
                    // A wall time the zone skips that day (summer time) is not asked of the model.
                    let back = calendar.dateComponents([.hour, .minute], from: date)
                    if at > from, at <= to, back.hour == hour, back.minute == minute { result.append(at) }
                }
                day = calendar.date(byAdding: .day, value: 1, to: day)!
            }
            return result
        }
    }

    /// Every occurrence the person expects of `alarm` up to `to`: those that came due while the
    /// clock passed (each in its zone), then those ahead in today's zone after the latest of them;
    /// less those a day off, time away or a skip leaves out and those a snooze took the place of,
    /// plus the snoozes.
    func expected(_ alarm: ModelAlarm, to: Int64) -> [Int64] {
        let end = min(to, alarm.removed ?? Int64.max)
        // Each with the stretch it came due in (swept.count: ahead).
        var found: [(at: Int64, zone: String, stretch: Int)] = []
        // The stretches passed since it was set.
        for (index, stretch) in swept.enumerated().dropFirst(alarm.firstStretch) {
            for at in rule(alarm, after: stretch.from, to: min(stretch.to, end), in: stretch.zone) { found.append((at, stretch.zone, index)) }
        }
        // Ahead: from now (after a clock set back, today's time ahead rings, as the daemon
        // documents), never again one that came due.
        let latest = found.map(\.at).max() ?? now
        for at in rule(alarm, after: max(now, latest), to: end, in: zone) { found.append((at, zone, swept.count)) }
        var result = found.filter { at, zone, stretch in
            if alarm.skipped.contains(at) { return false }
            if alarm.skipHolidays, let since = holidays[Self.dayNumber(at, zone)], stretch >= since { return false }
            if away.contains(where: { $0.from <= at && at < $0.until }) { return false }
            // A snooze is the alarm's next time: the rule's times before its end that come due
            // after it was pressed are taken by it.
            if alarm.snoozes.contains(where: { stretch >= $0.stretch && at < $0.until }) { return false }
            return true
        }.map(\.at)
        // A snooze rings even in time away: the person asked for it just then. One pressed on the
        // popup of an alarm removed since (the popup is delivered, not pending) sets it again.
        for snooze in alarm.snoozes where snooze.until <= to && (alarm.removed.map { snooze.at >= $0 || snooze.until <= $0 } ?? true) {
            result.append(snooze.until)
        }
        return Array(Set(result)).sorted()
    }
}
