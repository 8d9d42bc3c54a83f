// A calendar's reminders as chime alarms: each event or to-do with alarms (VALARM) becomes one
// chime alarm whose rule is the event's own recurrence (DTSTART, RRULE, RDATE, EXDATE, with its
// zone named as the tz database names it), firing where the VALARMs say relative to each
// occurrence (before or after its start or end, repeated as REPEAT and DURATION say); an alarm at
// an absolute time is an alarm of its own. What chime cannot do is a problem at its line.
import ChimeCenter
import ICalendar
import Notifications
import Posix
import Timekeeping

public struct CalendarImport: Sendable {
    /// One alarm made from an event: its draft (rule, content, offsets), where the event starts in
    /// the file, and its UID.
    public struct Alarm: Sendable {
        public var draft: AlarmDraft
        public var line: Int
        public var uid: String
        /// Named by chime's settings (X-CHIME-ID), not after its UID.
        public var named = false
        /// Switched off on some machine (X-CHIME-DISABLED, from the person's own calendar).
        public var enabled = true
    }

    /// Something of the file chime cannot represent, at its line.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { "\(line): \(message)" }
    }

    /// Whose calendar it is, and so what its events may set.
    public struct Trust: Sendable, Hashable {
        /// chime's own settings (`X-CHIME-*`: identifier, rule, label, sound, ring, urgency, ...).
        public var chimeSettings: Bool
        /// `X-CHIME-INSIST` (unmute and raise the output): only from a file the person imports as theirs.
        public var insist: Bool

        /// Someone else's (a shared or subscribed calendar, an invitation, a downloaded file): what an
        /// event means (its times, title, description, alarms, and sounds within the person's sound
        /// folders), none of chime's settings.
        public static let others = Trust(chimeSettings: false, insist: false)
        /// A followed calendar the person marks as their own (`own = true`): chime's settings too, but
        /// never insist (whatever syncs the calendar could set it).
        public static let ownCalendar = Trust(chimeSettings: true, insist: false)
        /// A file the person imports as theirs (`chime import --own`, e.g. what `chime export` wrote).
        public static let ownFile = Trust(chimeSettings: true, insist: true)
    }

    public var alarms: [Alarm] = []
    public var problems: [Problem] = []
    /// What was read but not taken (chime's settings in someone else's calendar, a sound outside the
    /// sound folders): said, never a reason to refuse the rest.
    public var notes: [Problem] = []
    /// How the calendar was read.
    public let trust: Trust
    /// Events and to-dos without an alarm, and cancelled ones: nothing to import.
    public var withoutAlarms = 0
    public var cancelled = 0

    /// Where an imported alarm keeps its event's UID (its user info), so an export gives it back.
    public static let uidKey = CalendarKeys.uid
    /// Where an alarm of a calendar chime writes to keeps that calendar's name (its user info).
    public static let calendarKey = CalendarKeys.calendar

    /// Properties of chime's own that `CalendarExport` writes, so an alarm comes back as it was.
    public enum Own {
        public static let id = "X-CHIME-ID", rule = "X-CHIME-RULE", zone = "X-CHIME-TIME-ZONE", sound = "X-CHIME-SOUND"
        public static let volume = "X-CHIME-VOLUME", fade = "X-CHIME-FADE", fadeFrom = "X-CHIME-FADE-FROM", ring = "X-CHIME-RING", insist = "X-CHIME-INSIST"
        public static let snooze = "X-CHIME-SNOOZE", remind = "X-CHIME-REMIND", except = "X-CHIME-EXCEPT"
        public static let until = "X-CHIME-UNTIL", label = "X-CHIME-LABEL", urgency = "X-CHIME-URGENCY"
        public static let notice = "X-CHIME-NOTICE", onHoliday = "X-CHIME-ON-HOLIDAY"
    }

    /// Reads `text` (an .ics file's contents); `anchor` is when the alarms are set.
    public init(reading text: String, anchor: Instant, trust: Trust = .others) {
        self.init(reading: Array(text.utf8), anchor: anchor, trust: trust)
    }

    /// How a big calendar's alarms are handed over as they are read, rather than all at the end:
    /// `counted` once its events are known (how many alarms may come), `chunk` with each slice of
    /// alarms in the file's order (they are not kept in `alarms`). Problems and notes are kept.
    public struct Streaming {
        public var counted: (Int) -> Void
        public var chunk: ([Alarm]) -> Void
        public init(counted: @escaping (Int) -> Void, chunk: @escaping ([Alarm]) -> Void) {
            self.counted = counted
            self.chunk = chunk
        }
    }

    /// Events read, and handed over, at a time when streaming.
    static let chunkSize = 8192

    /// Reads a file's bytes (UTF-8, lines unfolded first).
    public init(reading bytes: [UInt8], anchor: Instant, trust: Trust = .others, streaming: Streaming? = nil) {
        self.trust = trust
        let calendars: [Component]
        do throws(ParseError) { calendars = try Parser.parse(bytes: bytes) } catch {
            problems.append(Problem(line: error.line, message: error.message))
            return
        }
        for calendar in calendars {
            guard calendar.name == "VCALENDAR" else {
                problems.append(Problem(line: calendar.line, message: "BEGIN:\(calendar.name) at the top; an iCalendar file holds VCALENDAR"))
                continue
            }
            read(calendar, anchor: anchor, streaming: streaming)
        }
    }

    private mutating func read(_ calendar: Component, anchor: Instant, streaming: Streaming?) {
        let timeZones = calendar.children("VTIMEZONE")
        let calendarName = calendar.first("X-WR-CALNAME").map { Self.line($0.text) } ?? ""
        let items = calendar.components.filter { $0.name == "VEVENT" || $0.name == "VTODO" }
        // Instances moved or changed (RECURRENCE-ID) leave their series, which skips them.
        var moved: [String: [Property]] = [:]
        var work: [Work] = []
        for item in items {
            if let instance = item.first("RECURRENCE-ID"), let uid = item.first("UID")?.text { moved[uid, default: []].append(instance) }
        }
        for item in items {
            // (Any case, without a string made for each event.)
            if item.first("STATUS")?.value.utf8.elementsEqual("CANCELLED".utf8, by: { $0 & 0xDF == $1 }) == true {
                cancelled += 1
                continue
            }
            let valarms = item.children("VALARM")
            guard !valarms.isEmpty else {
                withoutAlarms += 1
                continue
            }
            guard let uid = item.first("UID")?.text, !uid.isEmpty else {
                problems.append(Problem(line: item.line, message: "\(item.name) without a UID (RFC 5545 requires one; chime updates alarms by it)"))
                continue
            }
            let instance = item.first("RECURRENCE-ID")
            work.append(Work(item: item, uid: uid, valarms: valarms, skipped: instance == nil ? moved[uid] ?? [] : [], instance: instance))
        }
        guard let streaming else { return readAll(work[...], timeZones: timeZones, calendarName: calendarName, anchor: anchor) }
        streaming.counted(work.count)
        var start = work.startIndex
        while start < work.endIndex {
            let end = min(work.endIndex, start + Self.chunkSize)
            readAll(work[start..<end], timeZones: timeZones, calendarName: calendarName, anchor: anchor)
            streaming.chunk(alarms)
            alarms = []
            start = end
        }
    }

    /// One event or to-do to read, with what its calendar says of it.
    private struct Work: Sendable {
        var item: Component
        var uid: String
        var valarms: [Component]
        var skipped: [Property]
        var instance: Property?
    }

    private init(trust: Trust) { self.trust = trust }

    /// Reads the events; a big calendar's on two threads, half each, put together in order (each
    /// event is read alone: nothing one event says changes how another is read).
    private mutating func readAll(_ work: ArraySlice<Work>, timeZones: [Component], calendarName: String, anchor: Instant) {
        guard work.count >= 4096 else {
            for one in work {
                read(one.item, uid: one.uid, valarms: one.valarms, timeZones: timeZones, calendarName: calendarName,
                     skipped: one.skipped, instance: one.instance, anchor: anchor)
            }
            return
        }
        let trust = self.trust
        let (first, second) = onTwoThreads(work.indices) { half in
            var partial = CalendarImport(trust: trust)
            for one in work[half] {
                partial.read(one.item, uid: one.uid, valarms: one.valarms, timeZones: timeZones, calendarName: calendarName,
                             skipped: one.skipped, instance: one.instance, anchor: anchor)
            }
            return partial
        }
        for partial in [first, second] {
            alarms += partial.alarms
            problems += partial.problems
            notes += partial.notes
            withoutAlarms += partial.withoutAlarms
            cancelled += partial.cancelled
        }
    }

    private mutating func read(_ item: Component, uid: String, valarms: [Component], timeZones: [Component], calendarName: String,
                               skipped: [Property], instance: Property?, anchor: Instant) {
        let problemsBefore = problems.count
        func problem(_ line: Int, _ message: String) { problems.append(Problem(line: line, message: message)) }
        /// A date or date-time property as a line of chime's rule: its TZID as the tz database names it.
        func written(_ property: Property, as name: String) -> ContentLine? {
            var line = ContentLine(name: name, value: property.value, line: property.line)
            if let value = property.parameters["VALUE"], value.uppercased() == "DATE" { line.parameters["VALUE"] = "DATE" }
            // A time in UTC says so itself (some writers add a TZID beside the Z: python's icalendar).
            if let tzid = property.parameters["TZID"], !property.value.hasSuffix("Z") {
                guard let zone = Values.zoneName(tzid, timeZones: timeZones) else {
                    problem(property.line, "TZID=\(tzid): not a zone chime knows (no tz database name, X-LIC-LOCATION or fixed offset says which)")
                    return nil
                }
                line.parameters["TZID"] = zone
            }
            return line
        }
        let startProperty = item.first("DTSTART") ?? (item.name == "VTODO" ? item.first("DUE") : nil)
        guard let startProperty else {
            return problem(item.line, "\(item.name) without \(item.name == "VTODO" ? "DTSTART or DUE" : "DTSTART"): its alarms have nothing to be relative to")
        }
        // The rule: the event's own recurrence (a moved instance: just its own start).
        // The lines as read, never written out and read again.
        var lines: [ContentLine] = []
        if let start = written(startProperty, as: "DTSTART") { lines.append(start) }
        if instance == nil {
            for rule in item.all("RRULE") { lines.append(ContentLine(name: "RRULE", value: rule.value, line: rule.line)) }
            for date in item.all("RDATE") { if let text = written(date, as: "RDATE") { lines.append(text) } }
            for date in item.all("EXDATE") + skipped { if let text = written(date, as: "EXDATE") { lines.append(text) } }
        }
        guard problems.count == problemsBefore else { return }
        let recurrence: Recurrence
        do throws(RuleError) { recurrence = try Recurrence(lines: lines) } catch {
            return problem(startProperty.line, "the event's recurrence: \(error.message)")
        }
        // The event's length, for alarms relative to its end.
        var length: Int64 = recurrence.start.isDate ? 86_400 : 0
        if let duration = item.first("DURATION").flatMap({ Values.duration($0.value) }) {
            length = duration
        } else if let end = item.first(item.name == "VTODO" ? "DUE" : "DTEND"), end != startProperty,
            let endLine = written(end, as: "DTSTART"), let endRecurrence = try? Recurrence(lines: [endLine])
        {
            let zone = Zone.system()
            length = endRecurrence.startInstant(floatingZone: zone) - recurrence.startInstant(floatingZone: zone)
        }

        var offsets: [Int64] = []
        var absolute: [(Instant, Int)] = []
        var sound: Sound?
        var alarmDescription: String?
        // chime's reminders come back from X-CHIME-REMIND, not from the VALARMs that show them elsewhere.
        // A snooze (RFC 9074) is an answer, read below, not an alarm of its own.
        for valarm in valarms where valarm.first("X-CHIME-REMINDER") == nil && !CalendarAnswers.isSnooze(valarm) {
            let action = valarm.first("ACTION")?.value.uppercased() ?? "DISPLAY"
            switch action {
            case "DISPLAY":
                if let text = valarm.first("DESCRIPTION")?.text, Self.meaningful(text, summary: item.first("SUMMARY")?.text) {
                    alarmDescription = text
                }
            case "AUDIO":
                let attached = Self.sound(valarm.first("ATTACH"))
                if case .file(let path)? = attached, !trust.chimeSettings, !Self.isInSoundFolders(path) {
                    notes.append(Problem(line: valarm.line, message: "ATTACH \(path) is outside the sound folders; the default sound rings"))
                    sound = sound ?? .default
                } else {
                    sound = attached ?? sound ?? .default
                }
            case "EMAIL":
                problem(valarm.line, "an EMAIL alarm: chime shows popups and plays sounds, it sends no mail")
                continue
            default:
                problem(valarm.line, "ACTION:\(action): chime's alarms show (DISPLAY) or sound (AUDIO)")
                continue
            }
            guard let trigger = valarm.first("TRIGGER") else {
                problem(valarm.line, "VALARM without TRIGGER: it never goes off")
                continue
            }
            var first: Int64
            if trigger.parameters["VALUE"]?.uppercased() == "DATE-TIME" {
                guard let at = try? Recurrence(lines: [ContentLine(name: "DTSTART", value: trigger.value, line: trigger.line)]) else {
                    problem(trigger.line, "TRIGGER:\(trigger.value) is not a date-time (YYYYMMDDTHHMMSSZ)")
                    continue
                }
                absolute.append((Instant(seconds: at.startInstant(floatingZone: .utc)), valarm.line))
                continue
            }
            guard let offset = Values.duration(trigger.value) else {
                problem(trigger.line, "TRIGGER:\(trigger.value) is not a duration (e.g. -PT15M)")
                continue
            }
            first = offset + (trigger.parameters["RELATED"]?.uppercased() == "END" ? length : 0)
            offsets.append(first)
            // REPEAT more times, DURATION apart.
            if let repeatText = valarm.first("REPEAT")?.value {
                guard let count = Int(repeatText), count >= 0, let every = valarm.first("DURATION").flatMap({ Values.duration($0.value) }),
                    every > 0
                else {
                    problem(valarm.line, "REPEAT needs a count and a positive DURATION")
                    continue
                }
                guard count < RequestBounds.offsetCount.upperBound else {
                    problem(valarm.line, "REPEAT:\(count): chime repeats an alarm at most \(RequestBounds.offsetCount.upperBound - 1) times")
                    continue
                }
                for k in 1...max(count, 1) where count > 0 { offsets.append(first + Int64(k) * every) }
            }
        }
        guard problems.count == problemsBefore else { return }

        // What the alarm says.
        var draft = AlarmDraft(kind: .alarm, anchor: anchor)
        // chime's own settings, from a calendar that is the person's own; in anyone else's they are
        // left out (and said once an event).
        let trusted = trust
        let own = { (name: String) -> String? in
            guard trusted.chimeSettings, trusted.insist || name != Own.insist else { return nil }
            return item.first(name)?.text
        }
        if !trust.chimeSettings, item.properties.contains(where: { $0.name.hasPrefix("X-CHIME-") }) {
            notes.append(Problem(line: item.line, message: "chime's settings (X-CHIME-*) are taken only from a calendar marked as your own; left out"))
        }
        let summary = item.first("SUMMARY").map { Self.line($0.text) } ?? ""
        draft.title = summary.isEmpty ? "(untitled \(item.name == "VTODO" ? "to-do" : "event"))" : summary
        var body: [String] = []
        if let location = item.first("LOCATION")?.text, !location.isEmpty { body.append(Self.clean(location)) }
        if let text = alarmDescription ?? item.first("DESCRIPTION")?.text, !text.isEmpty { body.append(Self.clean(String(text.prefix(2000)))) }
        draft.body = body.joined(separator: "\n")
        draft.label = own(Own.label) ?? calendarName
        draft.userInfo = [CalendarImport.uidKey: uid]
        // What was answered on the person's other machines (and their other programs): only from
        // their own calendar; in anyone else's, someone else's answer is not the person's.
        if trust.chimeSettings {
            let (acknowledged, snoozed) = CalendarAnswers.read(item)
            if let acknowledged { draft.userInfo?[CalendarAnswers.acknowledgedKey] = String(acknowledged.seconds) }
            if let snoozed { draft.userInfo?[CalendarAnswers.snoozedKey] = String(snoozed.seconds) }
        }
        draft.sound = sound
        if let name = own(Own.sound) { draft.sound = name == "default" ? .default : name.hasPrefix("/") ? .file(name) : .named(name) }
        if draft.sound != nil {
            draft.volume = own(Own.volume).flatMap { Int($0) }
            draft.fade = own(Own.fade).flatMap { Int64($0) }.map { .seconds($0) }
            draft.fadeFrom = own(Own.fadeFrom).flatMap { Int($0) }
            draft.ring = own(Own.ring).flatMap { Int64($0) }.map { .seconds($0) }
            draft.insist = own(Own.insist) == "TRUE" ? true : nil
        }
        draft.snooze = own(Own.snooze).flatMap { Int64($0) }.map { .seconds($0) }
        if let name = own(Own.urgency), let urgency = Urgency(name: name) { draft.urgency = urgency }
        draft.reminders = own(Own.remind).map { $0.split(separator: ",").compactMap { Int64($0) }.map { .seconds($0) } }
        draft.exceptions = own(Own.except).map { $0.split(separator: ",").compactMap { try? ExceptDate(parsing: String($0)) } }
        draft.until = own(Own.until).flatMap { Int64($0) }.map { .instant(Instant(seconds: $0)) }
        draft.notice = own(Own.notice).flatMap { Int64($0) }.map { .seconds($0) }
        draft.onHoliday = own(Own.onHoliday).flatMap { HolidayPolicy(rawValue: $0.lowercased()) }
        draft.timeZone = own(Own.zone)
        let enabled = own(CalendarEdit.disabled)?.uppercased() != "TRUE"
        // chime's own rule, where the event came from chime: the alarm comes back as it was written.
        let chimeRule = own(Own.rule)
        let identifier = own(Own.id) ?? Self.identifier(uid: uid, instance: instance)
        // chime's own rule does not read the event's EXDATEs: the occurrences they exclude (where it
        // fires for them) are its skipped ones (`chime skip`, on any machine, writes one).
        if chimeRule != nil, instance == nil, !item.all("EXDATE").isEmpty {
            var skipped: [Instant] = []
            let places = offsets.isEmpty ? [Int64(0)] : Array(Set(offsets)).sorted()
            for date in item.all("EXDATE") {
                for value in date.value.split(separator: ",") {
                    guard let line = written(ContentLine(name: "EXDATE", parameters: date.parameters, value: String(value), line: date.line), as: "DTSTART"),
                        let read = try? Recurrence(lines: [line])
                    else { continue }
                    let start = read.startInstant(floatingZone: Zone.system())
                    skipped += places.map { Instant(seconds: start + $0) }.filter { $0 > anchor }
                }
            }
            if !skipped.isEmpty { draft.skipped = Array(skipped.sorted().prefix(RequestBounds.skippedCount.upperBound - 1)) }
        }
        if !offsets.isEmpty {
            draft.identifier = identifier
            draft.when = chimeRule.map { .rule($0) } ?? .recurrence(recurrence)
            let places = Set(offsets).sorted()  // a DISPLAY and an AUDIO alarm at the same time are one
            draft.offsets = places == [0] ? [] : places.map { .seconds($0) }
            alarms.append(Alarm(draft: draft, line: item.line, uid: uid, named: own(Own.id) != nil, enabled: enabled))
        }
        for (index, (at, _)) in absolute.enumerated() {
            var one = draft
            one.identifier = identifier + "-at\(index + 1)"
            one.when = .instant(at)
            one.offsets = nil
            one.reminders = nil
            one.exceptions = nil
            one.until = nil
            alarms.append(Alarm(draft: one, line: item.line, uid: uid, named: own(Own.id) != nil, enabled: enabled))
        }
    }

    /// `ics-` and the UID where it makes a good identifier; else its letters and digits with a
    /// hash of the whole, so two UIDs never share one. A moved instance adds its RECURRENCE-ID.
    public static func identifier(uid: String, instance: Property?) -> String {
        // ASCII letters and digits (bytes: Unicode's letter property, asked of each, was 1% of a big calendar).
        func isLetterOrDigit(_ b: UInt8) -> Bool { (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") || b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
        let allowed = uid.utf8.allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "-") }
        var base: String
        if allowed, uid.utf8.count <= 120 {
            base = uid
        } else {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in uid.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            let kept = String(decoding: uid.utf8.filter(isLetterOrDigit).prefix(80), as: UTF8.self)
            let hex = String(hash, radix: 16)
            base = (kept.isEmpty ? "" : kept + "-") + String(repeating: "0", count: 16 - hex.count) + hex
        }
        if let instance { base += "-" + instance.value.filter { $0.isASCII && ($0.isNumber || $0 == "T" || $0 == "Z") } }
        return "ics-" + base
    }

    /// A sound a VALARM attaches: a local file (`file:///...` or a path); nil for anything else.
    static func sound(_ attach: Property?) -> Sound? {
        guard let value = attach?.value else { return nil }
        var path = value
        if path.hasPrefix("file://") { path = String(path.dropFirst(7)) }
        guard path.hasPrefix("/") else { return nil }
        return .file(percentDecoded(path))
    }

    /// Whether `path` is a sound of the person's sound folders or the sound theme's:
    /// `$XDG_DATA_HOME/sounds` (`~/.local/share/sounds`) and `sounds` in each of `$XDG_DATA_DIRS`
    /// (`/usr/local/share`, `/usr/share`), with no `..` to climb out of them.
    static func isInSoundFolders(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard path.hasPrefix("/"), !parts.contains(".."), !parts.contains(".") else { return false }
        return soundFolders().contains { path.hasPrefix($0 + "/") }
    }

    static func soundFolders() -> [String] {
        soundDataRoots().map { ($0.hasSuffix("/") ? String($0.dropLast()) : $0) + "/sounds" }
    }

    static func percentDecoded(_ text: String) -> String {
        guard text.contains("%") else { return text }
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "%"), iterator.count >= 2, let value = UInt8(String(decoding: iterator.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                iterator = iterator.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether a DISPLAY alarm's description says something of its own (programs fill it with a
    /// placeholder or the summary).
    static func meaningful(_ text: String, summary: String?) -> Bool {
        let trimmed = text.trimmingCharacters(" \n")
        return !trimmed.isEmpty && trimmed != summary && trimmed != "Default Mozilla Description" && trimmed != "Reminder"
            && trimmed != "This is an event reminder"
    }

    /// One line of text: control characters and line breaks become spaces.
    static func line(_ text: String) -> String {
        // Most text has no control character: only its ends are looked at then.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return text.trimmingCharacters(" ") }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
            .trimmingCharacters(" ")
    }

    /// Text for a body: line breaks and tabs kept, other control characters dropped.
    static func clean(_ text: String) -> String {
        guard text.utf8.contains(where: { ($0 < 0x20 && $0 != 0x0A && $0 != 0x09) || $0 == 0x7F }) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F || $0 == "\n" || $0 == "\t" }))
    }
}
