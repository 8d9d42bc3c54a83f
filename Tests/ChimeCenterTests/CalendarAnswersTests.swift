import ChimeCalendars
import ChimeCenter
import Foundation
import ICalendar
import Testing
import Timekeeping

/// Answers as the calendar world keeps them (RFC 9074's ACKNOWLEDGED and snooze alarms, as Apple's
/// devices write them; Thunderbird's X-MOZ-LASTACK and X-MOZ-SNOOZE-TIME), read and written: an
/// answer only moves forward, a snooze counts while it is later than the answer, every line chime
/// does not touch is written back byte for byte, and an alarm plans past what was answered.
/// (Written by python's icalendar and carried by a CalDAV server: OneAlarmEveryMachineTests.)
@Suite struct CalendarAnswersTests {
    /// 2026-11-27 07:00:00 UTC, and times after it.
    static let seven = Instant(seconds: 1_795_762_800)
    static func at(_ text: String) -> Instant { CalendarAnswers.utc(text)! }

    static func file(_ event: [String], newline: String = "\r\n") -> String {
        (["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", "BEGIN:VEVENT"] + event + ["END:VEVENT", "END:VCALENDAR"])
            .joined(separator: newline) + newline
    }

    static func item(_ text: String) throws -> Component {
        try #require(try Parser.parse(text).first?.children("VEVENT").first)
    }

    /// As an Apple device writes a snooze: the alarm acknowledged when snoozed, a snooze alarm related
    /// to it by its UID at an absolute time.
    @Test func applesAcknowledgmentAndSnoozeAreRead() throws {
        let text = Self.file([
            "UID:E1", "DTSTART:20261127T070000Z", "SUMMARY:Standup",
            "BEGIN:VALARM", "UID:A1", "ACTION:DISPLAY", "TRIGGER:PT0S", "DESCRIPTION:Standup", "ACKNOWLEDGED:20261127T070012Z", "END:VALARM",
            "BEGIN:VALARM", "UID:A2", "RELATED-TO;RELTYPE=SNOOZE:A1", "ACTION:DISPLAY", "TRIGGER;VALUE=DATE-TIME:20261127T070912Z",
            "DESCRIPTION:Standup", "END:VALARM",
        ])
        let read = CalendarAnswers.read(try Self.item(text))
        #expect(read.acknowledged == Self.at("20261127T070012Z"))
        #expect(read.snoozed == Self.at("20261127T070912Z"))
        // The snooze is an answer, not an alarm of its own; the event's one alarm carries both.
        let imported = CalendarImport(reading: text, anchor: Self.seven - .seconds(3600), trust: .ownCalendar)
        #expect(imported.problems.isEmpty, "\(imported.problems)")
        #expect(imported.alarms.count == 1)
        let info = try #require(imported.alarms.first?.draft.userInfo)
        #expect(info[CalendarAnswers.acknowledgedKey] == "\(Self.at("20261127T070012Z").seconds)")
        #expect(info[CalendarAnswers.snoozedKey] == "\(Self.at("20261127T070912Z").seconds)")
        // A snooze answered at its time (ACKNOWLEDGED on the snooze alarm) is over.
        let over = text.replacingOccurrences("TRIGGER;VALUE=DATE-TIME:20261127T070912Z", "TRIGGER;VALUE=DATE-TIME:20261127T070912Z\r\nACKNOWLEDGED:20261127T070915Z")
        #expect(CalendarAnswers.read(try Self.item(over)).snoozed == nil)
    }

    /// As Thunderbird writes them: X-MOZ-LASTACK on the event, a repeating event's snooze named by its
    /// occurrence (microseconds), a single event's without.
    @Test func thunderbirdsLastAckAndSnoozeTimesAreRead() throws {
        let repeating = Self.file([
            "UID:T1", "DTSTART:20261127T070000Z", "RRULE:FREQ=DAILY", "SUMMARY:Pills", "X-MOZ-LASTACK:20261127T070003Z",
            "X-MOZ-SNOOZE-TIME-1795762800000000:20261127T071003Z",
            "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER;VALUE=DURATION:-PT0S", "DESCRIPTION:Default Mozilla Description", "END:VALARM",
        ])
        let read = CalendarAnswers.read(try Self.item(repeating))
        #expect(read.acknowledged == Self.at("20261127T070003Z"))
        #expect(read.snoozed == Self.at("20261127T071003Z"))
        // A snooze time at or before the last acknowledgment was answered already.
        let old = repeating.replacingOccurrences("X-MOZ-LASTACK:20261127T070003Z", "X-MOZ-LASTACK:20261127T071500Z")
        #expect(CalendarAnswers.read(try Self.item(old)).snoozed == nil)
        let single = Self.file(["UID:T2", "DTSTART:20261127T070000Z", "X-MOZ-SNOOZE-TIME:20261127T073000Z",
                                "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:PT0S", "END:VALARM"])
        let singleRead = CalendarAnswers.read(try Self.item(single))
        #expect(singleRead.acknowledged == nil && singleRead.snoozed == Self.at("20261127T073000Z"))
    }

    /// Someone else's calendar: their answers are not the person's (a shared calendar's owner
    /// acknowledging never silences the person's alarm).
    @Test func answersInSomeoneElsesCalendarAreNotTaken() {
        let text = Self.file(["UID:S1", "DTSTART:20261127T070000Z", "X-MOZ-LASTACK:20261127T070005Z",
                              "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:PT0S", "ACKNOWLEDGED:20261127T070005Z", "END:VALARM"])
        let imported = CalendarImport(reading: text, anchor: Self.seven - .seconds(3600), trust: .others)
        #expect(imported.alarms.first?.draft.userInfo?[CalendarAnswers.acknowledgedKey] == nil)
    }

    /// Written: ACKNOWLEDGED on every alarm, X-MOZ-LASTACK on the event; a snooze alarm related to the
    /// first alarm (given a UID, as RFC 9074 needs) and Thunderbird's snooze time; every other line
    /// as it was, folds, LF line ends and characters split by a fold included.
    @Test func answersAreWrittenAndEverythingElseIsKept() throws {
        let lines = [
            "UID:W1", "DTSTART:20261127T070000Z", "RRULE:FREQ=DAILY",
            "SUMMARY:Fr\u{00FC}hst\u{00FC}ck mit einem sehr langen Titel, der gefaltet werden muss, damit er passt, und no",
            " ch mehr \u{00FC}", "X-OTHER;X-PARAM=\"a:b\":kept as it is",
            "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:PT0S", "DESCRIPTION:x", "END:VALARM",
            "BEGIN:VALARM", "ACTION:AUDIO", "TRIGGER:PT0S", "END:VALARM",
        ]
        for newline in ["\r\n", "\n"] {
            let text = Self.file(lines, newline: newline)
            let answeredAt = Self.at("20261127T070004Z")
            let snoozeUntil = Self.at("20261127T071004Z")
            let written = try #require(CalendarAnswers.answering(text, uid: "W1", at: answeredAt, snoozeUntil: snoozeUntil, occurrence: Self.seven))
            let read = CalendarAnswers.read(try Self.item(written))
            #expect(read.acknowledged == answeredAt)
            #expect(read.snoozed == snoozeUntil)
            // What chime added, taken out again, leaves the file as it was.
            let added = ["ACKNOWLEDGED:", "X-MOZ-LASTACK:", "X-MOZ-SNOOZE-TIME-", "UID:W1-alarm-1"]
            var kept = written.components(separatedBy: newline).filter { line in !added.contains { line.hasPrefix($0) } }
            // The snooze alarm (its UID line went with the lines above), BEGIN to END.
            if let related = kept.firstIndex(where: { $0.hasPrefix("RELATED-TO") }), let end = kept[related...].firstIndex(of: "END:VALARM") {
                kept.removeSubrange((related - 1)...end)
            }
            #expect(kept.joined(separator: newline) == text, "\(written)")
            #expect(!written.contains(newline == "\n" ? "\r" : "\u{0}"))
            #expect(written.contains("X-MOZ-SNOOZE-TIME-1795762800000000:20261127T071004Z"))
            let item = try Self.item(written)
            let snooze = try #require(item.children("VALARM").first { CalendarAnswers.isSnooze($0) })
            #expect(snooze.first("RELATED-TO")?.value == "W1-alarm-1")
            #expect(item.children("VALARM").first?.first("UID")?.value == "W1-alarm-1")
            #expect(snooze.first("TRIGGER")?.parameters["VALUE"] == "DATE-TIME")

            // Stopped later: the snooze goes, the acknowledgment moves on.
            let stopped = try #require(CalendarAnswers.answering(written, uid: "W1", at: Self.at("20261127T071010Z")))
            let stoppedRead = CalendarAnswers.read(try Self.item(stopped))
            #expect(stoppedRead.acknowledged == Self.at("20261127T071010Z") && stoppedRead.snoozed == nil)
            #expect(!stopped.contains("RELATED-TO") && !stopped.contains("X-MOZ-SNOOZE-TIME"))
            #expect(stopped.components(separatedBy: "ACKNOWLEDGED:").count == 3, "one on each alarm: \(stopped)")
        }
    }

    /// An answer never goes back: written with an earlier time (a machine whose clock is behind, a
    /// late write), the later acknowledgment stays.
    @Test func anAcknowledgmentOnlyMovesForward() throws {
        let text = Self.file(["UID:F1", "DTSTART:20261127T070000Z", "X-MOZ-LASTACK:20261127T080000Z",
                              "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:PT0S", "ACKNOWLEDGED:20261127T080000Z", "END:VALARM"])
        let written = try #require(CalendarAnswers.answering(text, uid: "F1", at: Self.at("20261127T070005Z")))
        #expect(CalendarAnswers.read(try Self.item(written)).acknowledged == Self.at("20261127T080000Z"))
        // Another UID: nothing to answer.
        #expect(CalendarAnswers.answering(text, uid: "nope", at: Self.seven) == nil)
    }

    /// An alarm plans past what was answered and rings at a snooze made elsewhere.
    @Test func anAlarmPlansPastItsAnswers() throws {
        let text = Self.file([
            "UID:P1", "DTSTART:20261127T070000Z", "RRULE:FREQ=DAILY", "SUMMARY:Pills",
            "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:PT0S", "END:VALARM",
        ])
        func plan(_ text: String, after: Instant) throws -> Instant? {
            let imported = CalendarImport(reading: text, anchor: Self.seven - .seconds(86_400), trust: .ownCalendar)
            let request = try #require(imported.alarms.first).draft.build(now: Self.seven - .seconds(86_400))
            return request.nextFire(after: after, off: .none)
        }
        let before = Self.seven - .seconds(60)
        #expect(try plan(text, after: before) == Self.seven)
        // Acknowledged today at 07:00:05: tomorrow's is next, even planned from before today's.
        let acknowledged = try #require(CalendarAnswers.answering(text, uid: "P1", at: Self.at("20261127T070005Z")))
        #expect(try plan(acknowledged, after: before) == Self.seven + .seconds(86_400))
        // Snoozed to 07:10:05: that comes first, then tomorrow's.
        let snoozed = try #require(CalendarAnswers.answering(text, uid: "P1", at: Self.at("20261127T070005Z"),
                                                              snoozeUntil: Self.at("20261127T071005Z"), occurrence: Self.seven))
        #expect(try plan(snoozed, after: before) == Self.at("20261127T071005Z"))
        #expect(try plan(snoozed, after: Self.at("20261127T071005Z")) == Self.seven + .seconds(86_400))
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        components(separatedBy: target).joined(separator: replacement)
    }
}
