import Testing
@testable import Timekeeping

/// Reading iCalendar recurrence (RFC 5545 §3.3.10, §3.8.5): every example rule of §3.8.5.3 reads,
/// and what the RFC forbids is refused with the offending part pointed at.
@Suite struct RecurrenceReadingTests {
    /// The RRULE values of RFC 5545 §3.8.5.3's examples, as the RFC writes them.
    static let rfcExamples = [
        "FREQ=DAILY;COUNT=10", "FREQ=DAILY;UNTIL=19971224T000000Z", "FREQ=DAILY;INTERVAL=2", "FREQ=DAILY;INTERVAL=10;COUNT=5",
        "FREQ=YEARLY;UNTIL=20000131T140000Z;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA", "FREQ=DAILY;UNTIL=20000131T140000Z;BYMONTH=1",
        "FREQ=WEEKLY;COUNT=10", "FREQ=WEEKLY;UNTIL=19971224T000000Z", "FREQ=WEEKLY;INTERVAL=2;WKST=SU",
        "FREQ=WEEKLY;UNTIL=19971007T000000Z;WKST=SU;BYDAY=TU,TH", "FREQ=WEEKLY;COUNT=10;WKST=SU;BYDAY=TU,TH",
        "FREQ=WEEKLY;INTERVAL=2;UNTIL=19971224T000000Z;WKST=SU;BYDAY=MO,WE,FR", "FREQ=WEEKLY;INTERVAL=2;COUNT=8;WKST=SU;BYDAY=TU,TH",
        "FREQ=MONTHLY;COUNT=10;BYDAY=1FR", "FREQ=MONTHLY;UNTIL=19971224T000000Z;BYDAY=1FR",
        "FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU", "FREQ=MONTHLY;COUNT=6;BYDAY=-2MO", "FREQ=MONTHLY;BYMONTHDAY=-3",
        "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15", "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1", "FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15",
        "FREQ=MONTHLY;INTERVAL=2;BYDAY=TU", "FREQ=YEARLY;COUNT=10;BYMONTH=6,7", "FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2,3",
        "FREQ=YEARLY;INTERVAL=3;COUNT=10;BYYEARDAY=1,100,200", "FREQ=YEARLY;BYDAY=20MO", "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO",
        "FREQ=YEARLY;BYMONTH=3;BYDAY=TH", "FREQ=YEARLY;BYDAY=TH;BYMONTH=6,7,8", "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13",
        "FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13", "FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8",
        "FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2",
        "FREQ=HOURLY;INTERVAL=3;UNTIL=19970902T170000Z", "FREQ=MINUTELY;INTERVAL=15;COUNT=6", "FREQ=MINUTELY;INTERVAL=90;COUNT=4",
        "FREQ=DAILY;BYHOUR=9,10,11,12,13,14,15,16;BYMINUTE=0,20,40", "FREQ=MINUTELY;INTERVAL=20;BYHOUR=9,10,11,12,13,14,15,16",
        "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO", "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU",
        "FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5",
    ]

    @Test(arguments: rfcExamples) func everyExampleOfTheRFCReads(_ rule: String) throws {
        let text = "DTSTART;TZID=America/New_York:19970902T090000\nRRULE:\(rule)"
        let recurrence = try Recurrence(parsing: text)
        #expect(recurrence.rules.count == 1)
        #expect(recurrence.start == .zoned(CivilTime(year: 1997, month: 9, day: 2, hour: 9), zone: "America/New_York"))
    }

    @Test func theLastFridayOfTheMonthWithExceptions() throws {
        let recurrence = try Recurrence(parsing:
            "DTSTART;TZID=Europe/Berlin:20261127T163500 RRULE:FREQ=MONTHLY;BYDAY=-1FR EXDATE;TZID=Europe/Berlin:20261225T163500,20270129T163500")
        let rule = try #require(recurrence.rules.first)
        #expect(rule.frequency == .monthly)
        #expect(rule.byDay == [RecurrenceRule.WeekdayNumber(ordinal: -1, weekday: 5)])
        #expect(recurrence.exceptions.count == 2)
        #expect(recurrence.exceptions.last == .zoned(CivilTime(year: 2027, month: 1, day: 29, hour: 16, minute: 35), zone: "Europe/Berlin"))
        #expect(Recurrence.looksLikeContentLines("  dtstart:20261127T163500Z rrule:freq=daily"))
        #expect(!Recurrence.looksLikeContentLines("16:35 mon-fri"))
        // Names and values are case-insensitive; floating and UTC starts; dates; RDATE alone.
        #expect(try Recurrence(parsing: "dtstart:20261127T163500 rrule:freq=weekly;byday=mo").start == .floating(CivilTime(year: 2026, month: 11, day: 27, hour: 16, minute: 35)))
        #expect(try Recurrence(parsing: "DTSTART:20261127T153500Z RRULE:FREQ=DAILY;UNTIL=20261231T000000Z").start.isDate == false)
        #expect(try Recurrence(parsing: "DTSTART;VALUE=DATE:20261127 RRULE:FREQ=YEARLY;UNTIL=20301127").start == .date(year: 2026, month: 11, day: 27))
        #expect(try Recurrence(parsing: "DTSTART:20261127T090000Z RDATE:20261201T090000Z,20261215T090000Z").dates.count == 2)
    }

    @Test(arguments: [
        ("RRULE:FREQ=DAILY", "a recurrence needs DTSTART", 0),
        ("DTSTART:20261127T090000Z RRULE:FREQ=FORTNIGHTLY", "FREQ=FORTNIGHTLY", 31),
        ("DTSTART:20261127T090000Z RRULE:COUNT=3", "RRULE needs FREQ", 31),
        ("DTSTART:20261127T090000Z RRULE:FREQ=DAILY;COUNT=3;UNTIL=20261201T000000Z", "give COUNT or UNTIL, not both", 31),
        ("DTSTART:20261127T090000Z RRULE:FREQ=DAILY;BYHOUR=24", "BYHOUR: 24 is not 0-23", 42),
        ("DTSTART:20261127T090000Z RRULE:FREQ=MONTHLY;BYMONTHDAY=0", "BYMONTHDAY: 0 is not ±1-31", 44),
        ("DTSTART:20261127T090000Z RRULE:FREQ=WEEKLY;BYMONTHDAY=1", "BYMONTHDAY does not go with FREQ=WEEKLY", 31),
        ("DTSTART:20261127T090000Z RRULE:FREQ=MONTHLY;BYWEEKNO=20", "BYWEEKNO goes with FREQ=YEARLY only", 31),
        ("DTSTART:20261127T090000Z RRULE:FREQ=WEEKLY;BYDAY=-1FR", "BYDAY with a number (-1FR) goes with FREQ=MONTHLY or YEARLY only", 31),
        ("DTSTART:20261127T090000Z RRULE:FREQ=MONTHLY;BYDAY=XX", "BYDAY: XX is not a weekday", 44),
        ("DTSTART:20261127T090000Z RRULE:FREQ=MONTHLY;BYSETPOS=1", "BYSETPOS needs another BY part", 31),
        ("DTSTART:20261127T090000Z RRULE:FREQ=DAILY;FREQ=WEEKLY", "FREQ is given twice", 42),
        ("DTSTART:20261127T090000Z RRULE:FREQ=DAILY;INTERVAL=0", "INTERVAL=0: give a whole number from 1", 42),
        ("DTSTART;TZID=Mars/Olympus:20261127T090000 RRULE:FREQ=DAILY", "TZID=Mars/Olympus is not a zone", 26),
        ("DTSTART:20261131T090000Z RRULE:FREQ=DAILY", "20261131T090000Z is not a date-time", 8),
        ("DTSTART:20261127T250000 RRULE:FREQ=DAILY", "20261127T250000 is not a date-time", 8),
        ("DTSTART;TZID=Europe/Berlin:20261127T090000 RRULE:FREQ=DAILY;UNTIL=20261201T000000", "UNTIL must be in UTC", 0),
        ("DTSTART;VALUE=DATE:20261127 RRULE:FREQ=DAILY;UNTIL=20261201T000000Z", "UNTIL must be a date", 0),
        ("DTSTART:20261127T090000Z DTEND:20261127T100000Z RRULE:FREQ=DAILY", "DTEND is not a recurrence property", 25),
        ("DTSTART:20261127T090000Z RRULE:FREQ=YEARLY;BYYEARDAY=367", "BYYEARDAY: 367 is not ±1-366", 43),
    ])
    func whatTheRFCForbidsIsRefused(_ text: String, _ message: String, _ offset: Int) {
        #expect {
            try Recurrence(parsing: text)
        } throws: { error in
            guard let error = error as? RuleError else { return false }
            return error.message.contains(message) && error.offset == offset
        }
    }
}

extension RecurrenceReadingTests {
    /// DTSTART alone is one occurrence, as a calendar's one-off event: it does not repeat.
    @Test func aStartAloneIsOneOccurrence() throws {
        let once = try Recurrence(parsing: "DTSTART:20261127T090000Z")
        #expect(once.occurrences(through: Instant.latest.seconds, floatingZone: .utc) == [1_795_770_000])
        #expect(!Rule.recurrence(once).repeats)
        #expect(once.next(after: 1_795_770_000, floatingZone: .utc) == nil)
    }
}
