// Answers to an alarm as the calendar world keeps them, so a Stop or a Snooze on one machine is
// heard on the others through the person's own calendar: RFC 9074's `ACKNOWLEDGED` on a VALARM
// (the time it was last answered: every time it went off up to then is answered) and its snooze
// alarms (a VALARM `RELATED-TO;RELTYPE=SNOOZE` to the one snoozed, at an absolute TRIGGER), as
// Apple's devices write them, and Thunderbird's `X-MOZ-LASTACK` and `X-MOZ-SNOOZE-TIME[-n]` on the
// event, as Thunderbird writes them. chime reads both and writes both.
//
// An answer only moves forward: reading takes the latest acknowledgment any of them says, writing
// never puts an earlier one over a later one, and an occurrence at or before it never rings. A
// snooze counts while it is later than the acknowledgment (the acknowledgment of the ring it
// snoozed is written with it; a later Stop writes a later one and takes the snooze away).
import ChimeCenter
import ICalendar
import Notifications
import Timekeeping

public enum CalendarAnswers {
    /// Where an alarm of the person's own calendar keeps what its event says was answered (its user
    /// info; Unix seconds): read by `nextFire(after:off:)`, written by `CalendarImport` only.
    public static let acknowledgedKey = CalendarKeys.acknowledged
    public static let snoozedKey = CalendarKeys.snoozed

    /// What an event (or to-do) says was answered: the latest acknowledgment, and the snooze still
    /// ahead of it.
    public static func read(_ item: Component) -> (acknowledged: Instant?, snoozed: Instant?) {
        var acknowledged: Instant?
        var snoozes: [Instant] = []
        func later(_ time: Instant?) { if let time { acknowledged = max(acknowledged ?? time, time) } }
        later(item.first("X-MOZ-LASTACK").flatMap { utc($0.value) })
        for property in item.properties where property.name == "X-MOZ-SNOOZE-TIME" || property.name.hasPrefix("X-MOZ-SNOOZE-TIME-") {
            if let time = utc(property.value) { snoozes.append(time) }
        }
        for valarm in item.children("VALARM") {
            let own = valarm.first("ACKNOWLEDGED").flatMap { utc($0.value) }
            if isSnooze(valarm) {
                // A snooze alarm answered at or after its time is done.
                if let trigger = valarm.first("TRIGGER"), trigger.parameters["VALUE"]?.uppercased() == "DATE-TIME", let time = utc(trigger.value),
                    own.map({ $0 < time }) ?? true
                {
                    snoozes.append(time)
                }
            } else {
                later(own)
            }
        }
        let snoozed = snoozes.filter { $0 > (acknowledged ?? .earliest) }.max()
        return (acknowledged, snoozed)
    }

    /// Whether a VALARM is a snooze of another (RFC 9074 §7).
    public static func isSnooze(_ valarm: Component) -> Bool {
        valarm.all("RELATED-TO").contains { $0.parameters["RELTYPE"]?.uppercased() == "SNOOZE" }
    }

    /// A UTC date-time (`20261127T110005Z`) as an instant; nil for anything else.
    public static func utc(_ text: String) -> Instant? {
        guard text.utf8.count == 16, text.hasSuffix("Z"),
            let read = try? Recurrence(lines: [ContentLine(name: "DTSTART", value: text)])
        else { return nil }
        return Instant(seconds: read.startInstant(floatingZone: .utc))
    }

    static func utcText(_ time: Instant) -> String { CalendarExport.utcText(time.seconds) }

    /// The answers a request's calendar brought (none for alarms of any other kind).
    public static func of(_ request: NotificationRequest) -> (acknowledged: Instant?, snoozed: Instant?) { request.calendarAnswers }

    // MARK: - Writing

    /// `text` (an .ics file) with the event `uid` answered at `time` (every VALARM but snoozes
    /// acknowledged, `X-MOZ-LASTACK`, earlier snoozes taken away), and, with `snoozeUntil`, snoozed:
    /// an RFC 9074 snooze alarm related to its first alarm, and Thunderbird's snooze time (for a
    /// repeating event, `X-MOZ-SNOOZE-TIME-` and the occurrence's start in microseconds). An
    /// acknowledgment later than `time` already there is kept. Every other line is left as it was,
    /// byte for byte; the lines added end as the file's do. nil: no event or to-do has that UID.
    public static func answering(_ text: String, uid: String, at time: Instant, snoozeUntil: Instant? = nil, occurrence: Instant? = nil) -> String? {
        answering(Array(text.utf8), uid: uid, at: time, snoozeUntil: snoozeUntil, occurrence: occurrence).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `answering` on a file's bytes (which need not be UTF-8 where it is not touched).
    public static func answering(_ bytes: [UInt8], uid: String, at time: Instant, snoozeUntil: Instant? = nil, occurrence: Instant? = nil) -> [UInt8]? {
        let text = EventText(bytes)
        let items = text.items(uid: uid)
        guard !items.isEmpty else { return nil }
        // The latest acknowledgment any of them has: never put back.
        var acknowledged = time
        for item in items {
            for line in text.lines[item] where line.name == "ACKNOWLEDGED" || line.name == "X-MOZ-LASTACK" {
                if let said = line.read.flatMap({ utc($0.value) }), said > acknowledged { acknowledged = said }
            }
        }
        return text.rewriting(items) { lines in
            answered(lines, acknowledged: acknowledged, snoozeUntil: snoozeUntil, occurrence: occurrence, uid: uid, added: text.added)
        }
    }

    /// One event's lines, answered.
    private static func answered(_ lines: ArraySlice<EventText.Line>, acknowledged: Instant, snoozeUntil: Instant?, occurrence: Instant?,
                                 uid: String, added: (String) -> EventText.Piece) -> [EventText.Piece] {
        let ack = utcText(acknowledged)
        let repeating = lines.contains { $0.name == "RRULE" || $0.name == "RDATE" }
        let isInstance = lines.contains { $0.name == "RECURRENCE-ID" }
        var out: [EventText.Piece] = []
        var alarm: [EventText.Line]? = nil
        // The alarm a snooze is related to: the first that is not a reminder of chime's.
        var snoozedAlarm: String?
        var alarmNumber = 0
        for line in lines {
            if var lines = alarm {
                lines.append(line)
                guard line.name == "END", line.value == "VALARM" else {
                    alarm = lines
                    continue
                }
                alarm = nil
                // A snooze goes: it is answered, or written anew below.
                if lines.contains(where: { $0.name == "RELATED-TO" && $0.read?.parameters["RELTYPE"]?.uppercased() == "SNOOZE" }) { continue }
                alarmNumber += 1
                var kept = lines.dropLast().filter { $0.name != "ACKNOWLEDGED" }.map { EventText.Piece.kept($0.raw) }
                if snoozeUntil != nil, snoozedAlarm == nil, !lines.contains(where: { $0.name == "X-CHIME-REMINDER" }) {
                    if let named = lines.first(where: { $0.name == "UID" })?.read?.text {
                        snoozedAlarm = named
                    } else {
                        // A snooze names the alarm it snoozes (RFC 9074 gives alarms a UID for that).
                        snoozedAlarm = uid + "-alarm-\(alarmNumber)"
                        kept.append(added("UID:" + ContentLine.escaped(snoozedAlarm!)))
                    }
                }
                out += kept
                out.append(added("ACKNOWLEDGED:" + ack))
                out.append(.kept(line.raw))
                continue
            }
            if line.name == "BEGIN", line.value == "VALARM" {
                alarm = [line]
                continue
            }
            if line.name == "X-MOZ-LASTACK" || line.name == "X-MOZ-SNOOZE-TIME" || line.name.hasPrefix("X-MOZ-SNOOZE-TIME-") { continue }
            if line.name == "END", line.value == "VEVENT" || line.value == "VTODO" {
                out.append(added("X-MOZ-LASTACK:" + ack))
                if let snoozeUntil, snoozeUntil > acknowledged {
                    let until = utcText(snoozeUntil)
                    if repeating && !isInstance, let occurrence {
                        out.append(added("X-MOZ-SNOOZE-TIME-\(occurrence.seconds * 1_000_000):" + until))
                    } else {
                        out.append(added("X-MOZ-SNOOZE-TIME:" + until))
                    }
                    if let snoozedAlarm {
                        let summary = lines.first { $0.name == "SUMMARY" }?.read?.value ?? "Snoozed"
                        out += [
                            "BEGIN:VALARM", "UID:" + ContentLine.escaped(snoozedAlarm + "-snooze-\(snoozeUntil.seconds)"),
                            "RELATED-TO;RELTYPE=SNOOZE:" + ContentLine.escaped(snoozedAlarm), "ACTION:DISPLAY",
                            "TRIGGER;VALUE=DATE-TIME:" + until, "DESCRIPTION:" + summary, "END:VALARM",
                        ].map(added)
                    }
                }
            }
            out.append(.kept(line.raw))
        }
        return out
    }
}

/// What of an alarm a calendar cannot carry (a body command, chime-only settings): kept on the
/// machine that set it, laid over the calendar's alarm there, and said by `chime show`.
public enum KeptHere {
    /// Where the alarm says which of its settings are kept here (its user info; names, commas).
    public static let key = "chime-kept-here"

    /// The settings of `request` that do not come back from its calendar as they are: found by
    /// writing it as an event and reading that back as the person's own calendar is read.
    public static func settings(of request: NotificationRequest, now: Instant) -> [String] {
        let text = CalendarExport.calendar([request], now: now)
        guard let read = CalendarImport(reading: text, anchor: now, trust: .ownCalendar).alarms.first,
            let back = try? read.draft.build(now: now)
        else { return [] }
        let (a, b) = (request.content, back.content)
        var kept: [String] = []
        if a.bodyCommand != b.bodyCommand { kept.append("body command") }
        if a.subtitle != b.subtitle { kept.append("subtitle") }
        if a.icon != b.icon { kept.append("icon") }
        if a.category != b.category { kept.append("category") }
        if a.actions != b.actions { kept.append("buttons") }
        if a.expiry != b.expiry { kept.append("expiry") }
        if a.bodyIsMarkup != b.bodyIsMarkup { kept.append("markup") }
        if a.grace != b.grace { kept.append("grace") }
        if a.autoSnooze != b.autoSnooze { kept.append("auto-snooze") }
        if a.wake != b.wake || a.stayAsleep != b.stayAsleep { kept.append("wake") }
        if a.doNotDisturb != b.doNotDisturb { kept.append("do-not-disturb") }
        if a.insist != b.insist { kept.append("insist") }
        return kept
    }

    /// `request` (as its calendar gives it) with `settings` taken from `original`, and the names
    /// of those settings in its user info.
    public static func laid(over request: NotificationRequest, from original: NotificationRequest, settings: [String]) -> NotificationRequest {
        var request = request
        let from = original.content
        for name in settings {
            switch name {
            case "body command": request.content.bodyCommand = from.bodyCommand
            case "subtitle": request.content.subtitle = from.subtitle
            case "icon": request.content.icon = from.icon
            case "category": request.content.category = from.category
            case "buttons": request.content.actions = from.actions
            case "expiry": request.content.expiry = from.expiry
            case "markup": request.content.bodyIsMarkup = from.bodyIsMarkup
            case "grace": request.content.grace = from.grace
            case "auto-snooze": request.content.autoSnooze = from.autoSnooze
            case "wake":
                request.content.wake = from.wake
                request.content.stayAsleep = from.stayAsleep
            case "do-not-disturb": request.content.doNotDisturb = from.doNotDisturb
            case "insist": request.content.insist = from.insist
            default: break
            }
        }
        if !settings.isEmpty { request.content.userInfo[key] = settings.joined(separator: ", ") }
        return request
    }
}
