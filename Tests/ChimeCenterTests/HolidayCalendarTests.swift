import ChimeCalendars
import ChimeCenter
import Foundation
import Testing
import TestSupport
import Timekeeping

/// Holiday calendars as others write them, read as days off: Thunderbird's all-day events, a
/// multi-day range (DTEND, DURATION), a yearly rule with an exception and a moved instance, a
/// directory of one-event files; and what a calendar must not do (an endless rule, a negative
/// length, a timed event) said and bounded. (Calendars python's `holidays` makes: HolidaysFromOthersTests.)
@Suite struct HolidayCalendarTests {
    static let window = HolidayCalendar.window(around: Instant(seconds: 1_795_000_000))  // November 2026

    static func day(_ text: String) -> Int64 {
        let d = text.split(separator: "-").map { Int($0)! }
        return daysFromCivil(d[0], d[1], d[2])
    }

    static func read(_ lines: [String]) -> HolidayCalendar {
        HolidayCalendar(reading: Array((lines.joined(separator: "\r\n") + "\r\n").utf8), window: window)
    }

    static func calendar(_ events: [[String]]) -> [String] {
        ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN"] + events.flatMap { ["BEGIN:VEVENT"] + $0 + ["END:VEVENT"] } + ["END:VCALENDAR"]
    }

    /// As Thunderbird writes an all-day event (and Evolution much the same): VALUE=DATE, DTEND the
    /// day after, TRANSP, its own X- properties, a VTIMEZONE beside it that a date does not use.
    @Test func thunderbirdsAllDayEvent() {
        let read = Self.read([
            "BEGIN:VCALENDAR", "PRODID:-//Mozilla.org/NONSGML Mozilla Calendar V1.1//EN", "VERSION:2.0",
            "BEGIN:VTIMEZONE", "TZID:Europe/Berlin", "X-LIC-LOCATION:Europe/Berlin", "BEGIN:STANDARD", "TZOFFSETFROM:+0200",
            "TZOFFSETTO:+0100", "TZNAME:CET", "DTSTART:19701025T030000", "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10", "END:STANDARD",
            "END:VTIMEZONE",
            "BEGIN:VEVENT", "CREATED:20261120T101010Z", "LAST-MODIFIED:20261120T101032Z", "DTSTAMP:20261120T101032Z",
            "UID:0b7c6a3e-5f1d-4c52-9a4b-1d2e3f4a5b6c", "SUMMARY:Betriebsausflug", "DTSTART;VALUE=DATE:20270702",
            "DTEND;VALUE=DATE:20270703", "TRANSP:TRANSPARENT", "X-MOZ-GENERATION:1", "END:VEVENT",
            "END:VCALENDAR",
        ])
        #expect(read.days == [Self.day("2027-07-02"): "Betriebsausflug"])
        #expect(read.problems.isEmpty, "\(read.problems)")
    }

    @Test func rangesByEndAndByDuration() {
        let read = Self.read(Self.calendar([
            ["UID:a", "SUMMARY:Werksferien", "DTSTART;VALUE=DATE:20270802", "DTEND;VALUE=DATE:20270805"],
            ["UID:b", "SUMMARY:Between the years", "DTSTART;VALUE=DATE:20261228", "DURATION:P3D"],
            // Eight digits without VALUE=DATE, as some programs write it: still a date.
            ["UID:c", "SUMMARY:Brückentag", "DTSTART:20270514"],
        ]))
        #expect(read.days == [
            Self.day("2027-08-02"): "Werksferien", Self.day("2027-08-03"): "Werksferien", Self.day("2027-08-04"): "Werksferien",
            Self.day("2026-12-28"): "Between the years", Self.day("2026-12-29"): "Between the years", Self.day("2026-12-30"): "Between the years",
            Self.day("2027-05-14"): "Brückentag",
        ])
    }

    /// A yearly holiday, its instance of one year moved (RECURRENCE-ID), another year's left out
    /// (EXDATE), one that repeats on a weekday rule, a cancelled one.
    @Test func repeatingHolidays() {
        let read = Self.read(Self.calendar([
            ["UID:xmas", "SUMMARY:Christmas Day", "DTSTART;VALUE=DATE:20001225", "DTEND;VALUE=DATE:20001226", "RRULE:FREQ=YEARLY",
             "EXDATE;VALUE=DATE:20281225"],
            ["UID:xmas", "RECURRENCE-ID;VALUE=DATE:20271225", "SUMMARY:Christmas Day (observed)", "DTSTART;VALUE=DATE:20271227"],
            ["UID:thanks", "SUMMARY:Thanksgiving", "DTSTART;VALUE=DATE:20261126", "RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=4TH"],
            ["UID:gone", "SUMMARY:Cancelled", "STATUS:CANCELLED", "DTSTART;VALUE=DATE:20270301"],
        ]))
        #expect(read.days[Self.day("2026-12-25")] == "Christmas Day")
        #expect(read.days[Self.day("2027-12-25")] == nil)
        #expect(read.days[Self.day("2027-12-27")] == "Christmas Day (observed)")
        #expect(read.days[Self.day("2028-12-25")] == nil)
        #expect(read.days[Self.day("2029-12-25")] == "Christmas Day")
        // The window: a year back, ten ahead.
        #expect(read.days[Self.day("2024-12-25")] == nil)
        #expect(read.days[Self.day("2035-12-25")] == "Christmas Day")
        #expect(read.days[Self.day("2027-11-25")] == "Thanksgiving")
        #expect(read.days[Self.day("2028-11-23")] == "Thanksgiving")
        #expect(read.days[Self.day("2027-03-01")] == nil)
        #expect(read.problems.isEmpty, "\(read.problems)")
    }

    /// Two calendars name one day: both names, once each.
    @Test func oneDayInTwoCalendars() {
        let a = Self.read(Self.calendar([["UID:1", "SUMMARY:Tag der Deutschen Einheit", "DTSTART;VALUE=DATE:20271003"]]))
        let b = Self.read(Self.calendar([["UID:2", "SUMMARY:School holiday", "DTSTART;VALUE=DATE:20271003"],
                                         ["UID:3", "SUMMARY:Tag der Deutschen Einheit", "DTSTART;VALUE=DATE:20271003"]]))
        #expect(DaysOff.merging([a.days, b.days])[Self.day("2027-10-03")] == "Tag der Deutschen Einheit · School holiday")
    }

    /// Someone else wrote it: what is wrong is said, bounded and left out; the rest is read.
    @Test func whatACalendarMustNotDo() {
        let read = Self.read(Self.calendar([
            ["UID:forever", "SUMMARY:Every day", "DTSTART;VALUE=DATE:19700101", "RRULE:FREQ=DAILY"],
            ["UID:backwards", "SUMMARY:Backwards", "DTSTART;VALUE=DATE:20270110", "DTEND;VALUE=DATE:20270101"],
            ["UID:long", "SUMMARY:Sabbatical", "DTSTART;VALUE=DATE:20270101", "DURATION:P400D"],
            ["UID:timed", "SUMMARY:Meeting", "DTSTART:20270105T090000Z", "DTEND:20270105T100000Z"],
            ["UID:nodate", "SUMMARY:Nothing"],
            ["UID:baddate", "SUMMARY:Bad", "DTSTART;VALUE=DATE:20271340"],
            ["UID:ok", "SUMMARY:Epiphany", "DTSTART;VALUE=DATE:20270106"],
        ]))
        #expect(read.days[Self.day("2027-01-06")]?.contains("Epiphany") == true)
        // The endless rule gives at most its bound, in the window.
        #expect(read.days.count <= HolidayCalendar.maximumDaysPerEvent + 1)
        #expect(read.days.keys.allSatisfy { Self.window.contains($0) })
        let said = read.problems.map(\.message)
        #expect(said.contains { $0.contains("'Every day' repeats more than \(HolidayCalendar.maximumDaysPerEvent) times") }, "\(said)")
        #expect(said.contains { $0.contains("'Backwards' lasts -9 days") }, "\(said)")
        #expect(said.contains { $0.contains("'Sabbatical' lasts 400 days") }, "\(said)")
        #expect(said.contains("1 event with a time of day left out: a day off is an all-day event"), "\(said)")
        #expect(said.contains("VEVENT without DTSTART: no day to take off"), "\(said)")
        #expect(said.contains { $0.contains("DTSTART 20271340: not a date") }, "\(said)")
        // Not iCalendar at all.
        let garbage = HolidayCalendar(reading: Array("hello\u{0}world".utf8), window: Self.window)
        #expect(garbage.days.isEmpty)
        #expect(!garbage.problems.isEmpty)
    }

    /// vdirsyncer's layout: a directory of one-event files, as a subscribed holiday calendar is
    /// synced; hidden files and others are passed over; a missing path is an error.
    @Test func aDirectoryOfEvents() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("holidays-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, summary, date) in [("a.ics", "Neujahr", "20270101"), ("b.ics", "Karfreitag", "20270326"), (".c.ics", "Hidden", "20270327"),
                                      ("d.txt", "Not ics", "20270328")] {
            try Self.calendar([["UID:\(name)", "SUMMARY:\(summary)", "DTSTART;VALUE=DATE:\(date)"]]).joined(separator: "\r\n")
                .write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let (days, notes) = try HolidayCalendar.load(path: directory.path, window: Self.window)
        #expect(days == [Self.day("2027-01-01"): "Neujahr", Self.day("2027-03-26"): "Karfreitag"])
        #expect(notes.isEmpty)
        #expect(throws: (any Error).self) { try HolidayCalendar.load(path: directory.path + "/missing.ics", window: Self.window) }
    }
}

/// Public holidays as python's `holidays` package knows them (Debian's python3-holidays), for
/// several countries, written as .ics by python's `icalendar`, read by chime: the same days, the
/// same names.
@Suite struct HolidaysFromOthersTests {
    static let script = """
        import sys, json, datetime, holidays, icalendar
        out = sys.argv[1]
        answer = {}
        for code, country in [("DE", holidays.Germany), ("US", holidays.UnitedStates), ("GB", holidays.UnitedKingdom),
                              ("FR", holidays.France), ("JP", holidays.Japan)]:
            days = country(years=[2026, 2027, 2028])
            calendar = icalendar.Calendar()
            calendar.add("prodid", "-//chime tests//holidays//EN")
            calendar.add("version", "2.0")
            for date, name in sorted(days.items()):
                event = icalendar.Event()
                event.add("uid", "%s-%s@holidays" % (code, date.isoformat()))
                event.add("summary", name)
                event.add("dtstart", date)
                event.add("dtend", date + datetime.timedelta(days=1))
                event.add("dtstamp", datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc))
                calendar.add_component(event)
            with open("%s/%s.ics" % (out, code), "wb") as f:
                f.write(calendar.to_ical())
            answer[code] = {date.isoformat(): name for date, name in days.items()}
        print(json.dumps(answer))
        """

    @Test func severalCountriesPublicHolidays() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("holidays-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("make.py").path
        try Self.script.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try runProgram("/usr/bin/python3", [path, directory.path].map { Array($0.utf8) }, environment: ProcessInfo.processInfo.environment)
        try #require(result.status == 0, "\(result.stderr)")
        let expected = try JSONDecoder().decode([String: [String: String]].self, from: Data(result.stdout.utf8))
        #expect(expected.keys.sorted() == ["DE", "FR", "GB", "JP", "US"])
        for (code, days) in expected {
            #expect(days.count >= 20, "\(code): \(days.count) holidays in three years")
            let (read, notes) = try HolidayCalendar.load(path: directory.appendingPathComponent("\(code).ics").path, window: HolidayCalendarTests.window)
            #expect(notes.isEmpty, "\(code): \(notes)")
            let want = Dictionary(uniqueKeysWithValues: days.map { (HolidayCalendarTests.day($0.key), $0.value) })
            #expect(read == want, "\(code): \(Set(read.keys).symmetricDifference(want.keys).sorted().map { civilFromDays($0) })")
        }
        // A weekday alarm at 07:00 in Berlin with Germany's holidays, skipping: Easter Monday 2027
        // (29 March) and German Unity Day are not rung; moved before, Easter Monday lands on the
        // Thursday before Good Friday.
        let (germany, _) = try HolidayCalendar.load(path: directory.appendingPathComponent("DE.ics").path, window: HolidayCalendarTests.window)
        let off = DaysOff(holidays: germany)
        var trigger = try Trigger(parsing: "07:00 mon-fri", timeZone: "Europe/Berlin", anchor: Instant(seconds: 1_795_000_000))
        trigger.onHoliday = .before
        let berlin = try Zone.named("Europe/Berlin")
        let thursday = trigger.nextFire(after: Instant(seconds: 1_805_000_000), off: off).map { berlin.civil(at: $0.seconds) }  // 14 March 2027
        #expect(thursday.map { "\($0)" }?.hasPrefix("2027-03-15") == true)
        var t = Instant(seconds: 1_805_000_000)
        var rung: [String] = []
        while let next = trigger.nextFire(after: t, off: off), next.seconds < 1_807_000_000 {
            rung.append(String("\(berlin.civil(at: next.seconds))".prefix(10)))
            t = next
        }
        #expect(rung.contains("2027-03-25") && !rung.contains("2027-03-26") && !rung.contains("2027-03-29"), "\(rung)")
        #expect(rung.filter { $0 == "2027-03-25" }.count == 1)
    }
}
