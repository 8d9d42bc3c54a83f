import ChimeCenter
import Foundation
import Notifications
import Testing
import TestSupport
import Timekeeping

/// The hand-written request JSON is `JSONEncoder`'s (`.sortedKeys`), byte for byte: the daemon
/// compares an alarm file's definitions by these bytes, and one byte's difference after an upgrade
/// would take every file alarm for changed (losing its snooze and skips).
@Suite struct RequestJSONTests {
    static func request(_ g: inout SplitMix) -> NotificationRequest {
        var content = NotificationContent(title: g.text(), subtitle: g.text(), body: g.text(), label: g.text(),
                                          urgency: Urgency.allCases[g.below(Urgency.allCases.count)],
                                          icon: g.text(), category: g.text(), bodyIsMarkup: g.chance(50))
        switch g.below(4) {
        case 0: content.sound = nil
        case 1: content.sound = .default
        case 2: content.sound = .named(g.text())
        default: content.sound = .file(g.text())
        }
        content.actions = (0..<g.below(3)).map { _ in NotificationAction(identifier: g.text(), title: g.text()) }
        content.expiry = [.serverDefault, .never, .after(g.span())][g.below(3)]
        for _ in 0..<g.below(4) { content.userInfo[g.text()] = g.text() }
        if g.chance(30) { content.userInfo[CalendarKeys.uid] = g.text() }
        if g.chance(40) { content.snooze = g.span() }
        if g.chance(40) { content.grace = g.span() }
        if g.chance(30) {
            content.bodyCommand = BodyCommand(arguments: (0..<g.below(3)).map { _ in g.text() }, timeLimit: g.span(), outputLimit: Int(g.integer()))
        }
        if g.chance(40) { content.ring = g.span() }
        content.autoSnooze = g.chance(30)
        if g.chance(40) { content.volume = Int(g.integer()) }
        if g.chance(40) { content.fade = g.span() }
        if g.chance(30) { content.fadeFrom = g.below(100) }
        content.insist = g.chance(30)
        content.wake = g.chance(30)
        content.stayAsleep = !content.wake && g.chance(30)
        if g.chance(50) { content.doNotDisturb = DoNotDisturbPolicy.allCases[g.below(DoNotDisturbPolicy.allCases.count)] }

        let anchor = g.chance(50) ? g.instant() : Instant(seconds: Int64(g.below(2_000_000_000)))
        let rules = ["16:35", "mon-fri 07:00", "*:0/15", "2026-12-24 18:00", "in 5m", "every 25m", "16:35 Europe/Berlin",
                     "DTSTART;TZID=Europe/Berlin:20261127T163500 RRULE:FREQ=MONTHLY;BYDAY=-1FR"]
        var trigger: Trigger
        switch g.below(4) {
        case 0: trigger = .timeInterval(g.span(), repeats: g.chance(50), anchor: anchor)
        case 1: trigger = Trigger(rule: .instant(g.instant()), repeats: false, timeZone: nil, anchor: anchor)
        default: trigger = try! Trigger(parsing: rules[g.below(rules.count)], anchor: anchor)
        }
        if g.chance(40) { trigger.timeZone = ["UTC", "Europe/Berlin", "America/New_York", g.text()][g.below(4)] }
        if g.chance(30) { trigger.offsets = (0..<g.below(3)).map { _ in g.span() } }
        if g.chance(30) { trigger.reminders = (0..<g.below(3)).map { _ in g.span() } }
        if g.chance(30) { trigger.exceptions = [try! ExceptDate(parsing: "12-25"), try! ExceptDate(parsing: "2026-01-01")].shuffled(using: &g) }
        if g.chance(30) { trigger.until = g.instant() }
        if g.chance(30) { trigger.limit(count: Int(g.below(1000))) }
        if g.chance(30) { trigger.skipped = (0..<g.below(4)).map { _ in g.instant() } }
        if g.chance(30) { trigger.said = ["every other tuesday 9am", "morgen um 7 Uhr", "übermorgen \"früh\"", g.text()][g.below(4)] }
        if g.chance(30) { trigger.onHoliday = HolidayPolicy.allCases[g.below(4)] }
        return NotificationRequest(identifier: g.text(), content: content, trigger: trigger)
    }

    @Test func anInstantWithinASecondOfTheLeastHasItsNanosecond() {
        #expect(Instant(nanosecondsSinceEpoch: .min).nanosecond == 145_224_192)
        #expect(Instant(nanosecondsSinceEpoch: -1).nanosecond == 999_999_999)
        #expect(Instant(nanosecondsSinceEpoch: .max).nanosecond == 854_775_807)
    }

    @Test func matchesJSONEncoderByteForByte() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var g = SplitMix(seed: 34)
        var kinds = Set<String>()
        for _ in 0..<1500 {
            let request = Self.request(&g)
            let expected = String(decoding: try encoder.encode(request), as: UTF8.self)
            let written = RequestJSON.encode(request)
            #expect(written == expected)
            if written != expected { return }  // one difference says it; fifteen hundred would bury it
            kinds.insert(String(written.split(separator: "\"kind\":\"").last!.prefix(5)))
            // And it reads back as the same request.
            #expect(try JSONDecoder().decode(NotificationRequest.self, from: Data(written.utf8)) == request)
        }
        #expect(kinds.count >= 4)  // the generator reached every rule kind
    }
}

/// What the generated requests are made of (TestSupport's SplitMix: every run tries the same ones).
fileprivate extension SplitMix {
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func integer() -> Int64 {
        switch below(4) {
        case 0: Int64(below(100))
        case 1: -Int64(below(100_000))
        case 2: Int64(bitPattern: next())
        default: [Int64.min, Int64.max, 0, -1][below(4)]
        }
    }
    /// Text with what JSON escapes, what it does not (DEL, non-ASCII, astral), and plain words.
    mutating func text() -> String {
        let pieces = ["", "a", "Wake up", "/", "\\", "\"", "\n", "\r", "\t", "\u{8}", "\u{C}", "\u{0}", "\u{1}", "\u{1F}",
                      "\u{7F}", "é", "Zürich", "→", "😀", "<b>x</b>", "http://x/y", " ", "-", "_", "Z", "ß", "\u{2028}"]
        return (0..<below(6)).map { _ in pieces[below(pieces.count)] }.joined()
    }
    /// An instant anywhere an Instant's seconds and nanosecond still make it again (the stored
    /// form saturates within a second of Int64's ends).
    mutating func instant() -> Instant { Instant(nanosecondsSinceEpoch: min(max(integer(), -9_000_000_000_000_000_000), 9_000_000_000_000_000_000)) }
    mutating func span() -> TimeSpan { .seconds(Int64(below(2_000_000)) - 1000) }
}
