// chime's alarms as iCalendar, for other programs to read (and chime to read back exactly): an
// event per alarm, its rule as DTSTART with RRULE (systemd expressions converted, iCalendar rules
// as written), a VALARM where it fires (AUDIO with its sound, DISPLAY with its text), and what
// only chime has in properties of its own (X-CHIME-*).
import ChimeCenter
import ICalendar
import Notifications
import Timekeeping

public enum CalendarExport {
    /// The calendar of `requests`, as of `now` (where a rule without a start of its own begins).
    /// Lines end in CRLF and are folded at 75 octets (RFC 5545 §3.1).
    public static func calendar(_ requests: [NotificationRequest], now: Instant) -> String {
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//chime//chime \(chimeVersion)//EN", "CALSCALE:GREGORIAN"]
        let stamp = utcText(now.seconds)
        for request in requests { lines += event(request, now: now, stamp: stamp) }
        lines.append("END:VCALENDAR")
        return lines.map(folded).joined(separator: "\r\n") + "\r\n"
    }

    static func event(_ request: NotificationRequest, now: Instant, stamp: String) -> [String] {
        let content = request.content
        let trigger = request.trigger
        typealias Own = CalendarImport.Own
        var lines = ["BEGIN:VEVENT"]
        lines.append("UID:" + Property.escaped(content.userInfo[CalendarImport.uidKey] ?? "\(request.identifier)@chime"))
        lines.append("DTSTAMP:" + stamp)
        lines.append("SUMMARY:" + Property.escaped(content.title))
        if !content.body.isEmpty { lines.append("DESCRIPTION:" + Property.escaped(content.body)) }
        lines += recurrence(trigger, now: now)
        // What only chime has: read back by `chime import` as it was.
        lines.append(Own.id + ":" + Property.escaped(request.identifier))
        switch trigger.rule {
        case .recurrence: break  // its own lines say it all
        case .instant, .interval: break  // its DTSTART (and RRULE), in UTC, are its times; a rule counting from now would move them
        case .calendar: lines.append(Own.rule + ":" + Property.escaped(request.summaryRule))
        }
        if let zone = trigger.timeZone { lines.append(Own.zone + ":" + zone) }
        if !content.label.isEmpty { lines.append(Own.label + ":" + Property.escaped(content.label)) }
        if content.urgency != .critical { lines.append(Own.urgency + ":" + content.urgency.name) }
        switch content.sound {
        case nil: break
        case .default?: lines.append(Own.sound + ":default")
        case .named(let name)?: lines.append(Own.sound + ":" + Property.escaped(name))
        case .file(let path)?: lines.append(Own.sound + ":" + Property.escaped(path))
        }
        if let volume = content.volume { lines.append(Own.volume + ":\(volume)") }
        if let fade = content.fade { lines.append(Own.fade + ":\(fade.seconds)") }
        if let fadeFrom = content.fadeFrom { lines.append(Own.fadeFrom + ":\(fadeFrom)") }
        if let ring = content.ring { lines.append(Own.ring + ":\(ring.seconds)") }
        if content.insist { lines.append(Own.insist + ":TRUE") }
        if let snooze = content.snooze { lines.append(Own.snooze + ":\(snooze.seconds)") }
        if !trigger.reminders.isEmpty { lines.append(Own.remind + ":" + trigger.reminders.map { "\($0.seconds)" }.joined(separator: ",")) }
        if !trigger.exceptions.isEmpty { lines.append(Own.except + ":" + trigger.exceptions.map(\.description).joined(separator: ",")) }
        if let until = trigger.until { lines.append(Own.until + ":\(until.seconds)") }
        if let notice = trigger.notice { lines.append(Own.notice + ":\(notice.seconds)") }
        if let policy = trigger.onHoliday, policy != .ring { lines.append(Own.onHoliday + ":" + policy.rawValue.uppercased()) }
        // Where it fires: a VALARM for each offset (at the occurrence without one).
        let text = Property.escaped(content.body.isEmpty ? content.title : content.body)
        for offset in trigger.offsets.isEmpty ? [TimeSpan.zero] : trigger.offsets {
            let when = "TRIGGER:" + Values.durationText(offset.seconds)
            lines += ["BEGIN:VALARM", "ACTION:DISPLAY", when, "DESCRIPTION:" + text, "END:VALARM"]
            if let sound = content.sound {
                var audio = ["BEGIN:VALARM", "ACTION:AUDIO", when]
                if case .file(let path) = sound { audio.append("ATTACH;VALUE=URI:file://" + uriPath(path)) }
                lines += audio + ["END:VALARM"]
            }
        }
        // Reminders show as reminders elsewhere; chime makes them again from X-CHIME-REMIND.
        for lead in trigger.reminders {
            lines += ["BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:" + Values.durationText(-lead.seconds), "DESCRIPTION:" + text,
                      "X-CHIME-REMINDER:TRUE", "END:VALARM"]
        }
        lines.append("END:VEVENT")
        return lines
    }

    /// DTSTART and RRULE (or the recurrence's own lines) for a trigger.
    static func recurrence(_ trigger: Trigger, now: Instant) -> [String] {
        let zone = trigger.wallClockZone
        // A wall-clock rule in the system's zone is floating: 16:35 wherever the reader is, as chime keeps it.
        var floating = trigger.timeZone == nil
        if case .calendar(let expression) = trigger.rule, expression.timeZone != nil { floating = false }
        /// `DTSTART;TZID=Europe/Berlin:20261127T163500`, `DTSTART:20261127T163500` (floating) or `...Z`.
        func start(_ t: UnixTime) -> String { dateTime("DTSTART", t) }
        func dateTime(_ name: String, _ t: UnixTime) -> String {
            if floating { return name + ":" + localText(zone.civil(at: t)) }
            if zone.identifier == "UTC" || (try? Zone.named(zone.identifier)) == nil { return name + ":" + utcText(t) }
            return name + ";TZID=\(zone.identifier):" + localText(zone.civil(at: t))
        }
        // The end (`until`, or the last of `count`) as RFC 5545 writes UNTIL.
        let end = [trigger.until, trigger.countEnd].compactMap { $0 }.min()
        let untilPart = end.map { ";UNTIL=" + utcText($0.seconds) } ?? ""
        var exceptions: [String] = []
        if !trigger.exceptions.isEmpty {
            // The excepted occurrences of the next two years, for programs that do not read X-CHIME-EXCEPT.
            var plain = trigger
            plain.exceptions = []
            var t = now
            var count = 0
            while let next = plain.nextFire(after: t), next.seconds < now.seconds + 2 * 366 * 86_400, count < 500 {
                if trigger.exceptions.contains(where: { $0.contains(zone.civil(at: next.seconds)) }) {
                    exceptions.append(dateTime("EXDATE", next.seconds))
                }
                t = next
                count += 1
            }
        }
        switch trigger.rule {
        case .recurrence(let recurrence):
            // As read (the one content-line reader); an end chime adds goes into an RRULE that has none.
            let lines = recurrence.lines.map { line -> String in
                var line = line
                if line.name == "RRULE", !untilPart.isEmpty, let rule = try? RecurrenceRule(parsing: line.value), rule.until == nil, rule.count == nil {
                    line.value += untilPart
                }
                return line.written
            }
            return lines + exceptions
        case .instant(let t):
            return ["DTSTART:" + utcText(t.seconds)]
        case .interval(let span, let again):
            guard let first = trigger.rule.nextFire(after: now, anchor: trigger.anchor, repeats: trigger.repeats, in: zone) else {
                return ["DTSTART:" + utcText(now.seconds)]
            }
            guard again, trigger.repeats, span.seconds > 0 else { return ["DTSTART:" + utcText(first.seconds)] }
            return ["DTSTART:" + utcText(first.seconds), "RRULE:FREQ=SECONDLY;INTERVAL=\(span.seconds)" + untilPart]
        case .calendar(let expression):
            let first = trigger.rule.nextFire(after: now, anchor: trigger.anchor, repeats: trigger.repeats, in: trigger.zone)
                ?? Instant(seconds: now.seconds)
            guard trigger.repeats, !expression.matchesOnce else { return [start(first.seconds)] }
            if let rule = rrule(expression) { return [start(first.seconds), "RRULE:" + rule + untilPart] + exceptions }
            // Beyond what RRULE says (several years, steps from the end of a month): its next
            // year of occurrences, listed.
            var rdates: [String] = []
            var t = first
            while rdates.count < 366, let next = trigger.nextFire(after: t) {
                rdates.append(dateTime("RDATE", next.seconds))
                t = next
            }
            return [start(first.seconds)] + rdates
        }
    }

    /// The RRULE a systemd calendar expression is, where there is one: nil when it names years or
    /// steps from a month's end.
    public static func rrule(_ expression: CalendarExpression) -> String? {
        if let years = expression.years, !years.isEmpty { return nil }
        func values(_ components: [CalendarExpression.Component]?, _ range: ClosedRange<Int>) -> [Int]?? {
            guard let components else { return .some(nil) }  // any value
            var out: Set<Int> = []
            for c in components {
                let stop = min(c.stop ?? (c.repeatEvery > 0 ? range.upperBound : c.start), range.upperBound)
                guard c.start >= range.lowerBound, c.start <= range.upperBound else { return nil }
                var v = c.start
                while v <= stop {
                    out.insert(v)
                    if c.repeatEvery == 0 { if c.stop == nil { break } else { v += 1 } } else { v += c.repeatEvery }
                }
            }
            return .some(out.sorted())
        }
        guard case .some(let months) = values(expression.months, 1...12), case .some(let days) = values(expression.days, 1...31),
            case .some(let hours) = values(expression.hours, 0...23), case .some(let minutes) = values(expression.minutes, 0...59),
            case .some(let seconds) = values(expression.seconds, 0...59)
        else { return nil }
        if expression.daysFromEnd, expression.days?.contains(where: { $0.repeatEvery > 0 }) == true { return nil }
        let frequency = seconds == nil ? "SECONDLY" : minutes == nil ? "MINUTELY" : hours == nil ? "HOURLY" : "DAILY"
        var parts = ["FREQ=" + frequency]
        func list(_ name: String, _ values: [Int]?) { if let values { parts.append(name + "=" + values.map(String.init).joined(separator: ",")) } }
        list("BYMONTH", months)
        list("BYMONTHDAY", days.map { expression.daysFromEnd ? $0.map { -$0 } : $0 })
        if let bits = expression.weekdays, bits & 0x7F != 0x7F {
            let names = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
            parts.append("BYDAY=" + (0..<7).filter { bits & (1 << $0) != 0 }.map { names[$0] }.joined(separator: ","))
        }
        list("BYHOUR", hours)
        list("BYMINUTE", minutes)
        list("BYSECOND", seconds)
        return parts.joined(separator: ";")
    }

    static func utcText(_ t: UnixTime) -> String { localText(Zone.utc.civil(at: t)) + "Z" }

    static func localText(_ c: CivilTime) -> String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(c.year)\(two(c.month))\(two(c.day))T\(two(c.hour))\(two(c.minute))\(two(c.second))"
    }

    /// A path as a file URI writes it (spaces and the like percent-encoded).
    static func uriPath(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            let c = Character(UnicodeScalar(byte))
            if byte < 0x80, c.isLetter || c.isNumber || "/-._~".contains(c) { out.append(c) } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        return out
    }

    /// A line folded at 75 octets, never inside a character (§3.1).
    static func folded(_ line: String) -> String {
        guard line.utf8.count > 75 else { return line }
        var out = ""
        var width = 0
        for character in line {
            let size = String(character).utf8.count
            if width + size > 75 {
                out += "\r\n "
                width = 1
            }
            out.append(character)
            width += size
        }
        return out
    }
}
