import ChimeCenter
import Foundation
import Notifications
import Testing
import TestSupport
import Timekeeping

@Suite struct ContentTests {
    static let full = NotificationContent(
        title: "Homeroom", subtitle: "16:35", body: "Check the <guidance> list & more", label: "homeroom", sound: .named("bell"),
        urgency: .critical, icon: "alarm", category: "x-chime.alarm", actions: [.snooze, .dismiss], expiry: .after(.seconds(30)),
        bodyIsMarkup: false, userInfo: ["room": "4b"])

    func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONEncoder().encode(value))
    }

    @Test func everyContentAndTriggerRoundTrips() throws {
        #expect(try roundTrip(Self.full) == Self.full)
        for sound in [Sound.default, .named("bell"), .file("/x.oga")] {
            #expect(try roundTrip(sound) == sound)
        }
        for expiry in [NotificationContent.Expiry.serverDefault, .never, .after(.seconds(5))] {
            var content = NotificationContent(title: "x")
            content.expiry = expiry
            #expect(try roundTrip(content) == content)
        }
        let triggers: [Trigger] = [
            try Trigger(parsing: "16:35 mon-fri", anchor: 100),
            try Trigger(parsing: "2026-12-24 18:00", timeZone: "Europe/Berlin", anchor: 100),
            try Trigger(parsing: "*-*~01 18:00", anchor: 0),
            .timeInterval(300, anchor: 1000),
            .timeInterval(1500, repeats: true, anchor: 1000),
            Trigger(rule: .instant(1_800_000_000), repeats: false, timeZone: nil, anchor: 0),
            try .calendar(matching: DateComponents(weekday: 1, hour: 7), repeats: true, anchor: 0),
        ]
        for trigger in triggers {
            #expect(try roundTrip(trigger) == trigger)
        }
        let request = NotificationRequest(identifier: "homeroom", content: Self.full, trigger: triggers[0])
        #expect(try roundTrip(request) == request)
    }

    @Test func documentsFromAnOlderSchemaDecode() throws {
        // Schema 0: only a title and an interval, no urgency, sound or expiry; and a field from the future.
        let old = Data(#"{"identifier":"eggs","content":{"title":"Wait!","body":"Your eggs are almost done!","future":1},"trigger":{"kind":"interval","seconds":300,"anchor":5}}"#.utf8)
        let request = try JSONDecoder().decode(NotificationRequest.self, from: old)
        #expect(request.content == NotificationContent(title: "Wait!", body: "Your eggs are almost done!"))
        #expect(request.trigger.nextFire(after: 5) == 305)
        #expect(request.trigger.nextFire(after: 305) == nil)
        let bad = Data(#"{"kind":"calendar","rule":"16:65"}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Trigger.self, from: bad) }
    }

    @Test func triggersRecomputeFromTheRule() throws {
        let weekday = try Trigger(parsing: "16:35 mon-fri", timeZone: "Europe/Berlin", anchor: 0)
        let berlin = try Zone.named("Europe/Berlin")
        let friday = Instant(seconds: CivilTime(year: 2026, month: 11, day: 20, hour: 17).localSeconds - 3600)
        let next = try #require(weekday.nextFire(after: friday))
        #expect(berlin.civil(at: next.seconds) == CivilTime(year: 2026, month: 11, day: 23, hour: 16, minute: 35))
    }
}

@Suite struct RenderingTests {
    let content = ContentTests.full

    @Test func forAServerWithEverything() {
        let all: [Capability] = [.actions, .body, .bodyMarkup, .bodyHyperlinks, .sound, .persistence]
        let r = render(content, for: all)
        #expect(r.notification.summary == "Homeroom")
        #expect(r.notification.body == "<b>16:35</b>\nCheck the &lt;guidance&gt; list &amp; more")
        #expect(r.notification.actions == [Action(key: "snooze", label: "Snooze"), Action(key: "dismiss", label: "Dismiss")])
        #expect(r.notification.hints.contains(.soundName("bell")))
        #expect(r.notification.hints.contains(.urgency(.critical)))
        #expect(r.notification.expiration == .milliseconds(30_000))
        #expect(r.droppedActions.isEmpty && r.playLocally == nil)
        var markup = content
        markup.body = "<i>already</i> markup"
        markup.bodyIsMarkup = true
        #expect(render(markup, for: all).notification.body == "<b>16:35</b>\n<i>already</i> markup")
    }

    @Test func plainTextIsEscapedForMarkupAndReadsBackTheSame() {
        #expect(escapeMarkup("a & b < c > d \"e\" 'f'") == "a &amp; b &lt; c &gt; d &quot;e&quot; &apos;f&apos;")
        #expect(escapeMarkup("Réveil ⏰ 16:35") == "Réveil ⏰ 16:35")
        // A combining mark after "&" or "<" makes one Character with it; the byte is escaped all the same.
        #expect(escapeMarkup("&\u{301}<\u{308}") == "&amp;\u{301}&lt;\u{308}")
        for text in ["", "&", "<<>>", "x&amp;y", "🎉 & \u{1F1E9}\u{1F1EA}", "tab\tline\nend'\""] {
            #expect(stripMarkup(escapeMarkup(text)) == text, "\(text)")
        }
    }

    @Test func forAServerWithBodyOnly() {
        let r = render(content, for: [.body])
        #expect(r.notification.body == "16:35\nCheck the <guidance> list & more")  // plain text, never markup
        #expect(r.notification.actions.isEmpty)
        #expect(r.droppedActions == [.snooze, .dismiss])
        #expect(r.playLocally == .named("bell"))
        #expect(!r.notification.hints.contains(.soundName("bell")))
        var markup = content
        markup.body = "<b>bold</b> &amp; done"
        markup.bodyIsMarkup = true
        #expect(render(markup, for: [.body]).notification.body == "16:35\nbold & done")
    }

    @Test func forAServerWithNothing() {
        let r = render(content, for: [])
        #expect(r.notification.summary == "Homeroom — 16:35")
        #expect(r.notification.body.isEmpty)
        #expect(r.droppedActions.count == 2)
    }
}
