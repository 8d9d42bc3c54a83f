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
    /// When it was removed (no occurrence after it counts), and at which step of the history (what
    /// came before or after it, whatever the clock said: it may have been set back since).
    var removed: Int64?
    var removedStep: Int?
    /// Occurrences skipped with `chime skip`.
    var skipped: Set<Int64> = []
    /// Snoozes: pressed at, until, how many of the model's stretches had passed then, the step, and
    /// whether a later snooze took its place before it rang (an alarm has one next time).
    var snoozes: [(at: Int64, until: Int64, stretch: Int, step: Int, replaced: Bool)] = []
    /// The daemon's identifier for it.
    var identifier = ""
    /// The first of the model's swept stretches after it was set.
    var firstStretch = 0
    /// The rule's occurrences in the stretches passed so far, each with its day and stretch.
    var sweptFound: [ModelOccurrence] = []
    var sweptUpTo = 0

    init(name: String, kind: AlarmKind, ring: Bool, skipHolidays: Bool, added: Int64) {
        self.name = name
        self.kind = kind
        self.ring = ring
        self.skipHolidays = skipHolidays
        self.added = added
    }
}

/// A zone's calendar, and what Foundation was asked of it already (the model asks the same things
/// at every step). One thread plays a history (each process its own).
final class ModelZone {
    let name: String
    let calendar: Calendar
    /// The civil day of each minute asked about.
    private var days: [Int64: Int64] = [:]
    /// The instant of each wall time asked about, by day * 1440 + minute of the day (nil: skipped).
    private var wallTimes: [Int64: Int64?] = [:]

    private init(_ name: String) {
        self.name = name
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: name)!
        self.calendar = calendar
    }

    nonisolated(unsafe) private static var known: [String: ModelZone] = [:]
    static func named(_ name: String) -> ModelZone {
        if let zone = known[name] { return zone }
        let zone = ModelZone(name)
        known[name] = zone
        return zone
    }

    private static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// The civil day number of `instant` (days since 1970-01-01).
    func dayNumber(_ instant: Int64) -> Int64 {
        let minute = instant >= 0 ? instant / 60 : (instant - 59) / 60
        if let day = days[minute] { return day }
        let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(instant)))
        let midnight = Self.utc.date(from: DateComponents(year: parts.year, month: parts.month, day: parts.day))!
        let day = Int64(midnight.timeIntervalSince1970) / 86_400
        days[minute] = day
        return day
    }

    /// The instant of `hour:minute` on the civil day `day` (nil: the zone skips that time that day).
    func wallTime(day: Int64, hour: Int, minute: Int) -> Int64? {
        let key = day * 1440 + Int64(hour * 60 + minute)
        if let known = wallTimes[key] { return known }
        let date = Self.utc.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(day * 86_400)))
        var result: Int64?
        if let at = calendar.date(from: DateComponents(year: date.year, month: date.month, day: date.day, hour: hour, minute: minute)) {
            let back = calendar.dateComponents([.hour, .minute], from: at)
            if back.hour == hour, back.minute == minute { result = Int64(at.timeIntervalSince1970) }
        }
        wallTimes[key] = .some(result)
        return result
    }
}

/// An occurrence the rule gives: its instant, its civil day in the zone it came due in, and the
/// stretch it came due in (the model's `swept.count` for one ahead).
struct ModelOccurrence {
    var at: Int64
    var day: Int64
    var stretch: Int
}

struct Model {
    var alarms: [String: ModelAlarm] = [:]
    /// The wall time the clock has passed through, each stretch in the zone that was the system's
    /// then: occurrences came due there. A clock set back passes through nothing; set forward, it
    /// passes through what it skipped.
    var swept: [(from: Int64, to: Int64, zone: ModelZone)] = []
    var now: Int64
    var zone: String { didSet { current = ModelZone.named(zone) } }
    private(set) var current: ModelZone
    /// Holidays by civil day number (days since 1970-01-01), with the stretches passed when each
    /// was made one (an occurrence that came due before is not taken back).
    var holidays: [Int64: Int] = [:]
    /// Time away, with the stretches passed when it was set (what came due before is not taken back).
    /// The daemon lets go of a stretch a day after it ended, when another is set (`dropped`: the
    /// stretches passed then; a clock set back into it after that is not away).
    var away: [(from: Int64, until: Int64, since: Int, dropped: Int?)] = []

    init(start: Int64, zone: String) {
        now = start
        self.zone = zone
        current = ModelZone.named(zone)
    }

    /// The clock is at `time` now.
    mutating func follow(_ time: Int64) {
        if time > now { swept.append((now, time, current)) }
        now = time
    }

    /// The civil day number of `instant` in `zone`.
    static func dayNumber(_ instant: Int64, _ zone: String) -> Int64 { ModelZone.named(zone).dayNumber(instant) }

    /// The rule's occurrences of `alarm` in (from, to] in `zone`, before days off and skips, each
    /// with its civil day there.
    func rule(_ alarm: ModelAlarm, after from: Int64, to: Int64, in zone: ModelZone, into result: inout [ModelOccurrence], stretch: Int) {
        guard from < to else { return }
        switch alarm.kind {
        case .timer(let minutes):
            let at = alarm.added + Int64(minutes) * 60
            if at > from && at <= to { result.append(ModelOccurrence(at: at, day: zone.dayNumber(at), stretch: stretch)) }
        case .daily(let hour, let minute), .weekdays(let hour, let minute):
            let first = zone.dayNumber(from) - 1, last = zone.dayNumber(min(to, from + 800 * 86_400)) + 1
            for day in first...last {
                // Day 0, 1 January 1970, was a Thursday; 6 and 7 are Saturday and Sunday.
                let weekday = (day % 7 + 7 + 3) % 7 + 1
                if case .weekdays = alarm.kind, weekday >= 6 { continue }
                // A wall time the zone skips that day (summer time) is not asked of the model.
                guard let at = zone.wallTime(day: day, hour: hour, minute: minute) else { continue }
                if at > from, at <= to { result.append(ModelOccurrence(at: at, day: day, stretch: stretch)) }
            }
        }
    }

    /// Every occurrence the person expects of `alarm` up to `to`: those that came due while the
    /// clock passed (each in its zone), then those ahead in today's zone after the latest of them;
    /// less those a day off, time away or a skip leaves out and those a snooze took the place of,
    /// plus the snoozes.
    func expected(_ alarm: ModelAlarm, to: Int64) -> [Int64] {
        let end = min(to, alarm.removed ?? Int64.max)
        // Less what a skip, a holiday, time away or a snooze leaves out.
        func counts(_ occurrence: ModelOccurrence) -> Bool {
            let at = occurrence.at, stretch = occurrence.stretch
            // (Not the very instant it was set: the daemon plans from after it.)
            if at == alarm.added { return false }
            if alarm.skipped.contains(at) { return false }
            if alarm.skipHolidays, let since = holidays[occurrence.day], stretch >= since { return false }
            if away.contains(where: { $0.from <= at && at < $0.until && stretch >= $0.since && stretch < ($0.dropped ?? Int.max) }) { return false }
            // A snooze is the alarm's next time: the rule's times before its end that come due
            // after it was pressed are taken by it.
            if alarm.snoozes.contains(where: { stretch >= $0.stretch && at < $0.until }) { return false }
            return true
        }
        // Each with the stretch it came due in (swept.count: ahead); the stretches passed since it
        // was set, worked out once each (a stretch never changes once passed).
        while max(alarm.sweptUpTo, alarm.firstStretch) < swept.count {
            let index = max(alarm.sweptUpTo, alarm.firstStretch)
            alarm.sweptUpTo = index + 1
            let stretch = swept[index]
            // Both ends: the instant a zone changed belongs to the stretch after it as well. After
            // the clock was set back, what it passes again up to the latest time that came due and
            // rang is not due again (the daemon never rings a time before the last it rang; whether
            // one passed counts is settled once it passed).
            let latestSoFar = alarm.sweptFound.last(where: counts)?.at ?? Int64.min
            var found: [ModelOccurrence] = []
            rule(alarm, after: stretch.from - 1, to: stretch.to, in: stretch.zone, into: &found, stretch: index)
            alarm.sweptFound += found.lazy.filter { $0.at > latestSoFar }
        }
        var result: [Int64] = []
        for occurrence in alarm.sweptFound where occurrence.at <= end && counts(occurrence) { result.append(occurrence.at) }
        // Ahead: from now (after a clock set back, today's time ahead rings, as the daemon
        // documents), never again one that came due and rang (or was missed): one skipped, off or
        // taken by a snooze does not hold back another zone's time of that day.
        // (One due this very second rings: a re-plan at its time plans it.)
        let latest = alarm.sweptFound.last(where: counts)?.at ?? now - 1
        var ahead: [ModelOccurrence] = []
        rule(alarm, after: max(now - 1, latest), to: end, in: current, into: &ahead, stretch: swept.count)
        for occurrence in ahead where counts(occurrence) { result.append(occurrence.at) }
        // A snooze rings even in time away: the person asked for it just then. One pressed on the
        // popup of an alarm removed since (the popup is delivered, not pending) sets it again.
        for snooze in alarm.snoozes where !snooze.replaced && snooze.until <= to
            && (alarm.removedStep.map { snooze.step > $0 || snooze.until <= alarm.removed! } ?? true) {
            result.append(snooze.until)
        }
        result.sort()
        // (Each instant once: a snooze may end on one of the rule's times.)
        var write = 0
        for read in result.indices where write == 0 || result[read] != result[write - 1] {
            result[write] = result[read]
            write += 1
        }
        result.removeLast(result.count - write)
        return result
    }
}
