// One definition of a valid request, used at every door: the command line, the
// alarm file, every D-Bus method, and the store when it reads a request back.
// Every field has a bound here, and nothing else in chime decides what is valid.
import Synchronization
import Timekeeping

/// A field of a request, named as the D-Bus interface names its key (docs/dbus-interface.md).
/// The command line and the alarm file translate these to their own option and key names.
public enum RequestField: String, Hashable, Sendable, CaseIterable {
    case id, title, subtitle, body, label, icon, category, urgency
    case sound
    case soundFile = "sound-file"
    case volume, fade, insist
    case fadeFrom = "fade-from"
    case bodyMarkup = "body-markup"
    case actions
    case userInfo = "user-info"
    case expire, persistent, snooze, grace
    case ring
    case autoSnooze = "auto-snooze"
    case wake, dnd
    case bodyCommand = "body-command"
    case bodyTimeout = "body-timeout"
    case bodyOutputLimit = "body-output-limit"
    case rule, at, repeats
    case timeZone = "time-zone"
    case offset
    case remind
    case except
    case until, count
    case onHoliday = "on-holiday"
    case notice
    /// The calendar chime writes the alarm into (`Add` only: where it lives, not what it is).
    case calendar
    /// Into the alarm file's `[defaults] calendar` when it names one (`chime at`).
    case calendarDefault = "calendar-default"
    case anchor, skipped
    /// `anchor` and `skipped` exactly, in nanoseconds since the epoch (what `Get` answers beside them).
    case anchorNanoseconds = "anchor-ns"
    case skippedNanoseconds = "skipped-ns"
    /// The phrase `rule` was read from, as it was typed: shown as written, never read.
    case said

    /// The keys only `Get` answers (a stored request's), which no caller may send.
    var isStoredOnly: Bool { [.anchor, .skipped, .anchorNanoseconds, .skippedNanoseconds].contains(self) }
}

/// Why a request is refused: the field and the bound it broke, in one sentence.
///
/// ```swift
/// try request.validate(now: clock.now())
/// // RequestError: "snooze: must be at most 7d, got 15000w"
/// ```
public struct RequestError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// A field is missing, of the wrong type, or outside its bound.
        case invalid
        /// The request is valid but can never fire (a one-off in the past, a date that never comes).
        case neverFires
    }

    /// The key the error is about (a `RequestField`'s name, or an unknown key as given).
    public var key: String
    public var message: String
    public var kind: Kind
    /// For an unreadable rule: the offending part's offset in the rule text (in characters) and length.
    public var offset: Int?
    public var length: Int?

    public init(_ field: RequestField, _ message: String, kind: Kind = .invalid) {
        self.init(key: field.rawValue, message, kind: kind)
    }

    public init(key: String, _ message: String, kind: Kind = .invalid) {
        self.key = key
        self.message = message
        self.kind = kind
    }

    /// The field, when the key is one.
    public var field: RequestField? { RequestField(rawValue: key) }

    public var description: String { "\(key): \(message)" }
}

/// A volume as a person writes it: `70` or `70%` (whole percent); nil when it is not one.
public func parsePercent(_ text: String) -> Int? {
    let digits = text.hasSuffix("%") ? text.dropLast() : Substring(text)
    guard !digits.isEmpty, digits.count <= 6, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
    return Int(digits)
}

/// The bounds of every field of a request (documented in docs/dbus-interface.md).
public enum RequestBounds {
    /// Identifiers: printable UTF-8 of 1-200 bytes.
    public static let identifierBytes = 1...200
    public static let titleBytes = 1...1024
    public static let subtitleBytes = 0...1024
    public static let bodyBytes = 0...65_536
    public static let labelBytes = 0...200
    /// An icon: a theme name or a file path.
    public static let iconBytes = 0...4096
    public static let categoryBytes = 0...200
    /// A sound-theme name (no `/`).
    public static let soundNameBytes = 1...255
    /// A sound file: an absolute path.
    public static let soundFileBytes = 2...4096
    /// The sound's own volume in percent of the file as recorded (0 would be silent).
    public static let volume = 1...100
    /// From silence to the volume.
    public static let fade = TimeSpan.zero...TimeSpan.seconds(3600)
    /// The percent of its volume a fade starts from.
    public static let fadeFrom = 0...99
    public static let actionCount = 0...8
    public static let actionIdentifierBytes = 1...64
    public static let actionTitleBytes = 1...100
    public static let userInfoCount = 0...32
    public static let userInfoKeyBytes = 1...200
    public static let userInfoValueBytes = 0...4096
    public static let expire = TimeSpan.seconds(1)...TimeSpan.seconds(86_400)
    public static let snooze = TimeSpan.seconds(1)...TimeSpan.seconds(7 * 86_400)
    public static let grace = TimeSpan.zero...TimeSpan.seconds(366 * 86_400)
    /// How long a sound may ring (0: once).
    public static let ring = TimeSpan.zero...TimeSpan.seconds(3600)
    public static let bodyCommandArguments = 1...64
    public static let bodyCommandArgumentBytes = 0...4096
    public static let bodyTimeout = TimeSpan.seconds(1)...TimeSpan.seconds(60)
    public static let bodyOutputLimit = 1...65_536
    /// Rule text, before it is parsed (an iCalendar recurrence may list many EXDATEs).
    public static let ruleBytes = 1...Rule.maximumBytes
    /// Where an alarm fires relative to its rule's occurrences: how many places, and how far.
    public static let offsetCount = 0...16
    public static let offset = TimeSpan.seconds(-366 * 86_400)...TimeSpan.seconds(366 * 86_400)
    /// Reminders before each occurrence: how many, and how long before.
    public static let reminderCount = 0...8
    public static let reminder = TimeSpan.seconds(1)...TimeSpan.seconds(366 * 86_400)
    /// Days or months left out.
    public static let exceptionCount = 0...1000
    /// Occurrences in all (`count`).
    public static let count = 1...10_000
    /// Occurrences skipped and still ahead.
    public static let skippedCount = 0...1000
    /// An interval: at least a second, at most ten years.
    public static let interval = TimeSpan.seconds(1)...TimeSpan.seconds(3650 * 86_400)
    /// Every instant a request names (anchors, one-off times): 1970 to the end of 2199.
    public static let instants = Instant.earliest...Instant.latest
    public static let timeZoneBytes = 1...255
}

extension NotificationRequest {
    /// Checks every field against `RequestBounds`; with `now`, also that the request fires at
    /// least once after `now` (a one-off in the past is refused). The store checks what it reads
    /// back without `now`: a stored one-off may have fired already.
    public func validate(now: Instant? = nil) throws(RequestError) {
        try Self.validateIdentifier(identifier)
        try content.validate()
        try trigger.validate()
        if let now, trigger.nextFire(after: now) == nil {
            throw RequestError(trigger.rule.isInstant ? .at : .rule, trigger.neverFiresReason(now: now), kind: .neverFires)
        }
    }

    /// Printable UTF-8 of 1-200 bytes: what `chime list` can show and `chime cancel` can take.
    public static func validateIdentifier(_ identifier: String) throws(RequestError) {
        try checkText(identifier, .id, RequestBounds.identifierBytes, allowing: .none)
    }
}

extension Sound {
    /// A theme name within its bound and without `/`; a file an absolute path within its bound.
    public func validate() throws(RequestError) {
        switch self {
        case .default: break
        case .named(let name):
            try checkText(name, .sound, RequestBounds.soundNameBytes, allowing: .none)
            if name.utf8.contains(UInt8(ascii: "/")) {
                throw RequestError(.sound, "a sound-theme name has no '/'; give a file as sound-file")
            }
        case .file(let path):
            try checkText(path, .soundFile, RequestBounds.soundFileBytes, allowing: .none)
            guard path.utf8.first == UInt8(ascii: "/") else {
                throw RequestError(.soundFile, "must be an absolute path, got \(quotedForMessage(path))")
            }
        }
    }
}

extension NotificationContent {
    public func validate() throws(RequestError) {
        try checkText(title, .title, RequestBounds.titleBytes, allowing: .tabs)
        try checkText(subtitle, .subtitle, RequestBounds.subtitleBytes, allowing: .tabs)
        try checkText(body, .body, RequestBounds.bodyBytes, allowing: .lines)
        try checkText(label, .label, RequestBounds.labelBytes, allowing: .none)
        try checkText(icon, .icon, RequestBounds.iconBytes, allowing: .none)
        try checkText(category, .category, RequestBounds.categoryBytes, allowing: .none)
        try sound?.validate()
        try checkCount(actions.count, .actions, RequestBounds.actionCount, "actions")
        var seen: [String] = []
        for action in actions {
            try checkText(action.identifier, .actions, RequestBounds.actionIdentifierBytes, allowing: .none, part: "an action's identifier")
            try checkText(action.title, .actions, RequestBounds.actionTitleBytes, allowing: .none, part: "an action's title")
            if seen.contains(action.identifier) {
                throw RequestError(.actions, "the action \(quotedForMessage(action.identifier)) is given twice")
            }
            seen.append(action.identifier)
        }
        try checkCount(userInfo.count, .userInfo, RequestBounds.userInfoCount, "entries")
        for (key, value) in userInfo {
            try checkText(key, .userInfo, RequestBounds.userInfoKeyBytes, allowing: .none, part: "a key")
            try checkText(value, .userInfo, RequestBounds.userInfoValueBytes, allowing: .lines, part: "a value")
        }
        if case .after(let span) = expiry { try checkSpan(span, .expire, RequestBounds.expire) }
        if let snooze { try checkSpan(snooze, .snooze, RequestBounds.snooze) }
        if let grace { try checkSpan(grace, .grace, RequestBounds.grace) }
        if let ring { try checkSpan(ring, .ring, RequestBounds.ring) }
        if autoSnooze, !rings {
            throw RequestError(.autoSnooze, "needs a sound that rings (a sound and a ring time above 0)")
        }
        if let volume, !RequestBounds.volume.contains(volume) {
            throw RequestError(.volume, "must be \(range(RequestBounds.volume)) percent, got \(volume)")
        }
        if let fade { try checkSpan(fade, .fade, RequestBounds.fade) }
        if let fadeFrom {
            guard RequestBounds.fadeFrom.contains(fadeFrom) else {
                throw RequestError(.fadeFrom, "must be \(range(RequestBounds.fadeFrom)) percent of the volume, got \(fadeFrom)")
            }
            guard let fade, fade > .zero else { throw RequestError(.fadeFrom, "needs a fade (the level a fade starts from)") }
        }
        if sound == nil {
            if volume != nil { throw RequestError(.volume, "needs a sound") }
            if fade != nil { throw RequestError(.fade, "needs a sound") }
            if insist { throw RequestError(.insist, "needs a sound") }
        }
        if let fade, rings, let ring, fade > ring {
            throw RequestError(.fade, "must be at most the ring time (\(ring)), got \(fade): the ring would end before the sound is at its volume")
        }
        if let command = bodyCommand {
            try checkCount(command.arguments.count, .bodyCommand, RequestBounds.bodyCommandArguments, "words")
            for argument in command.arguments {
                try checkText(argument, .bodyCommand, RequestBounds.bodyCommandArgumentBytes, allowing: .all, part: "a word")
            }
            if command.arguments[0].isEmpty { throw RequestError(.bodyCommand, "the program (its first word) is empty") }
            try checkSpan(command.timeLimit, .bodyTimeout, RequestBounds.bodyTimeout)
            guard RequestBounds.bodyOutputLimit.contains(command.outputLimit) else {
                throw RequestError(.bodyOutputLimit, "must be \(range(RequestBounds.bodyOutputLimit)) bytes, got \(command.outputLimit)")
            }
        }
    }
}

extension NotificationContent {
    /// Whether its sound repeats until answered.
    public var rings: Bool { sound != nil && (ring ?? .zero) > .zero }
}

extension Trigger {
    public func validate() throws(RequestError) {
        guard RequestBounds.instants.contains(anchor) else {
            throw RequestError(.anchor, "must lie in 1970-2199, got \(anchor.seconds) s since the epoch")
        }
        if let timeZone { try Self.validateTimeZone(timeZone) }
        try checkCount(offsets.count, .offset, RequestBounds.offsetCount, "offsets")
        for offset in offsets where !RequestBounds.offset.contains(offset) {
            throw RequestError(.offset, "must be within 366 days of the occurrence, got \(offset.seconds) s")
        }
        try checkCount(reminders.count, .remind, RequestBounds.reminderCount, "reminders")
        for lead in reminders { try checkSpan(lead, .remind, RequestBounds.reminder, what: "a reminder") }
        if let notice { try checkSpan(notice, .notice, RequestBounds.reminder, what: "a notice") }
        try checkCount(exceptions.count, .except, RequestBounds.exceptionCount, "dates")
        try checkCount(skipped.count, .skipped, RequestBounds.skippedCount, "occurrences")
        if let said { try checkText(said, .said, RequestBounds.ruleBytes, allowing: .none) }
        if let until, !RequestBounds.instants.contains(until) {
            throw RequestError(.until, "must lie in 1970-2199, got \(until.seconds) s since the epoch")
        }
        if let count, !RequestBounds.count.contains(count) {
            throw RequestError(.count, "must be \(range(RequestBounds.count)), got \(count)")
        }
        if !repeats {
            if until != nil { throw RequestError(.until, "ends a repeating rule; this one fires once") }
            if count != nil { throw RequestError(.count, "ends a repeating rule; this one fires once") }
            if !exceptions.isEmpty { throw RequestError(.except, "leaves days out of a repeating rule; this one fires once") }
        }
        switch rule {
        case .instant(let instant):
            guard RequestBounds.instants.contains(instant) else {
                throw RequestError(.at, "must lie in 1970-2199, got \(instant.seconds) s since the epoch")
            }
        case .interval(let span, _):
            try checkSpan(span, .rule, RequestBounds.interval, what: "an interval")
        case .calendar(let expression):
            // Kept as the text it prints: a rule that would not read back as itself (once, "16:35 Z")
            // would be quarantined when due and never ring, so it is refused now.
            let text = expression.description
            guard (try? CalendarExpression(parsing: text)) == expression else {
                throw RequestError(.rule, "\(quotedForMessage(text)) does not read back as the same rule; write it another way")
            }
        case .recurrence:
            break  // kept as the text it was read from
        }
    }

    /// A zone of the tz database, named as it names them (`Europe/Berlin`, `UTC`): never a path.
    public static func validateTimeZone(_ name: String) throws(RequestError) {
        if zonesFound.withLock({ $0.contains(name) }) { return }
        try checkText(name, .timeZone, RequestBounds.timeZoneBytes, allowing: .none)
        do throws(ZoneError) {
            _ = try Zone.named(name)
        } catch {
            throw RequestError(.timeZone, "\(error)")
        }
        zonesFound.withLock { _ = $0.insert(name) }
    }

    /// Why a trigger has no occurrence after `now`, in words.
    public func neverFiresReason(now: Instant) -> String {
        // What ends it, when that is why: the rule alone still fires.
        if let next = rule.nextFire(after: now, anchor: anchor, repeats: repeats, in: zone) {
            if let until, next > until { return "it ends (until \(zone.iso8601(until))) before its next occurrence (\(zone.iso8601(next)))" }
            if let countEnd, next > countEnd { return "its \(count ?? 0) occurrences have all passed" }
            return "every occurrence it has left is excepted or skipped"
        }
        return switch rule {
        case .instant(let t): "\(t.seconds) s since the epoch is in the past"
        case .interval: "the interval has already passed"
        case .calendar(let expression):
            // Its first occurrence at all: one that has passed makes it a date in the past.
            if let first = expression.nextElapse(after: -1, in: zone), Instant(seconds: first) <= now {
                "\(expression) is in the past"
            } else {
                "\(expression) never happens before the end of 2199"
            }
        case .recurrence(let recurrence):
            if let first = recurrence.next(after: Instant.earliest.seconds - 1, floatingZone: zone), Instant(seconds: first) <= now {
                "its occurrences have all passed"
            } else {
                "it has no occurrence before the end of 2199"
            }
        }
    }
}

extension Rule {
    var isInstant: Bool {
        if case .instant = self { return true }
        return false
    }
}

// MARK: - The checks

/// Zone names this process has found in the tz database: an alarm file of 10,000 alarms names
/// the same few zones again and again, and finding one costs a `stat`.
private let zonesFound = Mutex<Set<String>>([])

/// Which characters below U+0020 a text field may hold (NUL never: D-Bus strings cannot carry it).
enum ControlCharacters {
    case none, tabs, lines, all
}

func checkText(_ text: String, _ field: RequestField, _ bytes: ClosedRange<Int>, allowing allowed: ControlCharacters,
               part: String? = nil) throws(RequestError) {
    let count = text.utf8.count
    let subject = part.map { "\($0) " } ?? ""
    guard bytes.contains(count) else {
        if count == 0 { throw RequestError(field, "\(subject.isEmpty ? "" : subject)must not be empty") }
        throw RequestError(field, "\(subject)must be \(range(bytes)) bytes, got \(count)")
    }
    // Most text has no control character at all: its bytes say so without decoding it (C0 and DEL
    // are bytes of their own, C1 is 0xC2 0x80-0x9F).
    var text = text
    let plain = text.withUTF8 { bytes in !bytes.contains { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 } }
    if plain { return }
    for scalar in text.unicodeScalars {
        let v = scalar.value
        if v == 0 { throw RequestError(field, "\(subject)contains a NUL character") }
        let isControl = v < 0x20 || (0x7F...0x9F).contains(v)
        guard isControl else { continue }
        let fine = switch allowed {
        case .none: false
        case .tabs: v == 0x09
        case .lines: v == 0x09 || v == 0x0A || v == 0x0D
        case .all: true
        }
        if !fine {
            throw RequestError(field, "\(subject)contains the control character U+\(hex4(v)); \(allowed == .none ? "only printable text is allowed" : "it is not allowed here")")
        }
    }
}

func checkCount(_ count: Int, _ field: RequestField, _ bound: ClosedRange<Int>, _ noun: String) throws(RequestError) {
    guard bound.contains(count) else { throw RequestError(field, "must have \(range(bound)) \(noun), got \(count)") }
}

func checkSpan(_ span: TimeSpan, _ field: RequestField, _ bound: ClosedRange<TimeSpan>, what: String? = nil) throws(RequestError) {
    guard bound.contains(span) else {
        let subject = what.map { "\($0) " } ?? ""
        throw RequestError(field, "\(subject)must be \(bound.lowerBound)-\(bound.upperBound), got \(span)")
    }
    guard span.nanoseconds % 1_000_000_000 == 0 else {
        throw RequestError(field, "must be a whole number of seconds, got \(span)")
    }
}

private func range(_ bound: ClosedRange<Int>) -> String {
    bound.lowerBound == 0 ? "at most \(bound.upperBound)" : "\(bound.lowerBound)-\(bound.upperBound)"
}

private func hex4(_ value: UInt32) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
