import ChimeCenter
import DBus
import Foundation
import PropertyBased
import Testing
import TestSupport
import Timekeeping

/// The one definition of a valid request, and a request's form on the bus.
@Suite struct ValidationTests {
    let now = Instant(seconds: 1_800_000_000)

    func entries(_ pairs: [(String, Value)]) -> [Value.DictionaryEntry] {
        Value.vardict(pairs).dictionaryEntries ?? []
    }

    func refusal(_ pairs: [(String, Value)]) -> RequestError? {
        do {
            _ = try NotificationRequest.fromDBus(entries(pairs), now: now)
            return nil
        } catch {
            return error
        }
    }

    @Test func theFindingsOfTheIssueAreRefusedWithTheFieldAndTheBound() {
        let tea: [(String, Value)] = [("title", .string("Tea")), ("rule", .string("in 5m"))]
        #expect(refusal(tea) == nil)
        // An expiry of 9223372036854775807 seconds once trapped at fire time, and at every start after.
        #expect(refusal(tea + [("expire", .int64(.max))])?.description == "expire: must be a number of seconds, got 9223372036854775807")
        #expect(refusal(tea + [("expire", .uint32(1_000_000))])?.description == "expire: must be 1s-1d, got 11d13h46m40s")
        #expect(refusal(tea + [("snooze", .int64(15_000 * 604_800))])?.key == "snooze")
        #expect(refusal([("title", .string("x")), ("rule", .string("in 15000w"))])?.description.hasPrefix("rule: an interval must be 1s-") == true)
        #expect(refusal([("title", .string("x")), ("at", .int64(.max))])?.description == "at: must lie in 1970-2199, got 9223372036854775807 s since the epoch")
        // A zone is a name from the tz database, never a path.
        #expect(refusal(tea + [("time-zone", .string("../../etc/passwd"))])?.key == "time-zone")
        #expect(refusal(tea + [("time-zone", .string("Mars/Olympus"))])?.key == "time-zone")
        #expect(refusal([("title", .string("Tea")), ("rule", .string("16:35")), ("time-zone", .string("Europe/Berlin"))]) == nil)
        // Rules across fields, as at every door (AlarmDraft): elapsed time has no zone (a program's
        // zone is dropped), a ring needs a sound, a body timeout needs a body command.
        #expect(refusal(tea + [("time-zone", .string("Europe/Berlin"))]) == nil)
        let zoned = try? NotificationRequest.fromDBus(entries(tea + [("time-zone", .string("Europe/Berlin"))]), now: now)
        #expect(zoned != nil && zoned?.request.trigger.timeZone == nil)
        #expect(refusal(tea + [("ring", .uint32(60))])?.description == "ring: needs a sound (an alarm without a sound has nothing to ring)")
        #expect(refusal(tea + [("body-timeout", .uint32(3))])?.description == "body-timeout: needs body-command")
        // NUL and control characters.
        #expect(refusal([("title", .string("a\u{0}b")), ("rule", .string("in 5m"))])?.description == "title: contains a NUL character")
        #expect(refusal(tea + [("id", .string("two\nlines"))])?.key == "id")
        #expect(refusal(tea + [("id", .string(String(repeating: "x", count: 201)))])?.description == "id: must be 1-200 bytes, got 201")
        // Past and impossible dates: a typo in the year is not an alarm that never rings.
        let past = refusal([("title", .string("x")), ("rule", .string("2020-01-01 10:00"))])
        #expect(past?.kind == .neverFires)
        #expect(past?.description == "rule: 2020-01-01 10:00:00 is in the past")
        #expect(refusal([("title", .string("x")), ("at", .int64(1_000))])?.kind == .neverFires)
        // Unknown keys and wrong types name the key.
        #expect(refusal(tea + [("snoze", .uint32(60))])?.description.hasPrefix("snoze: unknown key; did you mean 'snooze'?") == true)
        #expect(refusal(tea + [("snooze", .string("5m"))])?.description == "snooze: must be an integer (u or x), got s")
        #expect(refusal([("rule", .string("in 5m"))])?.description == "title: is required")
        #expect(refusal([("title", .string("x"))])?.key == "rule")
        #expect(refusal(tea + [("at", .int64(1_900_000_000))])?.description == "at: give rule or at, not both")
    }

    @Test func aRequestCrossesTheBusUnchanged() throws {
        var content = NotificationContent(title: "Homeroom", subtitle: "4b", body: "Check the list", label: "homeroom",
                                          sound: .named("bell"), urgency: .critical, icon: "chime", category: "x-chime.alarm",
                                          actions: [.snooze, .dismiss], expiry: .after(.seconds(30)), userInfo: ["room": "4b"])
        content.snooze = .seconds(300)
        content.grace = .seconds(0)
        content.bodyCommand = BodyCommand(arguments: ["date", "+%A"], timeLimit: .seconds(7), outputLimit: 99)
        for trigger in [
            try Trigger(parsing: "16:35 mon-fri", timeZone: "Europe/Berlin", anchor: now),
            try Trigger(parsing: "in 1h30m", anchor: now),
            try Trigger(parsing: "every 25m", anchor: now),
            try Trigger(parsing: "16:35", repeats: false, anchor: now),
            Trigger(rule: .instant(now + .seconds(60)), repeats: false, timeZone: nil, anchor: now),
        ] {
            let request = NotificationRequest(identifier: "homeroom", content: content, trigger: trigger)
            let incoming = try NotificationRequest.fromDBus(request.dbusRequest.dictionaryEntries ?? [], now: now)
            #expect(incoming.request == request)
            #expect(incoming.identifierGiven)
            #expect(try NotificationRequest.fromStored(request.storedDBusRequest.dictionaryEntries ?? []) == request)
        }
        // An instant with a fraction of a second keeps it (to well under a microsecond) on its way.
        let precise = Instant(nanosecondsSinceEpoch: now.nanosecondsSinceEpoch + 60_123_456_789)
        let sent = NotificationRequest(identifier: "p", content: content,
                                       trigger: Trigger(rule: .instant(precise), repeats: false, timeZone: nil, anchor: now))
        guard case .instant(let received) = try NotificationRequest.fromDBus(sent.dbusRequest.dictionaryEntries ?? [], now: now).request.trigger.rule
        else { Issue.record("not an instant"); return }
        #expect(abs((received - precise).nanoseconds) < 1000)
        #expect(refusal([("title", .string("x")), ("at", .double(.nan))])?.key == "at")
        #expect(refusal([("title", .string("x")), ("at", .double(1e300))])?.key == "at")
        // Without an identifier the daemon makes one.
        let anonymous = try NotificationRequest.fromDBus(entries([("title", .string("Tea")), ("rule", .string("in 5m"))]), now: now)
        #expect(!anonymous.identifierGiven && anonymous.request.identifier.isEmpty)
        // gdbus sends <300> as int32; busctl 'u 300': both are seconds.
        let fromGdbus = try NotificationRequest.fromDBus(
            entries([("title", .string("Tea")), ("rule", .string("in 5m")), ("snooze", .int32(300))]), now: now)
        #expect(fromGdbus.request.content.snooze == .seconds(300))
    }

    /// Through the D-Bus door, a program may say when in any of the four languages: read once, as
    /// said now, kept as typed beside the rule it means.
    @Test(arguments: [("tous les lundis et jeudis à 18h", "Mon,Thu *-*-* 18:00:00"), ("de lunes a viernes a las 6:45", "Mon..Fri *-*-* 06:45:00"),
                      ("jeden zweiten Dienstag um 9:00", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU"), ("every 27th at 9am", "*-*-27 09:00:00")])
    func aPhraseInAnyLanguageIsReadAtTheDBusDoor(_ phrase: String, _ rule: String) throws {
        let read = try NotificationRequest.fromDBus(entries([("title", .string("x")), ("rule", .string(phrase)), ("time-zone", .string("UTC"))]),
                                                    now: now)
        #expect(read.request.trigger.said == phrase)
        let text: String = switch read.request.trigger.rule {
        case .calendar(let expression): expression.description
        case .recurrence(let recurrence): recurrence.text
        default: "\(read.request.trigger.rule)"
        }
        #expect(text.contains(rule), "\(phrase): \(text)")
        #expect(read.request.trigger.repeats)
    }

    @Test func randomRequestsAreRefusedWithAReasonOrRoundTrip() async {
        // Random typed dictionaries with boundary numbers: never a trap; each either refused
        // with a field-naming error or accepted, valid, with a next fire ahead.
        await propertyCheck(count: 3000, input: Gen.int(in: 0...Int.max)) { seed in
            var r = SplitMix(seed: UInt64(seed))
            let pairs = RandomRequests.entries(&r, now: now, title: "T")
            do {
                let incoming = try NotificationRequest.fromDBus(entries(pairs), now: now)
                var request = incoming.request
                if request.identifier.isEmpty { request.identifier = "made" }
                try request.validate(now: now)
                #expect(request.trigger.nextFire(after: now).map { $0 > now && $0 <= .latest } == true)
            } catch let error as RequestError {
                #expect(!error.key.isEmpty && !error.message.isEmpty)
            } catch {
                Issue.record("not a RequestError: \(error)")
            }
        }
    }

    /// `wake` false is kept as said (a phone, which wakes for every alarm with a sound, leaves this
    /// one asleep); not said, it is neither; true, it wakes: through D-Bus and the stored JSON alike.
    @Test func wakeFalseIsKeptApartFromNotSaid() throws {
        for (said, wake, stayAsleep) in [(Value?.none, false, false), (.boolean(false), false, true), (.boolean(true), true, false)] {
            let pairs: [(String, Value)] = [("title", .string("T")), ("rule", .string("in 5m"))] + (said.map { [("wake", $0)] } ?? [])
            let request = try NotificationRequest.fromDBus(entries(pairs), now: now).request
            #expect(request.content.wake == wake && request.content.stayAsleep == stayAsleep, "\(String(describing: said))")
            let again = try NotificationRequest.fromDBus(request.dbusRequest.dictionaryEntries ?? [], now: now).request
            #expect(again.content.wake == wake && again.content.stayAsleep == stayAsleep)
            let stored = try JSONDecoder().decode(NotificationRequest.self, from: Data(RequestJSON.encode(request).utf8))
            #expect(stored.content == request.content)
        }
    }

    @Test func timeArithmeticSaturatesInsteadOfTrapping() {
        #expect(Instant.distantFuture + .seconds(1) == .distantFuture)
        #expect(Instant.distantPast - .seconds(1) == .distantPast)
        #expect(TimeSpan.seconds(.max) == TimeSpan(nanoseconds: .max))
        #expect(Instant(seconds: .max) == .distantFuture)
        #expect(Instant.exactly(seconds: .max) == nil)
        #expect(Instant(seconds: -1, nanosecond: 500_000_000).seconds == -1)
        #expect(Instant(nanosecondsSinceEpoch: -1).seconds == -1)
        #expect(Instant(nanosecondsSinceEpoch: -1).nanosecond == 999_999_999)
        #expect(TimeSpan.seconds(5400).description == "1h30m")
        #expect(TimeSpan.seconds(1_209_600).description == "2w")
    }
}
