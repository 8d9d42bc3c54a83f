import Foundation
import Testing
@testable import Timekeeping

/// Rules as an attacker writes them (a D-Bus caller, an imported .ics, a colleague's shared
/// calendar): each is refused, or read with its work bounded, before anything is expanded. The
/// promises are checked by what the reader keeps and answers, not by a clock.
@Suite struct HostileRuleTests {
    static let start = "DTSTART:20261101T010000Z"

    /// A BY part's repeats are kept once: 800 zeros in each of BYHOUR, BYMINUTE and BYSECOND cost
    /// one time of day, not 512 million (`chime next` took 3.7 s, a 16 KB `Add` held the daemon 125 s).
    @Test func repeatedByValuesAreKeptOnce() throws {
        let zeros = Array(repeating: "0", count: 800).joined(separator: ",")
        let text = "\(Self.start) RRULE:FREQ=HOURLY;INTERVAL=2;BYHOUR=\(zeros);BYMINUTE=\(zeros);BYSECOND=\(zeros)"
        let recurrence = try Recurrence(parsing: text)
        let rule = try #require(recurrence.expansions.first?.rule)
        #expect(rule.byHour == [0] && rule.byMinute == [0] && rule.bySecond == [0])
        // From 01:00 in steps of two hours, 00:00 is never reached: known without searching.
        #expect(recurrence.next(after: 1_793_500_000, floatingZone: .utc) == nil)
        #expect(recurrence.expansions.first?.never == true)
        // Repeated weekdays likewise, in the order first given.
        let days = try RecurrenceRule(parsing: "FREQ=MONTHLY;BYDAY=" + Array(repeating: "MO,-1FR", count: 300).joined(separator: ","))
        #expect(days.byDay.count == 2)
        #expect(days.byDay.map(\.ordinal) == [nil, -1])
        // Values in any order and repeated: the set, sorted.
        #expect(try RecurrenceRule(parsing: "FREQ=DAILY;BYHOUR=9,7,9,7,8").byHour == [7, 8, 9])
    }

    /// A rule longer than `Rule.maximumBytes` is refused before it is parsed, at every entry.
    @Test func anOversizedRuleIsRefusedBeforeItIsRead() {
        let long = Self.start + " RRULE:FREQ=DAILY;BYHOUR=" + Array(repeating: "1", count: 9000).joined(separator: ",")
        #expect(long.utf8.count > Rule.maximumBytes)
        for attempt in [{ _ = try Rule(parsing: long) }, { _ = try Recurrence(parsing: long) },
                        { _ = try RecurrenceRule(parsing: String(long.dropFirst(Self.start.count + 7))) },
                        { _ = try CalendarExpression(parsing: String(repeating: "*", count: Rule.maximumBytes + 1)) }] as [() throws -> Void] {
            do {
                try attempt()
                Issue.record("an oversized rule was read")
            } catch let error as RuleError {
                #expect(error.message.contains("a rule has at most \(Rule.maximumBytes)"), "\(error.message)")
            } catch {
                Issue.record("\(error)")
            }
        }
        let lines = [ContentLine(name: "DTSTART", value: "20261101T010000Z", line: 1),
                     ContentLine(name: "EXDATE", value: Array(repeating: "20261102T010000Z", count: 1100).joined(separator: ","), line: 2)]
        #expect(throws: RuleError.self) { try Recurrence(lines: lines) }
    }

    /// A leap second (BYSECOND=60, which RFC 5545 allows) is second 59: a SECONDLY rule asking for it
    /// fires once a minute instead of searching to 2199 (which also stalled every rule beside it).
    @Test func aLeapSecondIsTheMinutesLastSecond() throws {
        let recurrence = try Recurrence(parsing: "\(Self.start) RRULE:FREQ=SECONDLY;BYSECOND=60")
        let after: Int64 = 1_793_500_000  // 2026-11-01 02:26:40 UTC
        let next = try #require(recurrence.next(after: after, floatingZone: .utc))
        #expect(next % 60 == 59 && next > after && next - after <= 60)
        let minutely = try Recurrence(parsing: "\(Self.start) RRULE:FREQ=MINUTELY;BYSECOND=60")
        #expect(minutely.next(after: after, floatingZone: .utc).map { $0 % 60 } == 59)
    }

    /// A COUNT rule's last occurrence is found once, at its second search (the first walks from
    /// DTSTART only as far as it needs): from then on the next one is searched from the time asked
    /// about, so a million-occurrence rule set 11 days ago answers as a rule without COUNT does
    /// (`Add` took 13.2 s for a request counting 100, each search walking from DTSTART).
    @Test func aCountRuleFindsItsEndOnce() throws {
        let recurrence = try Recurrence(parsing: "DTSTART:20261115T000000Z RRULE:FREQ=SECONDLY;COUNT=1000000")
        let dtstart: Int64 = 1_794_700_800  // 2026-11-15 00:00:00 UTC
        #expect(recurrence.next(after: dtstart, floatingZone: .utc) == dtstart + 1)
        #expect(recurrence.expansions.first?.countEnd == dtstart + 999_999)
        let now = dtstart + 11 * 86_400
        #expect(recurrence.next(after: now, floatingZone: .utc) == now + 1)
        #expect(recurrence.next(after: dtstart + 999_998, floatingZone: .utc) == dtstart + 999_999)
        #expect(recurrence.next(after: dtstart + 999_999, floatingZone: .utc) == nil)
        // Counted in local time, the same in any zone: the millionth is 999,999 s of wall clock on.
        let berlin = try Zone.named("Europe/Berlin")
        let floating = try Recurrence(parsing: "DTSTART:20261115T000000 RRULE:FREQ=HOURLY;COUNT=3")
        #expect(floating.occurrences(through: Instant.latest.seconds, floatingZone: berlin).count == 3)
        // 00:00, 01:00 and 02:00 in Berlin: 23:00, 00:00 and 01:00 UTC.
        #expect(floating.next(after: dtstart, floatingZone: berlin) == dtstart + 3600)
        #expect(floating.next(after: dtstart + 3600, floatingZone: berlin) == nil)
        // Fewer occurrences than COUNT before 2199: all of them, no end.
        let rare = try Recurrence(parsing: "DTSTART:21980101T000000Z RRULE:FREQ=YEARLY;COUNT=50")
        #expect(rare.occurrences(through: Instant.latest.seconds, floatingZone: .utc).count == 2)
        #expect(rare.expansions.first?.countEnd == Int64.max)
    }

    /// The TZ variable is anyone's text: numbers out of range are no rule (they overflowed, or a
    /// week number of 99999999999 searched for ever), and ordinary ones still read.
    @Test(arguments: ["AJJ9999999999219921", "AAA0BBB,M3.99999999999.0,M11.1.0", "AAA0BBB,M13.1.0,M11.1.0",
                      "AAA0BBB,M3.6.0,M11.1.0", "AAA0BBB,M3.2.7,M11.1.0", "AAA0BBB,J366,J10", "AAA0BBB,400,10",
                      "AAA168", "AAA-1:60", "AAA1:00:60", "AAA٣"])
    func hostileTZStringsAreNoRule(_ text: String) {
        #expect(PosixRule(text) == nil)
    }

    @Test func ordinaryTZStringsStillRead() throws {
        let eastern = try #require(PosixRule("EST5EDT,M3.2.0,M11.1.0"))
        #expect(eastern.standardOffset == -18_000 && eastern.dstOffset == -14_400)
        #expect(PosixRule("<+0530>-5:30")?.standardOffset == 19_800)
        #expect(PosixRule("AAA-167")?.standardOffset == 167 * 3600)
        #expect(PosixRule("CET-1CEST,M3.5.0,M10.5.0/3") != nil)
        #expect(PosixRule("XXX3YYY,J60/-1,300/26") != nil)
    }
}
