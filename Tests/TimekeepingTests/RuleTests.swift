import Testing
import TestSupport
@testable import Timekeeping

/// The short human forms, and how each rule kind fires.
@Suite struct RuleTests {
    @Test(arguments: [
        ("16:35", "*-*-* 16:35:00"),
        ("16:35 mon-fri", "Mon..Fri *-*-* 16:35:00"),
        ("07:00 mon,wed,fri", "Mon,Wed,Fri *-*-* 07:00:00"),
        ("weekdays 08:00", "Mon..Fri *-*-* 08:00:00"),
        ("weekends 09:30", "Sat,Sun *-*-* 09:30:00"),
        ("fri-mon 22:00", "Mon,Fri..Sun *-*-* 22:00:00"),
        ("2026-12-24 18:00", "2026-12-24 18:00:00"),
        ("16:35 Europe/Berlin", "*-*-* 16:35:00 Europe/Berlin"),
        ("Mon..Fri *-*-* 16:35:00", "Mon..Fri *-*-* 16:35:00"),
        ("Mon 07:00", "Mon *-*-* 07:00:00"),
    ])
    func humanFormsBecomeCalendarExpressions(_ text: String, _ normalized: String) throws {
        guard case .calendar(let expression) = try Rule(parsing: text) else {
            Issue.record("\(text) is not a calendar rule")
            return
        }
        #expect(expression.description == normalized)
    }

    @Test func intervals() throws {
        #expect(try Rule(parsing: "in 5m") == .interval(.seconds(300), repeats: false))
        #expect(try Rule(parsing: "in 1h30m") == .interval(.seconds(5400), repeats: false))
        #expect(try Rule(parsing: "in 2 hours 5 min") == .interval(.seconds(7500), repeats: false))
        #expect(try Rule(parsing: "every 25m") == .interval(.seconds(1500), repeats: true))
        let egg = Rule.interval(.seconds(300), repeats: false)
        #expect(egg.nextFire(after: 1000, anchor: 1000, in: .utc) == 1300)
        #expect(egg.nextFire(after: 1300, anchor: 1000, in: .utc) == nil)
        let pomodoro = Rule.interval(.seconds(1500), repeats: true)
        let next = pomodoro.nextFire(after: Instant(seconds: 1000 + 1500 * 3 + 7), anchor: 1000, in: .utc)
        #expect(next == Instant(seconds: 1000 + 1500 * 4))
        // Counted in nanoseconds from the moment it was set, not from the start of its second.
        let set = Instant(nanosecondsSinceEpoch: 1000_700_000_000)
        #expect(egg.nextFire(after: set, anchor: set, in: .utc) == Instant(nanosecondsSinceEpoch: 1300_700_000_000))
        // Nothing after the end of 2199, and no trap however far the arithmetic would reach.
        #expect(Rule.interval(.seconds(Int64.max / 2), repeats: true).nextFire(after: .latest, anchor: .latest, in: .utc) == nil)
        #expect(Rule.instant(.distantFuture).nextFire(after: 0, anchor: 0, in: .utc) == nil)
        #expect(Rule.instant(50).nextFire(after: 10, anchor: 0, in: .utc) == 50)
        #expect(Rule.instant(50).nextFire(after: 50, anchor: 0, in: .utc) == nil)
    }

    @Test func aNonRepeatingCalendarRuleFiresOnce() throws {
        let rule = try Rule(parsing: "16:35")
        let anchor = Instant(seconds: CivilTime(year: 2026, month: 11, day: 22, hour: 12).localSeconds)
        let first = try #require(rule.nextFire(after: anchor, anchor: anchor, repeats: false, in: .utc))
        #expect(Zone.utc.civil(at: first.seconds) == CivilTime(year: 2026, month: 11, day: 22, hour: 16, minute: 35))
        #expect(rule.nextFire(after: first, anchor: anchor, repeats: false, in: .utc) == nil)
        #expect(rule.repeats)
        #expect(!(try Rule(parsing: "2026-12-24 18:00")).repeats)
    }

    @Test(arguments: [
        ("16:65 mon-fri", "minute 65 is out of range 0-59", 3, 2),
        ("25:00", "hour 25 is out of range 0-23", 0, 2),
        ("2026-02-30 10:00", "day 30 is out of range 1-28 for 2026-02", 8, 2),
        ("in 5", "the duration 5 needs a unit (s, m, h, d or w)", 3, 1),
        ("in 5 parsecs", "unknown duration unit 'parsecs' (use s, m, h, d or w)", 5, 7),
        ("every", "'every' needs a duration, e.g. 'every 5m'", 0, 5),
        ("in 0s", "the duration must be longer than 0 s", 3, 2),
        ("Mun..Fri 07:00", "unknown weekday 'Mun'; use Mon, Tue, ... Sun", 0, 3),
        ("16:35 mun-fri", "unknown weekday or time zone 'mun-fri'", 6, 7),
        ("16:35 Möntag", "unknown weekday or time zone 'Möntag'", 6, 6),
        ("16:3é", "unexpected 'é' in the minute", 4, 1),
    ])
    func errorsPointAtTheOffendingPart(_ text: String, _ message: String, _ offset: Int, _ length: Int) {
        #expect {
            try Rule(parsing: text)
        } throws: { error in
            guard let error = error as? RuleError else { return false }
            return error.message == message && error.offset == offset && error.length == length
        }
    }

    @Test func dateComponentsMatchLikeUserNotifications() throws {
        // hour 8 alone: 08:00:00 every day; weekday 1 with hour 7: Mondays at 07:00.
        #expect(try DateComponents(hour: 8).expression().description == "*-*-* 08:00:00")
        #expect(try DateComponents(weekday: 1, hour: 7).expression().description == "Mon *-*-* 07:00:00")
        #expect(try DateComponents(day: 1).expression().description == "*-*-01 00:00:00")
        #expect(try DateComponents(minute: 0).expression().description == "*-*-* *:00:00")
        #expect(try DateComponents(year: 2026, month: 12, day: 24, hour: 18).expression().description == "2026-12-24 18:00:00")
        #expect(throws: RuleError.self) { try DateComponents().expression() }
        #expect(throws: RuleError.self) { try DateComponents(weekday: 8).expression() }
    }
}

@Suite struct RuleFuzzTests {
    /// Long digit runs once overflowed while being read (a trap, found by fuzzing).
    @Test func longDigitRunsAreErrorsNotTraps() {
        for text in [String(repeating: "9", count: 400), String(repeating: "9", count: 30) + ":00", "in " + String(repeating: "9", count: 40) + "s",
                     "2026-" + String(repeating: "1", count: 25) + "-01 10:00", "*:" + String(repeating: "7", count: 30)] {
            #expect(throws: RuleError.self) { try Rule(parsing: text) }
        }
    }
}

/// `chime list` shows a calendar rule in chime's short form, which reads back as the same rule.
@Suite struct ShortRuleTextTests {
    @Test(arguments: [
        ("16:35 mon-fri", "16:35 mon-fri"), ("08:00", "08:00"), ("07:30 sat,sun", "07:30 sat,sun"),
        ("2026-12-24 18:00", "2026-12-24 18:00"), ("weekdays 08:00", "08:00 mon-fri"), ("09:00 mon,wed,fri", "09:00 mon,wed,fri"),
        ("Mon..Thu,Sat *-*-* 06:05:00", "06:05 mon-thu,sat"), ("*:0/15", "*-*-* *:00/15:00"), ("16:35:30", "*-*-* 16:35:30"),
        ("Sat *-*-1..7 10:00", "Sat *-*-01..07 10:00:00"),
    ])
    func shortFormReadsBack(_ text: String, _ short: String) throws {
        guard case .calendar(let expression) = try Rule(parsing: text) else {
            Issue.record("\(text) is not a calendar rule")
            return
        }
        #expect(expression.shortDescription == short)
        guard case .calendar(let again) = try Rule(parsing: expression.shortDescription) else {
            Issue.record("\(short) is not a calendar rule")
            return
        }
        #expect(again == expression)
    }
}
