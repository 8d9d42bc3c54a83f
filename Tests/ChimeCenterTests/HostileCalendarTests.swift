import ChimeCalendars
import ChimeCenter
import Foundation
import ICalendar
import Testing
import Timekeeping

/// Calendars as an attacker writes them (a shared calendar, an invitation, `curl … | chime import -`):
/// what cannot be read is a problem at its line, never a crash, and never more work than its size.
@Suite struct HostileCalendarTests {
    static let now = Instant(seconds: 1_795_000_000)

    static func event(_ lines: [String]) -> String {
        (["BEGIN:VCALENDAR", "BEGIN:VEVENT", "UID:u", "DTSTART:20261201T090000Z", "SUMMARY:Stand-up"] + lines
            + ["END:VEVENT", "END:VCALENDAR"]).joined(separator: "\r\n") + "\r\n"
    }

    /// RFC 5545's durations, and nothing else: each unit once, in order, weeks alone, at most 9 digits
    /// a number and about a hundred years in all.
    @Test(arguments: [
        ("-PT15M", -900), ("P1W", 604_800), ("P1DT2H", 93_600), ("PT1H30M", 5400), ("+PT0S", 0),
        ("-P0DT0H15M0S", -900), ("p2d", 172_800), ("PT999999999S", 999_999_999),
    ] as [(String, Int64)])
    func durationsAsWritten(_ text: String, _ seconds: Int64) {
        #expect(Values.duration(text) == seconds)
    }

    @Test(arguments: [
        "P", "PT", "P1DT", "P1H", "PT15M1H", "P1W2D", "P2D1W", "PT1H1H", "P1D1D", "-P", "P-1D", "P1.5D",
        "P9999999999W",  // ten digits
        "P999999999W",  // nine, but millions of years
        "-P" + String(repeating: "999999999W", count: 15_300),  // the 153 KB TRIGGER that crash-looped the daemon
    ])
    func notDurations(_ text: String) {
        #expect(Values.duration(text) == nil)
    }

    /// The 153 KB TRIGGER overflowed `total += n * scale` and killed the daemon reading a followed
    /// calendar, at every start. Now it is one problem at its line, and the file's other events stay.
    @Test func anOverflowingTriggerIsAProblemAtItsLine() {
        let text = Self.event(["BEGIN:VALARM", "TRIGGER:-P" + String(repeating: "999999999W", count: 15_300), "END:VALARM"])
        let read = CalendarImport(reading: text, anchor: Self.now)
        #expect(read.alarms.isEmpty)
        #expect(read.problems.map(\.line) == [7])
        let repeated = Self.event(["BEGIN:VALARM", "TRIGGER:-PT5M", "REPEAT:3", "DURATION:P999999999W", "END:VALARM"])
        #expect(CalendarImport(reading: repeated, anchor: Self.now).problems.map(\.description)
            == ["6: REPEAT needs a count and a positive DURATION"])
    }

    /// An event's rule is held to the rule's size before it is read, as every other door holds it.
    @Test func anOversizedRecurrenceIsAProblem() {
        let rule = "RRULE:FREQ=HOURLY;INTERVAL=2;BYHOUR=" + Array(repeating: "0", count: 9000).joined(separator: ",")
        let read = CalendarImport(reading: Self.event([rule, "BEGIN:VALARM", "TRIGGER:-PT5M", "END:VALARM"]), anchor: Self.now)
        #expect(read.alarms.isEmpty)
        #expect(read.problems.first?.description.contains("a rule has at most \(Rule.maximumBytes)") == true,
                "\(read.problems)")
    }

    /// Export then import gives the same alarm: an elapsed-time rule (exported with a UTC DTSTART)
    /// keeps its left-out days in the alarm's own zone, not UTC's (1 January in Berlin starts at
    /// 23:00 UTC on 31 December).
    @Test func anIntervalsExceptionsComeBackInItsZone() throws {
        let now = Instant(seconds: 1_798_755_000)  // 2026-12-31 22:10 UTC
        var trigger = Trigger.timeInterval(.seconds(1500), repeats: true, anchor: now)
        trigger.timeZone = "Europe/Berlin"
        trigger.exceptions = [try ExceptDate(parsing: "01-01")]
        let original = NotificationRequest(identifier: "pomodoro", content: NotificationContent(title: "Break"), trigger: trigger)
        let read = CalendarImport(reading: CalendarExport.calendar([original], now: now), anchor: now, trust: .ownFile)
        #expect(read.problems.isEmpty, "\(read.problems)")
        let again = try #require(try read.alarms.first?.draft.build(now: now))
        var (a, b) = (now, now)
        var times: [Instant] = []
        for _ in 0..<8 {
            let (x, y) = (original.trigger.nextFire(after: a), again.trigger.nextFire(after: b))
            #expect(x == y)
            guard let x, let y else { break }
            times.append(x)
            (a, b) = (x, y)
        }
        // 22:35 UTC, then nothing until 2 January in Berlin (23:00 UTC on the 1st).
        #expect(times.prefix(1).allSatisfy { $0.seconds < 1_798_758_000 })
        #expect(times.dropFirst(1).first.map { $0.seconds >= 1_798_844_400 } == true, "\(times)")
    }

    /// A rule is kept as the text it prints, so what is accepted must read back as itself: "16:35 Z"
    /// was stored as a rule that did not parse, quarantined when due, and never rang.
    @Test(arguments: ["16:35 Z", "16:35 z", "16:35 UTC", "16:35 mon-fri Europe/Berlin", "Mon..Fri *-*-* 16:35:00 America/New_York"])
    func acceptedRulesReadBack(_ text: String) throws {
        let trigger = try Trigger(parsing: text, anchor: Self.now)
        try trigger.validate()
        guard case .calendar(let expression) = trigger.rule else {
            Issue.record("\(text) is not a calendar rule")
            return
        }
        #expect(try CalendarExpression(parsing: expression.description) == expression, "\(expression.description)")
    }

    /// A stranger's invitation with chime's settings in it: in someone else's calendar they are left
    /// out (with a note), so it cannot ring every second at full volume, unmuted, take the alarm
    /// `wake`, or play any file; the user's own calendar may set them, but insist only a file the
    /// user imports as theirs.
    static let invitation = event([
        "X-CHIME-ID:wake", "X-CHIME-RULE:every 1s", "X-CHIME-INSIST:TRUE", "X-CHIME-RING:3600",
        "X-CHIME-URGENCY:low", "X-CHIME-SOUND:/home/victim/.ssh/id_rsa", "X-CHIME-VOLUME:100",
        "BEGIN:VALARM", "ACTION:AUDIO", "TRIGGER:-PT5M", "END:VALARM",
    ])

    @Test func someoneElsesCalendarSetsOnlyWhatItsEventsMean() throws {
        let read = CalendarImport(reading: Self.invitation, anchor: Self.now)
        #expect(read.problems.isEmpty)
        #expect(read.notes.map(\.description) == ["2: chime's settings (X-CHIME-*) are taken only from a calendar marked as your own; left out"])
        let alarm = try #require(read.alarms.first)
        #expect(!alarm.named)
        let request = try alarm.draft.build(now: Self.now)
        #expect(request.identifier == "ics-u")
        #expect(request.summaryRule == "DTSTART:20261201T090000Z")
        #expect(request.trigger.offsets == [.seconds(-300)])
        #expect(!request.content.insist && request.content.ring != .seconds(3600) && request.content.volume == nil)
        #expect(request.content.sound == .default)
    }

    @Test func theUsersOwnCalendarSetsChimesSettingsButNeverInsist() throws {
        let calendar = CalendarImport(reading: Self.invitation, anchor: Self.now, trust: .ownCalendar)
        #expect(calendar.notes.isEmpty)
        let alarm = try #require(calendar.alarms.first)
        #expect(alarm.named)
        let request = try alarm.draft.build(now: Self.now)
        #expect(request.identifier == "wake" && request.summaryRule == "every 1s")
        #expect(request.content.ring == .seconds(3600) && request.content.volume == 100)
        #expect(!request.content.insist, "insist only from a file imported as the user's own")
        let file = try #require(CalendarImport(reading: Self.invitation, anchor: Self.now, trust: .ownFile).alarms.first)
        #expect(try file.draft.build(now: Self.now).content.insist)
    }

    /// An AUDIO alarm's attachment plays from the sound folders only, in someone else's calendar.
    @Test(arguments: [
        ("file:///usr/share/sounds/freedesktop/stereo/bell.oga", true),
        ("/usr/share/sounds/alarm.wav", true),
        ("/usr/share/sounds/../../../etc/shadow", false),
        ("/home/victim/.ssh/id_rsa", false),
        ("file:///dev/zero", false),
    ])
    func attachedSoundsComeFromTheSoundFolders(_ attach: String, _ kept: Bool) throws {
        let text = Self.event(["BEGIN:VALARM", "ACTION:AUDIO", "TRIGGER:-PT5M", "ATTACH:" + attach, "END:VALARM"])
        let read = CalendarImport(reading: text, anchor: Self.now)
        let request = try #require(try read.alarms.first?.draft.build(now: Self.now))
        if kept {
            #expect(request.content.sound == .file(attach.hasPrefix("file://") ? String(attach.dropFirst(7)) : attach))
            #expect(read.notes.isEmpty)
        } else {
            #expect(request.content.sound == .default)
            #expect(read.notes.first?.message.contains("is outside the sound folders; the default sound rings") == true)
        }
    }
}
