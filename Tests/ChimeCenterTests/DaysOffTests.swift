import ChimeCenter
import Foundation
import Testing
import TestSupport
import Timekeeping

/// Days off and time away as an alarm's plan reads them: each policy on a day off, across a year's
/// end and a change of offset, a moved occurrence that lands on one the alarm has anyway, time
/// away; and the plan against the slow way (every occurrence, its fate, sorted) for random rules,
/// days off and policies.
@Suite struct DaysOffTests {
    static let berlin = try! Zone.named("Europe/Berlin")

    static func at(_ text: String, _ zone: Zone = berlin) -> Instant {
        let parts = text.split(separator: " ")
        let d = parts[0].split(separator: "-").map { Int($0)! }
        let t = parts.count > 1 ? parts[1].split(separator: ":").map { Int($0)! } : [0, 0]
        guard case .unique(let seconds) = zone.resolve(CivilTime(year: d[0], month: d[1], day: d[2], hour: t[0], minute: t[1])) else {
            fatalError("\(text) is not one instant in \(zone)")
        }
        return Instant(seconds: seconds)
    }

    static func day(_ text: String) -> Int64 {
        let d = text.split(separator: "-").map { Int($0)! }
        return daysFromCivil(d[0], d[1], d[2])
    }

    static func weekdays(at time: String, _ policy: HolidayPolicy, zone: String = "Europe/Berlin") throws -> Trigger {
        var trigger = try Trigger(parsing: "\(time) mon-fri", timeZone: zone, anchor: at("2026-01-01 00:00"))
        trigger.onHoliday = policy
        return trigger
    }

    static func times(_ trigger: Trigger, after start: Instant, _ off: DaysOff, count: Int) -> [Instant] {
        var out: [Instant] = []
        var t = start
        while out.count < count, let next = trigger.nextFire(after: t, off: off) {
            out.append(next)
            t = next
        }
        return out
    }

    /// Christmas (Friday) and Boxing Day (Saturday) 2026, New Year's Day (Friday) 2027.
    static let yearEnd = DaysOff(holidays: [day("2026-12-25"): "Christmas Day", day("2026-12-26"): "Boxing Day", day("2027-01-01"): "New Year's Day"])

    @Test func eachPolicyOnTheDaysOffAroundTheYearsEnd() throws {
        let start = Self.at("2026-12-23 12:00")
        let ring = Self.times(try Self.weekdays(at: "07:00", .ring), after: start, Self.yearEnd, count: 6)
        #expect(ring == ["2026-12-24", "2026-12-25", "2026-12-28", "2026-12-29", "2026-12-30", "2026-12-31"].map { Self.at($0 + " 07:00") })
        let skip = Self.times(try Self.weekdays(at: "07:00", .skip), after: start, Self.yearEnd, count: 6)
        #expect(skip == ["2026-12-24", "2026-12-28", "2026-12-29", "2026-12-30", "2026-12-31", "2027-01-04"].map { Self.at($0 + " 07:00") })
        // Christmas moves back onto Thursday, where the alarm rings anyway: one occurrence, not two.
        // New Year's Day moves back onto New Year's Eve, also one.
        let before = Self.times(try Self.weekdays(at: "07:00", .before), after: start, Self.yearEnd, count: 6)
        #expect(before == ["2026-12-24", "2026-12-28", "2026-12-29", "2026-12-30", "2026-12-31", "2027-01-04"].map { Self.at($0 + " 07:00") })
        // After: Christmas to Monday, New Year's Day past the weekend to Monday 4 January, each once.
        let after = Self.times(try Self.weekdays(at: "07:00", .after), after: start, Self.yearEnd, count: 6)
        #expect(after == ["2026-12-24", "2026-12-28", "2026-12-29", "2026-12-30", "2026-12-31", "2027-01-04"].map { Self.at($0 + " 07:00") })
    }

    /// A moved occurrence is not one the alarm has anyway when the alarm does not ring there: a
    /// Friday-only alarm moves from Christmas to Thursday, and from New Year's Day to Monday 4 January.
    @Test func aMovedOccurrenceLandsOnADayTheAlarmDoesNotHave() throws {
        var friday = try Trigger(parsing: "fri 09:30", timeZone: "Europe/Berlin", anchor: Self.at("2026-01-01 00:00"))
        friday.onHoliday = .before
        #expect(Self.times(friday, after: Self.at("2026-12-20 00:00"), Self.yearEnd, count: 3)
                == [Self.at("2026-12-24 09:30"), Self.at("2026-12-31 09:30"), Self.at("2027-01-08 09:30")])
        friday.onHoliday = .after
        #expect(Self.times(friday, after: Self.at("2026-12-20 00:00"), Self.yearEnd, count: 3)
                == [Self.at("2026-12-28 09:30"), Self.at("2027-01-04 09:30"), Self.at("2027-01-08 09:30")])
        // Asked after Christmas morning: the Friday occurrence that passed still lies ahead, moved.
        #expect(friday.nextFire(after: Self.at("2026-12-25 12:00"), off: Self.yearEnd) == Self.at("2026-12-28 09:30"))
        // Asked on the Monday it moved to, after it: the next Friday is New Year's Day, moved to 4 January.
        #expect(friday.nextFire(after: Self.at("2026-12-28 10:00"), off: Self.yearEnd) == Self.at("2027-01-04 09:30"))
    }

    /// Easter 2027 in Germany: Good Friday 26 March, Easter Monday 29 March, the clocks go forward on
    /// the Sunday between. Monday's 07:00 (CEST) moved before lands on Thursday 25 March at 07:00 CET:
    /// the same time on the wall, an hour apart from three (or four) days of seconds.
    @Test func aMoveKeepsTheTimeOfDayAcrossAChangeOfOffset() throws {
        let easter = DaysOff(holidays: [Self.day("2027-03-26"): "Karfreitag", Self.day("2027-03-29"): "Ostermontag"])
        let before = try Self.weekdays(at: "07:00", .before)
        #expect(Self.times(before, after: Self.at("2027-03-24 12:00"), easter, count: 3)
                == [Self.at("2027-03-25 07:00"), Self.at("2027-03-30 07:00"), Self.at("2027-03-31 07:00")])
        let after = try Self.weekdays(at: "07:00", .after)
        let times = Self.times(after, after: Self.at("2027-03-25 12:00"), easter, count: 2)
        #expect(times == [Self.at("2027-03-30 07:00"), Self.at("2027-03-31 07:00")])
        #expect(Self.berlin.offset(at: times[0].seconds) == 7200)
        // A time that does not exist on the day it moves to: 02:30 on a Sunday-working rule, moved
        // after onto 28 March 2027 (the clocks go from 02:00 to 03:00) rings when the gap ends.
        var night = try Trigger(parsing: "sat 02:30", timeZone: "Europe/Berlin", anchor: Self.at("2027-01-01 00:00"))
        night.onHoliday = .after
        let weekend = DaysOff(holidays: [Self.day("2027-03-27"): "a day off"], workingDays: [7])
        #expect(night.nextFire(after: Self.at("2027-03-26 00:00"), off: weekend) == Self.at("2027-03-28 03:00"))
    }

    @Test func workingDaysSayWhereOccurrencesMoveTo() throws {
        // Sunday to Thursday working days. A day off is what moves, not a weekend: Saturday rings.
        let off = DaysOff(holidays: [Self.day("2026-12-04"): "Eid", Self.day("2026-12-07"): "a day off"], workingDays: [7, 1, 2, 3, 4])
        var daily = try Trigger(parsing: "08:00", timeZone: "Europe/Berlin", anchor: Self.at("2026-01-01 00:00"))
        daily.onHoliday = .before
        // Every day rings; Friday's moves onto Thursday (once), Monday's onto Sunday (once).
        #expect(Self.times(daily, after: Self.at("2026-12-03 00:00"), off, count: 5)
                == ["2026-12-03", "2026-12-05", "2026-12-06", "2026-12-08", "2026-12-09"].map { Self.at($0 + " 08:00") })
        #expect(DaysOff.workingDays(parsing: "sun-thu") == [7, 1, 2, 3, 4])
        #expect(DaysOff.workingDays(parsing: "weekdays") == Set(1...5))
        #expect(DaysOff.workingDays(parsing: "mon,wed") == [1, 3])
        #expect(DaysOff.workingDays(parsing: "mon-sun") == Set(1...7))
        #expect(DaysOff.workingDays(parsing: "07:00") == nil)
        #expect(DaysOff.workingDays(parsing: "someday") == nil)
        #expect(DaysOff.workingDays(parsing: "") == nil)
    }

    @Test func noWorkingDayNearEnoughLeavesTheOccurrenceOut() throws {
        // Forty days off in a row: a move would go further than 31 days.
        var days: [Int64: String] = [:]
        for d in Self.day("2026-07-01")..<(Self.day("2026-07-01") + 40) { days[d] = "summer closing" }
        let off = DaysOff(holidays: days)
        #expect(off.reach == DaysOff.maximumMove)
        let after = try Self.weekdays(at: "07:00", .after)
        let next = try #require(after.nextFire(after: Self.at("2026-06-30 12:00"), off: off))
        #expect(next == Self.at("2026-08-10 07:00"), "\(Self.berlin.civil(at: next.seconds))")
    }

    @Test func timeAwaySilencesWhatItIsFor() throws {
        let away = DaysOff.Away(from: Self.at("2026-12-19 00:00"), until: Self.at("2027-01-04 00:00"))
        let off = DaysOff(holidays: [:], away: [away])
        let ring = try Self.weekdays(at: "07:00", .ring)
        #expect(ring.nextFire(after: Self.at("2026-12-18 12:00"), off: off) == Self.at("2027-01-04 07:00"))
        // An every-minute rule steps over the fortnight at once, not minute by minute.
        let minutes = try Trigger(parsing: "*:*:00", timeZone: "Europe/Berlin", anchor: Self.at("2026-01-01 00:00"))
        #expect(minutes.nextFire(after: Self.at("2026-12-18 23:59"), off: off) == Self.at("2027-01-04 00:00"))
        // Time away for other alarms only: this one rings.
        let others = DaysOff(holidays: [:], away: [DaysOff.Away(from: away.from, until: away.until, alarms: ["gym"])])
        #expect(ring.nextFire(after: Self.at("2026-12-18 12:00"), off: others.forAlarm("wake")) == Self.at("2026-12-21 07:00"))
        #expect(ring.nextFire(after: Self.at("2026-12-18 12:00"), off: others.forAlarm("gym")) == Self.at("2027-01-04 07:00"))
        // An occurrence in time away that a day off moves past its end rings there: a Friday alarm,
        // away until Saturday 2 January, New Year's Day moved after onto Monday 4 January.
        var friday = try Trigger(parsing: "fri 09:30", timeZone: "Europe/Berlin", anchor: Self.at("2026-01-01 00:00"))
        friday.onHoliday = .after
        let overNewYear = Self.yearEnd.with(away: [DaysOff.Away(from: Self.at("2026-12-19 00:00"), until: Self.at("2027-01-02 00:00"))])
        #expect(friday.nextFire(after: Self.at("2026-12-18 12:00"), off: overNewYear) == Self.at("2027-01-04 09:30"))
        // What chime show says: one line for the stretch.
        let changes = ring.changes(after: Self.at("2026-12-18 12:00"), through: Self.at("2027-01-10 00:00"), off: off)
        #expect(changes.count == 1)
        #expect(changes.first?.fate.describe(changes[0].original, in: Self.berlin, now: Self.at("2026-12-01 00:00"))
                == "Mon 21 Dec 07:00: away until Mon 4 Jan 2027")
    }

    @Test func showSaysWhatMovesAndWhy() throws {
        let before = try Self.weekdays(at: "07:00", .before)
        let changes = before.changes(after: Self.at("2026-12-20 00:00"), through: Self.at("2027-01-31 00:00"), off: Self.yearEnd)
        let said = changes.map { $0.fate.describe($0.original, in: Self.berlin, now: Self.at("2026-12-01 00:00")) }
        #expect(said == ["Fri 25 Dec: Christmas Day, moved to Thu 24 Dec", "Fri 1 Jan 2027: New Year's Day, moved to Thu 31 Dec"])
        let skip = try Self.weekdays(at: "07:00", .skip)
        #expect(skip.changes(after: Self.at("2026-12-20 00:00"), through: Self.at("2026-12-31 00:00"), off: Self.yearEnd)
            .map { $0.fate.describe($0.original, in: Self.berlin, now: Self.at("2026-12-01 00:00")) } == ["Fri 25 Dec: Christmas Day, skipped"])
    }

    @Test func skipsAreOfTheTimesItFires() throws {
        // Skipping the next occurrence skips the moved one (Thursday's, which Christmas moved onto).
        var before = try Self.weekdays(at: "07:00", .before)
        before.skipped = [Self.at("2026-12-24 07:00")]
        #expect(before.nextFire(after: Self.at("2026-12-23 12:00"), off: Self.yearEnd) == Self.at("2026-12-28 07:00"))
    }

    /// The plan against the slow way: every occurrence of the rule in a stretch, each one's fate
    /// under the policy, the times it fires sorted and counted once. Random daily and weekly rules,
    /// random days off (runs of them too), random working days and time away, all four policies.
    @Test func thePlanIsTheSlowWaysForRandomDaysOff() throws {
        var random = SplitMix(seed: 0x0FF_DA75)
        let zones = ["Europe/Berlin", "America/New_York", "Australia/Sydney", "UTC"]
        let start = Self.at("2026-01-01 00:00", .utc)
        for round in 0..<300 {
            let zoneName = zones[Int(random.next() % 4)]
            let zone = try Zone.named(zoneName)
            let hour = Int(random.next() % 24), minute = Int(random.next() % 4) * 15
            let days = ["", " mon-fri", " sat,sun", " mon,wed,fri", " fri"][Int(random.next() % 5)]
            var trigger = try Trigger(parsing: "\(hour):\(minute < 10 ? "0" : "")\(minute)\(days)", timeZone: zoneName, anchor: start)
            trigger.onHoliday = HolidayPolicy.allCases[Int(random.next() % 4)]
            var holidays: [Int64: String] = [:]
            let firstDay = start.seconds / 86_400
            for _ in 0..<Int(random.next() % 40) {
                let begin = firstDay + Int64(random.next() % 360)
                for d in begin..<(begin + Int64(1 + random.next() % 4)) { holidays[d] = "day \(d)" }
            }
            let working = Set((1...7).filter { _ in random.next() % 4 != 0 })
            var away: [DaysOff.Away] = []
            if random.next() % 3 == 0 {
                let from = start + .seconds(Int64(random.next() % (300 * 86_400)))
                away.append(DaysOff.Away(from: from, until: from + .seconds(Int64(random.next() % (20 * 86_400)))))
            }
            let off = DaysOff(holidays: holidays, workingDays: working.isEmpty ? [1] : working, away: away)
            // The slow way, over the year (and the weeks either side a move may cross).
            var fired: Set<Instant> = []
            var t = start - .seconds(40 * 86_400)
            while let original = trigger.nextFire(after: t), original < start + .seconds(400 * 86_400) {
                t = original
                let local = zone.civil(at: original.seconds).dayNumber
                var at: Instant? = original
                if trigger.holidayPolicy != .ring, holidays[local] != nil {
                    at = nil
                    if trigger.holidayPolicy != .skip {
                        let step: Int64 = trigger.holidayPolicy == .before ? -1 : 1
                        for k in 1...Int64(DaysOff.maximumMove) where at == nil {
                            let d = local + step * k
                            guard off.isWorkingDay(d) else { continue }
                            let date = civilFromDays(d), c = zone.civil(at: original.seconds)
                            let seconds: Int64 = switch zone.resolve(CivilTime(year: date.year, month: date.month, day: date.day, hour: c.hour, minute: c.minute)) {
                            case .unique(let s): s
                            case .ambiguous(let s, _): s
                            case .gap(let s): s
                            }
                            at = Instant(seconds: seconds)
                        }
                    }
                }
                if let at, off.away(at: at) == nil { fired.insert(at) }
            }
            let expected = fired.filter { $0 > start && $0 < start + .seconds(340 * 86_400) }.sorted()
            var planned: [Instant] = []
            var cursor = start
            while let next = trigger.nextFire(after: cursor, off: off), next < start + .seconds(340 * 86_400) {
                planned.append(next)
                cursor = next
            }
            let differ = (0..<min(planned.count, expected.count)).first { planned[$0] != expected[$0] } ?? min(planned.count, expected.count)
            #expect(planned == expected, """
                round \(round): \(trigger.rule) in \(zoneName), \(trigger.holidayPolicy), working \(working.sorted()): \
                from the \(differ)th, planned \(planned.dropFirst(differ).prefix(2).map { zone.civil(at: $0.seconds) }), \
                the slow way \(expected.dropFirst(differ).prefix(2).map { zone.civil(at: $0.seconds) })
                """)
            if planned != expected { break }
        }
    }
}
