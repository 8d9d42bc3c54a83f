import ChimeCalendars
import ChimeCenter
import Foundation
import ICalendar
import Testing
import Timekeeping

/// Calendars as other programs write them, read into chime alarms; chime's alarms written as
/// iCalendar and read back. (Against a real calendar server and python's icalendar: CalendarSyncTests.)
@Suite struct CalendarFileTests {
    static let now = Instant(seconds: 1_795_000_000)  // November 2026

    /// As Thunderbird (Lightning) writes an event: a VTIMEZONE with X-LIC-LOCATION, CRLF lines, the
    /// placeholder description, TRIGGER;VALUE=DURATION.
    static let thunderbird = [
        "BEGIN:VCALENDAR", "PRODID:-//Mozilla.org/NONSGML Mozilla Calendar V1.1//EN", "VERSION:2.0",
        "BEGIN:VTIMEZONE", "TZID:Europe/Berlin", "X-LIC-LOCATION:Europe/Berlin",
        "BEGIN:DAYLIGHT", "TZOFFSETFROM:+0100", "TZOFFSETTO:+0200", "TZNAME:CEST", "DTSTART:19700329T020000",
        "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3", "END:DAYLIGHT",
        "BEGIN:STANDARD", "TZOFFSETFROM:+0200", "TZOFFSETTO:+0100", "TZNAME:CET", "DTSTART:19701025T030000",
        "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10", "END:STANDARD", "END:VTIMEZONE",
        "BEGIN:VEVENT", "CREATED:20261101T100000Z", "UID:a1b2c3d4-e5f6-7890-abcd-ef1234567890", "SUMMARY:Team review",
        "RRULE:FREQ=MONTHLY;BYDAY=-1FR", "EXDATE;TZID=Europe/Berlin:20261225T163500",
        "DTSTART;TZID=Europe/Berlin:20261127T163500", "DTEND;TZID=Europe/Berlin:20261127T173500",
        "LOCATION:Room 4", "DESCRIPTION:Bring the\\, numbers\\nand slides", "X-MOZ-GENERATION:1",
        "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER;VALUE=DURATION:-P1D", "DESCRIPTION:Default Mozilla Description", "END:VALARM",
        "END:VEVENT",
        "BEGIN:VEVENT", "UID:lunch", "SUMMARY:Lunch", "DTSTART:20261201T120000Z", "END:VEVENT",
        "END:VCALENDAR",
    ].joined(separator: "\r\n") + "\r\n"

    /// As Evolution writes one: a path-like TZID, folded lines, an AUDIO alarm with REPEAT and an
    /// attached file, an alarm at the end, and a to-do whose alarm sends mail.
    static let evolution = """
        BEGIN:VCALENDAR
        PRODID:-//Ximian//NONSGML Evolution Calendar//EN
        VERSION:2.0
        BEGIN:VTIMEZONE
        TZID:/freeassociation.sourceforge.net/Europe/Berlin
        X-LIC-LOCATION:Europe/Berlin
        END:VTIMEZONE
        BEGIN:VEVENT
        UID:20261120T101010Z-1234-1000-1-7@laptop
        DTSTART;TZID=/freeassociation.sourceforge.net/Europe/Berlin:
         20261201T090000
        DTEND;TZID=/freeassociation.sourceforge.net/Europe/Berlin:20261201T100000
        RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU
        SUMMARY:Standup über alles
        BEGIN:VALARM
        X-EVOLUTION-ALARM-UID:20261120T101010Z-1234-1000-1-8@laptop
        ACTION:AUDIO
        TRIGGER;RELATED=START:-PT15M
        REPEAT:2
        DURATION:PT5M
        ATTACH;VALUE=URI:file:///usr/share/sounds/my%20bell.oga
        END:VALARM
        BEGIN:VALARM
        ACTION:DISPLAY
        TRIGGER;RELATED=END:PT0S
        DESCRIPTION:Standup is over
        END:VALARM
        END:VEVENT
        BEGIN:VTODO
        UID:todo-1@laptop
        DUE;VALUE=DATE:20261210
        SUMMARY:Taxes
        BEGIN:VALARM
        ACTION:EMAIL
        TRIGGER:-P1D
        END:VALARM
        END:VTODO
        END:VCALENDAR

        """

    @Test func aThunderbirdEventBecomesAnAlarmTheDayBefore() throws {
        let read = CalendarImport(reading: Self.thunderbird, anchor: Self.now)
        #expect(read.problems.isEmpty, "\(read.problems)")
        #expect(read.withoutAlarms == 1)
        try #require(read.alarms.count == 1)
        let request = try read.alarms[0].draft.build(now: Self.now)
        #expect(request.identifier == "ics-a1b2c3d4-e5f6-7890-abcd-ef1234567890")
        #expect(request.content.title == "Team review")
        #expect(request.content.body == "Room 4\nBring the, numbers\nand slides")
        #expect(request.content.userInfo[CalendarImport.uidKey] == "a1b2c3d4-e5f6-7890-abcd-ef1234567890")
        #expect(request.content.sound == nil)
        #expect(request.trigger.offsets == [.seconds(-86_400)])
        #expect(request.summaryRule == "DTSTART;TZID=Europe/Berlin:20261127T163500 RRULE:FREQ=MONTHLY;BYDAY=-1FR EXDATE;TZID=Europe/Berlin:20261225T163500")
        // The day before the last Friday of each month, at 16:35 in Berlin; not before Christmas Day.
        let berlin = try Zone.named("Europe/Berlin")
        var times: [String] = []
        var t = Self.now
        for _ in 0..<3 {
            guard let next = request.trigger.nextFire(after: t) else { break }
            times.append(berlin.iso8601(next))
            t = next
        }
        #expect(times == ["2026-11-26T16:35:00+01:00", "2027-01-28T16:35:00+01:00", "2027-02-25T16:35:00+01:00"])
    }

    /// A cancelled event (the status in any case) rings no alarm; a tentative or confirmed one does.
    @Test func aCancelledEventRingsNoAlarm() throws {
        func event(_ uid: String, _ status: String?) -> String {
            "BEGIN:VEVENT\r\nUID:\(uid)\r\nDTSTART:20261201T090000Z\r\n" + (status.map { "STATUS:\($0)\r\n" } ?? "")
                + "BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT5M\r\nEND:VALARM\r\nEND:VEVENT\r\n"
        }
        let text = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\n" + event("a", "CANCELLED") + event("b", "cancelled") + event("c", "Cancelled")
            + event("d", "TENTATIVE") + event("e", "CONFIRMED") + event("f", nil) + event("g", "CANCELLED-NOT") + "END:VCALENDAR\r\n"
        let read = CalendarImport(reading: text, anchor: Self.now)
        #expect(read.problems.isEmpty, "\(read.problems)")
        #expect(read.cancelled == 3)
        #expect(read.alarms.map(\.uid) == ["d", "e", "f", "g"])
    }

    @Test func anEvolutionEventRingsFifteenTenAndFiveMinutesBeforeAndAtItsEnd() throws {
        let read = CalendarImport(reading: Self.evolution, anchor: Self.now)
        // The to-do's alarm sends mail: a problem at its line (the VALARM's BEGIN).
        #expect(read.problems.map(\.description) == ["33: an EMAIL alarm: chime shows popups and plays sounds, it sends no mail"])
        try #require(read.alarms.count == 1)
        let request = try read.alarms[0].draft.build(now: Self.now)
        #expect(request.identifier == "ics-20261120T101010Z-1234-1000-1-7@laptop")
        #expect(request.content.title == "Standup über alles")
        #expect(request.content.body == "Standup is over")
        #expect(request.content.sound == .file("/usr/share/sounds/my bell.oga"))
        #expect(request.trigger.offsets == [.seconds(-900), .seconds(-600), .seconds(-300), .seconds(3600)])
        #expect(request.summaryRule == "DTSTART;TZID=Europe/Berlin:20261201T090000 RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU")
        let berlin = try Zone.named("Europe/Berlin")
        var times: [String] = []
        var t = Self.now
        for _ in 0..<5 {
            guard let next = request.trigger.nextFire(after: t) else { break }
            times.append(berlin.iso8601(next))
            t = next
        }
        #expect(times == ["2026-12-01T08:45:00+01:00", "2026-12-01T08:50:00+01:00", "2026-12-01T08:55:00+01:00",
                          "2026-12-01T10:00:00+01:00", "2026-12-15T08:45:00+01:00"])
    }

    /// Unreadable files and parts chime cannot represent say where.
    @Test(arguments: [
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nEND:VCALENDAR\n", "3: END:VCALENDAR closes BEGIN:VEVENT of line 2"),
        ("BEGIN:VCALENDAR\n", "1: BEGIN:VCALENDAR is never ended"),
        ("hello\n", "1: hello: no ':' before the value"),
        ("SUMMARY:x\n", "1: SUMMARY outside any component (a file starts with BEGIN:VCALENDAR)"),
        ("", "1: no BEGIN:VCALENDAR: not an iCalendar file"),
        (String(repeating: "BEGIN:X\n", count: 20), "17: components nest deeper than 16"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:u\nDTSTART;TZID=Mars/Olympus:20261201T090000\nBEGIN:VALARM\nTRIGGER:-PT5M\nEND:VALARM\nEND:VEVENT\nEND:VCALENDAR\n",
         "4: TZID=Mars/Olympus: not a zone chime knows (no tz database name, X-LIC-LOCATION or fixed offset says which)"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:u\nDTSTART:20261201T090000Z\nRRULE:FREQ=FORTNIGHTLY\nBEGIN:VALARM\nTRIGGER:-PT5M\nEND:VALARM\nEND:VEVENT\nEND:VCALENDAR\n",
         "4: the event's recurrence: FREQ=FORTNIGHTLY: give SECONDLY, MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY or YEARLY"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:u\nDTSTART:20261201T090000Z\nBEGIN:VALARM\nTRIGGER:soon\nEND:VALARM\nEND:VEVENT\nEND:VCALENDAR\n",
         "6: TRIGGER:soon is not a duration (e.g. -PT15M)"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20261201T090000Z\nBEGIN:VALARM\nTRIGGER:-PT5M\nEND:VALARM\nEND:VEVENT\nEND:VCALENDAR\n",
         "2: VEVENT without a UID (RFC 5545 requires one; chime updates alarms by it)"),
    ])
    func whatCannotBeReadSaysWhere(_ text: String, _ expected: String) {
        let read = CalendarImport(reading: text, anchor: Self.now)
        #expect(read.problems.map(\.description) == [expected])
        #expect(read.alarms.isEmpty)
    }

    /// A fold may fall inside a character's UTF-8 (RFC 5545 §3.1 folds at octets).
    @Test func aFoldInsideACharacterIsJoinedFirst() throws {
        var bytes = Array("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:u\r\nDTSTART:20261201T090000Z\r\nSUMMARY:Caf".utf8)
        bytes += [0xC3, 0x0D, 0x0A, 0x20, 0xA9]  // "é" split by a fold
        bytes += Array("\r\nBEGIN:VALARM\r\nTRIGGER:-PT5M\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n".utf8)
        let read = CalendarImport(reading: bytes, anchor: Self.now)
        #expect(read.alarms.first?.draft.title == "Café")
        // A byte that is not UTF-8 is an error at its line.
        bytes[bytes.firstIndex(of: 0xA9)!] = 0x41
        #expect(CalendarImport(reading: bytes, anchor: Self.now).problems.map(\.description) == ["5: not UTF-8 text (an iCalendar file is UTF-8)"])
    }

    /// Every systemd calendar expression that has an RRULE has the same occurrences as it, over
    /// two years, in a zone with DST changes.
    @Test func anExportedRuleHasTheExpressionsOccurrences() throws {
        let berlin = try Zone.named("Europe/Berlin")
        var state: UInt64 = 0x1CA1
        func below(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        func field(_ lower: Int, _ upper: Int) -> String {
            switch below(4) {
            case 0: return "*"
            case 1: return two(lower + below(upper - lower + 1))
            case 2: let a = lower + below(upper - lower); return "\(two(a))..\(two(a + 1 + below(upper - a)))"
            default: let step = 1 + below(max(1, (upper - lower) / 3)); return "\(two(lower + below(upper - lower + 1 - step)))/\(step)"
            }
        }
        let weekdays = ["", "Mon ", "Mon..Fri ", "Sat,Sun ", "Tue,Thu "]
        var compared = 0
        for _ in 0..<150 {
            let days = below(5) == 0 ? "~0\(1 + below(3))" : "-" + field(1, 28)
            let text = weekdays[below(weekdays.count)] + "*-\(field(1, 12))\(days) \(field(0, 23)):\(field(0, 59)):\(below(3) == 0 ? "00" : field(0, 59))"
            let expression = try CalendarExpression(parsing: text)
            guard let rule = CalendarExport.rrule(expression),
                let first = expression.nextElapse(after: Self.now.seconds, in: berlin)
            else { continue }
            let start = berlin.civil(at: first)
            let recurrence = try Recurrence(parsing: "DTSTART;TZID=Europe/Berlin:\(start.year)\(two(start.month))\(two(start.day))T\(two(start.hour))\(two(start.minute))\(two(start.second)) RRULE:\(rule)")
            var expected: [Int64] = []
            var t = Self.now.seconds
            while expected.count < 40, let next = expression.nextElapse(after: t, in: berlin), next < Self.now.seconds + 2 * 366 * 86_400 {
                expected.append(next)
                t = next
            }
            guard !expected.isEmpty else { continue }
            // Times a DST change skips or repeats are read by each its own documented way: left out.
            let ordinary = { (time: Int64) in
                if case .unique = berlin.resolve(berlin.civil(at: time)) { return true }
                return false
            }
            let ours = recurrence.occurrences(through: expected.last ?? first, floatingZone: berlin, maximum: 40)
            #expect(ours.filter(ordinary) == expected.filter(ordinary), "\(text) → \(rule)")
            compared += 1
        }
        #expect(compared > 100)
    }

    /// chime's alarms written as iCalendar and read back are the alarms they were.
    @Test func anExportReadsBackAsTheSameAlarms() throws {
        var standup = AlarmDraft(kind: .alarm, anchor: Self.now)
        standup.identifier = "standup"
        standup.title = "Standup"
        standup.body = "Daily, 10 minutes; bring notes"
        standup.sound = .named("bell")
        standup.volume = 70
        standup.insist = true
        standup.when = .rule("16:35 mon-fri")
        standup.reminders = [.seconds(600)]
        standup.exceptions = [try ExceptDate(parsing: "2026-12-24")]
        standup.until = .text("2027-06-30")
        standup.notice = .seconds(7200)
        standup.onHoliday = .before
        var review = AlarmDraft(kind: .alarm, anchor: Self.now)
        review.identifier = "review"
        review.title = "Review"
        review.when = .rule("DTSTART;TZID=Europe/Berlin:20261127T163500 RRULE:FREQ=MONTHLY;BYDAY=-1FR")
        review.offsets = [.seconds(-86_400)]
        let requests = [try standup.build(now: Self.now), try review.build(now: Self.now)]
        let text = CalendarExport.calendar(requests, now: Self.now)
        #expect(text.split(separator: "\r\n").allSatisfy { $0.utf8.count <= 75 }, "folded at 75 octets")
        let read = CalendarImport(reading: text, anchor: Self.now, trust: .ownFile)
        #expect(read.problems.isEmpty, "\(read.problems)")
        let back = try read.alarms.map { try $0.draft.build(now: Self.now) }
        try #require(back.count == 2)
        for (original, again) in zip(requests, back) {
            #expect(again.identifier == original.identifier)
            #expect(again.content.title == original.content.title)
            #expect(again.content.body == original.content.body)
            #expect(again.content.sound == original.content.sound)
            #expect(again.content.volume == original.content.volume)
            #expect(again.content.insist == original.content.insist)
            #expect(again.summaryRule == original.summaryRule)
            #expect(again.trigger.offsets == original.trigger.offsets)
            #expect(again.trigger.reminders == original.trigger.reminders)
            #expect(again.trigger.exceptions == original.trigger.exceptions)
            #expect(again.trigger.until == original.trigger.until)
            #expect(again.trigger.notice == original.trigger.notice)
            #expect(again.trigger.onHoliday == original.trigger.onHoliday)
            // The same times, a year of them.
            var a = Self.now, b = Self.now
            for _ in 0..<60 {
                let x = original.trigger.nextFire(after: a), y = again.trigger.nextFire(after: b)
                #expect(x == y, "\(original.identifier)")
                guard let x, let y else { break }
                (a, b) = (x, y)
            }
        }
    }
}

extension CalendarFileTests {
    /// "Last Friday of the month at 16:35, remind me the day before, not in December": the
    /// exception comes back every year; a day of every year and dated ones are read too.
    @Test func notInDecemberMeansEveryDecember() throws {
        var draft = AlarmDraft(kind: .alarm, anchor: Self.now)
        draft.title = "Review"
        draft.when = .rule("DTSTART;TZID=Europe/Berlin:20261127T163500 RRULE:FREQ=MONTHLY;BYDAY=-1FR")
        draft.reminders = [.seconds(86_400)]
        draft.exceptions = [try ExceptDate(parsing: "december")]
        let request = try draft.build(now: Self.now)
        let berlin = try Zone.named("Europe/Berlin")
        var months: [String] = []
        var t = Self.now
        while months.count < 14, let next = request.trigger.nextFire(after: t) {
            months.append(String(berlin.iso8601(next).prefix(7)))
            t = next
        }
        #expect(!months.contains("2026-12") && !months.contains("2027-12"), "\(months)")
        #expect(months.first == "2026-11" && months.contains("2028-01"))
        let reminder = try #require(request.trigger.nextReminder(after: Self.now))
        #expect(berlin.iso8601(reminder.at) == "2026-11-26T16:35:00+01:00")
        #expect(try ["dec", "12-24", "02-29", "2026-12", "2026-12-24"].map { try ExceptDate(parsing: $0).description }
                == ["december", "12-24", "02-29", "2026-12", "2026-12-24"])
        for bad in ["13-01", "02-30", "de", "2026-02-29", "1-1", "2300-01"] {
            #expect(throws: RuleError.self, "\(bad)") { try ExceptDate(parsing: bad) }
        }
    }
}

extension CalendarFileTests {
    /// An excepted month of a rule that fires every second is passed in one step: the next
    /// occurrence is the first second after it, in the rule's zone, across a DST change too.
    @Test func anExceptedMonthOfEverySecondIsPassedAtOnce() throws {
        for (zoneName, month, expected) in [("UTC", "2026-12", "2027-01-01T00:00:00+00:00"),
                                            ("Europe/Berlin", "2027-03", "2027-04-01T00:00:00+02:00"),
                                            ("Europe/Berlin", "12-24", "2026-12-25T00:00:00+01:00")] {
            var draft = AlarmDraft(kind: .alarm, anchor: Self.now)
            draft.title = "Tick"
            draft.when = .rule("*:*:* \(zoneName)")  // every second, in that zone
            draft.exceptions = [try ExceptDate(parsing: month)]
            let request = try draft.build(now: Self.now)
            let zone = try Zone.named(zoneName)
            // From inside the excepted period.
            let inside: Instant = switch month {
            case "2026-12": Instant(seconds: 1_796_428_800)  // 2026-12-05
            case "2027-03": Instant(seconds: 1_804_118_400)  // 2027-03-04
            default: Instant(seconds: 1_798_110_000)  // 2026-12-24 around midday in Berlin
            }
            let next = try #require(request.trigger.nextFire(after: inside))
            #expect(zone.iso8601(next) == expected, "\(zoneName) except \(month)")
        }
    }
}
