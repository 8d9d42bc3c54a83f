import Notifications
import Timekeeping

/// A sound to play with a notification.
public enum Sound: Hashable, Sendable, Codable {
    /// chime's default alarm sound (the theme's `alarm-clock-elapsed`).
    case `default`
    /// A name from the freedesktop sound theme, e.g. `bell`, `complete`.
    case named(String)
    /// A sound file.
    case file(String)

    /// The theme name the default sound stands for.
    public static let defaultName = "alarm-clock-elapsed"

    /// The hint a server that plays sounds gets.
    public var hint: Hint {
        switch self {
        case .default: .soundName(Sound.defaultName)
        case .named(let name): .soundName(name)
        case .file(let path): .soundFile(path)
        }
    }

    private enum CodingKeys: String, CodingKey { case kind, value }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        switch try c.decode(String.self, forKey: .kind) {
        case "named": self = .named(try c.decode(String.self, forKey: .value))
        case "file": self = .file(try c.decode(String.self, forKey: .value))
        default: self = .default  // "default", and kinds from a newer schema
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .default: try c.encode("default", forKey: .kind)
        case .named(let name):
            try c.encode("named", forKey: .kind)
            try c.encode(name, forKey: .value)
        case .file(let path):
            try c.encode("file", forKey: .kind)
            try c.encode(path, forKey: .value)
        }
    }
}

/// A button on a notification: an identifier reported back and a title shown.
public struct NotificationAction: Hashable, Sendable, Codable {
    public var identifier: String
    public var title: String

    public init(identifier: String, title: String) {
        self.identifier = identifier
        self.title = title
    }

    /// Snooze: the scheduler re-arms the alarm after its snooze time.
    public static let snooze = NotificationAction(identifier: "snooze", title: "Snooze")
    /// Dismiss: take the notification down.
    public static let dismiss = NotificationAction(identifier: "dismiss", title: "Dismiss")
    /// On a notice or reminder before an occurrence: skip that occurrence (as `chime skip`).
    public static let skipOccurrence = NotificationAction(identifier: "skip", title: "Skip this one")
    /// On a notice whose occurrence was skipped: bring it back.
    public static let undoSkip = NotificationAction(identifier: "undo-skip", title: "Undo")
    /// On a notice: open the app.
    public static let open = NotificationAction(identifier: "open", title: "Open")
}

/// A program whose standard output becomes an alarm's body when it fires (the
/// homeroom alarm's "today: 23 students"): an argument vector, run without a
/// shell, stopped after `timeLimit`, its output cut at `outputLimit` bytes. A
/// command that fails leaves the static body with a short note.
public struct BodyCommand: Hashable, Sendable, Codable {
    public var arguments: [String]
    /// How long before the command is killed (1-60 s).
    public var timeLimit: TimeSpan
    /// Bytes of standard output kept (1-65536).
    public var outputLimit: Int

    public static let defaultTimeLimit = TimeSpan.seconds(5)
    public static let defaultOutputLimit = 4096

    public init(arguments: [String], timeLimit: TimeSpan = defaultTimeLimit, outputLimit: Int = defaultOutputLimit) {
        self.arguments = arguments
        self.timeLimit = timeLimit
        self.outputLimit = outputLimit
    }

    private enum CodingKeys: String, CodingKey { case arguments, timeLimit, outputLimit }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(arguments: try c.decode([String].self, forKey: .arguments),
                  timeLimit: .seconds(try c.decodeIfPresent(Int64.self, forKey: .timeLimit) ?? Self.defaultTimeLimit.seconds),
                  outputLimit: try c.decodeIfPresent(Int.self, forKey: .outputLimit) ?? Self.defaultOutputLimit)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(arguments, forKey: .arguments)
        try c.encode(timeLimit.seconds, forKey: .timeLimit)
        try c.encode(outputLimit, forKey: .outputLimit)
    }
}

/// What a notification says and how: the `UNNotificationContent` of chime.
///
/// Every field but `title` may be missing from a stored document (older or newer
/// schemas decode); unknown fields are ignored.
public struct NotificationContent: Hashable, Sendable, Codable {
    public var title: String
    public var subtitle: String = ""
    public var body: String = ""
    /// The user's name for the alarm, e.g. "homeroom"; shown by `chime list`.
    public var label: String = ""
    public var sound: Sound? = nil
    public var urgency: Urgency = .normal
    /// A theme icon name or a file path.
    public var icon: String = ""
    /// A notification category such as `x-chime.alarm` or `email.arrived`.
    public var category: String = ""
    public var actions: [NotificationAction] = []
    public var expiry: Expiry = .serverDefault
    /// Whether `body` is markup (`<b>`, `<i>`, `<a href>`) rather than plain text.
    public var bodyIsMarkup = false
    /// Small string data for the application.
    public var userInfo: [String: String] = [:]
    /// How long Snooze waits (the scheduler's default, 10 minutes, when nil).
    public var snooze: TimeSpan? = nil
    /// How long after its time a missed occurrence is still shown (the scheduler's default, 1 hour, when nil).
    public var grace: TimeSpan? = nil
    /// A program that writes the body at fire time.
    public var bodyCommand: BodyCommand? = nil
    /// How long the sound repeats until Dismiss or Snooze is pressed (nil or zero: it plays once).
    /// `chime at`/`in`/`timer` and the alarm file give alarms `RingPolicy.defaultRing`.
    public var ring: TimeSpan? = nil
    /// Whether an alarm whose ring time ends unanswered snoozes itself.
    public var autoSnooze = false
    /// The sound's own volume in percent (nil: 100, the file as recorded), on the sound server's
    /// scale, independent of other programs' sounds.
    public var volume: Int? = nil
    /// How long the sound takes to rise from silence (or `fadeFrom`) to its volume (nil: no fade).
    public var fade: TimeSpan? = nil
    /// The level the fade starts from, in percent of the volume as the sound server's scale shows it
    /// (nil: silence).
    public var fadeFrom: Int? = nil
    /// Whether the sound must be heard: a muted or turned-down output is unmuted and raised for the
    /// ring, and put back as it was afterwards.
    public var insist = false
    /// Whether the machine is woken from suspend for it (`--wake`).
    public var wake = false
    /// Told not to wake the machine (`wake = false`, `--no-wake`): a phone, which otherwise wakes
    /// for every alarm with a sound, leaves it asleep. (Neither this nor `wake`: the machine decides.)
    public var stayAsleep = false
    /// What happens while the notification server's do-not-disturb is on (nil: `.breakThrough`).
    public var doNotDisturb: DoNotDisturbPolicy? = nil

    public init(title: String, subtitle: String = "", body: String = "", label: String = "", sound: Sound? = nil,
                urgency: Urgency = .normal, icon: String = "", category: String = "", actions: [NotificationAction] = [],
                expiry: Expiry = .serverDefault, bodyIsMarkup: Bool = false, userInfo: [String: String] = [:]) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.label = label
        self.sound = sound
        self.urgency = urgency
        self.icon = icon
        self.category = category
        self.actions = actions
        self.expiry = expiry
        self.bodyIsMarkup = bodyIsMarkup
        self.userInfo = userInfo
    }

    /// How long the popup stays.
    public enum Expiry: Hashable, Sendable, Codable {
        case serverDefault
        case never
        /// Closed after this long (whole seconds; chime closes it if the server does not).
        case after(TimeSpan)

        var expiration: Expiration {
            switch self {
            case .serverDefault: .serverDefault
            case .never: .never
            case .after(let span): .milliseconds(Int32(clamping: max(1, span.milliseconds)))
            }
        }

        // Stored as chime 0.1 wrote it: {"serverDefault":{}}, {"never":{}}, {"seconds":{"_0":300}}.
        private enum CodingKeys: String, CodingKey { case serverDefault, never, seconds }
        private enum SecondsKeys: String, CodingKey { case value = "_0" }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            if c.contains(.seconds) {
                let inner = try c.nestedContainer(keyedBy: SecondsKeys.self, forKey: .seconds)
                self = .after(.seconds(try inner.decode(Int64.self, forKey: .value)))
            } else if c.contains(.never) {
                self = .never
            } else {
                self = .serverDefault
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .serverDefault: _ = c.nestedContainer(keyedBy: SecondsKeys.self, forKey: .serverDefault)
            case .never: _ = c.nestedContainer(keyedBy: SecondsKeys.self, forKey: .never)
            case .after(let span):
                var inner = c.nestedContainer(keyedBy: SecondsKeys.self, forKey: .seconds)
                try inner.encode(span.seconds, forKey: .value)
            }
        }
    }

    private enum CodingKeys: String, CodingKey {
        case title, subtitle, body, label, sound, urgency, icon, category, actions, expiry, bodyIsMarkup, userInfo
        case snooze, grace, bodyCommand, ring, autoSnooze, wake, doNotDisturb, volume, fade, fadeFrom, insist
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        title = try c.decode(String.self, forKey: .title)
        subtitle = try c.decodeIfPresent(String.self, forKey: .subtitle) ?? ""
        body = try c.decodeIfPresent(String.self, forKey: .body) ?? ""
        label = try c.decodeIfPresent(String.self, forKey: .label) ?? ""
        sound = try c.decodeIfPresent(Sound.self, forKey: .sound)
        let urgencyName = try c.decodeIfPresent(String.self, forKey: .urgency) ?? "normal"
        urgency = Urgency(name: urgencyName) ?? .normal
        icon = try c.decodeIfPresent(String.self, forKey: .icon) ?? ""
        category = try c.decodeIfPresent(String.self, forKey: .category) ?? ""
        actions = try c.decodeIfPresent([NotificationAction].self, forKey: .actions) ?? []
        expiry = try c.decodeIfPresent(Expiry.self, forKey: .expiry) ?? .serverDefault
        bodyIsMarkup = try c.decodeIfPresent(Bool.self, forKey: .bodyIsMarkup) ?? false
        userInfo = try c.decodeIfPresent([String: String].self, forKey: .userInfo) ?? [:]
        snooze = try c.decodeIfPresent(Int64.self, forKey: .snooze).map { .seconds($0) }
        grace = try c.decodeIfPresent(Int64.self, forKey: .grace).map { .seconds($0) }
        bodyCommand = try c.decodeIfPresent(BodyCommand.self, forKey: .bodyCommand)
        ring = try c.decodeIfPresent(Int64.self, forKey: .ring).map { .seconds($0) }
        autoSnooze = try c.decodeIfPresent(Bool.self, forKey: .autoSnooze) ?? false
        volume = try c.decodeIfPresent(Int.self, forKey: .volume)
        fade = try c.decodeIfPresent(Int64.self, forKey: .fade).map { .seconds($0) }
        fadeFrom = try c.decodeIfPresent(Int.self, forKey: .fadeFrom)
        insist = try c.decodeIfPresent(Bool.self, forKey: .insist) ?? false
        let wakes = try c.decodeIfPresent(Bool.self, forKey: .wake)
        wake = wakes == true
        stayAsleep = wakes == false
        // A policy from a newer chime reads as the default.
        doNotDisturb = (try? c.decodeIfPresent(String.self, forKey: .doNotDisturb)).flatMap { $0.flatMap(DoNotDisturbPolicy.init(rawValue:)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(title, forKey: .title)
        try c.encode(subtitle, forKey: .subtitle)
        try c.encode(body, forKey: .body)
        try c.encode(label, forKey: .label)
        try c.encodeIfPresent(sound, forKey: .sound)
        try c.encode(urgency.name, forKey: .urgency)
        try c.encode(icon, forKey: .icon)
        try c.encode(category, forKey: .category)
        try c.encode(actions, forKey: .actions)
        try c.encode(expiry, forKey: .expiry)
        try c.encode(bodyIsMarkup, forKey: .bodyIsMarkup)
        try c.encode(userInfo, forKey: .userInfo)
        try c.encodeIfPresent(snooze?.seconds, forKey: .snooze)
        try c.encodeIfPresent(grace?.seconds, forKey: .grace)
        try c.encodeIfPresent(bodyCommand, forKey: .bodyCommand)
        try c.encodeIfPresent(ring?.seconds, forKey: .ring)
        if autoSnooze { try c.encode(true, forKey: .autoSnooze) }
        try c.encodeIfPresent(volume, forKey: .volume)
        try c.encodeIfPresent(fade?.seconds, forKey: .fade)
        try c.encodeIfPresent(fadeFrom, forKey: .fadeFrom)
        if insist { try c.encode(true, forKey: .insist) }
        if wake { try c.encode(true, forKey: .wake) } else if stayAsleep { try c.encode(false, forKey: .wake) }
        try c.encodeIfPresent(doNotDisturb?.rawValue, forKey: .doNotDisturb)
    }
}

/// What an alarm does while the notification server's do-not-disturb (Focus) is on.
public enum DoNotDisturbPolicy: String, Hashable, Sendable, CaseIterable {
    /// Shown as the server lets through what matters: critical urgency (and dunst's pause level).
    case breakThrough = "break-through"
    /// Held until do-not-disturb ends, then shown, marked late.
    case `defer`
    /// Recorded as delivered, with no popup and no sound.
    case silent
}

/// What an alarm does where its request does not say: the one place these numbers are written.
public enum AlarmDefaults {
    /// How long Snooze waits unless the alarm says otherwise (`--snooze`).
    public static let snooze = TimeSpan.seconds(600)
    /// How long after its due time a missed occurrence is still shown (`--grace`).
    public static let grace = TimeSpan.seconds(3600)
    /// How long an alarm with a sound rings (`--ring`): `RingPolicy.defaultRing`.
    public static var ring: TimeSpan { RingPolicy.defaultRing }
    /// An alarm's icon: chime's own, installed in hicolor (which every icon theme falls back to).
    /// "alarm-clock" is in no theme Debian ships, and GNOME Shell drew a placeholder for it.
    public static let icon = "chime"
    /// The notification categories of chime's alarms and timers.
    public static let alarmCategory = "x-chime.alarm"
    public static let timerCategory = "x-chime.timer"
    /// The category of a reminder before an alarm (`--remind`).
    public static let reminderCategory = "x-chime.reminder"
    /// What a do-not-disturb policy is when none is given: the alarm breaks through.
    public static let doNotDisturb = DoNotDisturbPolicy.breakThrough
}

/// How long alarms ring.
public enum RingPolicy {
    /// What `chime at`, `in`, `timer` and the alarm file give an alarm with a sound: five minutes,
    /// as a clock app's alarm rings (a one-second bell is easy to sleep through).
    public static let defaultRing = TimeSpan.seconds(300)
    /// How often a server that plays sounds itself is sent the alarm again while it rings.
    public static let serverRepeat = TimeSpan.seconds(5)
}

/// When a request fires: a rule, whether it repeats, the zone it is evaluated
/// in (the system's when nil) and when it was set (intervals count from then).
public struct Trigger: Hashable, Sendable, Codable {
    public var rule: Rule
    public var repeats: Bool
    public var timeZone: String?
    /// When the trigger was set. An egg timer set at 12:00:00.7 for 5 minutes fires at
    /// 12:05:00.7, not up to a second early; calendar rules fire on the second.
    public var anchor: Instant
    /// Where the alarm fires relative to each occurrence of its rule (negative: before), as a
    /// calendar's alarms do (`TRIGGER:-PT15M`); empty: at it. Exceptions and skips apply to the
    /// times it fires.
    public var offsets: [TimeSpan] = []
    /// A reminder popup this long before each occurrence (`--remind 15m,1d`), shortest first.
    public var reminders: [TimeSpan] = []
    /// The notice before each occurrence (`--notice 2h`): a quiet popup that says when it rings, with
    /// Skip this one and Open.
    public var notice: TimeSpan?
    /// Days (or months), in the trigger's zone, whose occurrences are left out (`--except`).
    public var exceptions: [ExceptDate] = []
    /// No occurrence after this instant (`--until`).
    public var until: Instant?
    /// At most this many occurrences from when it was set (`--count`); excepted and skipped ones
    /// count, as RFC 5545 counts EXDATEs. `countEnd` is the last of them, found when it was set.
    public private(set) var count: Int?
    public private(set) var countEnd: Instant?
    /// Occurrences skipped once (`chime skip`), in the order they were skipped.
    public var skipped: [Instant] = []
    /// The phrase the rule was read from, as it was typed (`every other tuesday 9am`), kept to
    /// show it as written; the rule is what runs. nil: the rule was written the machine way.
    public var said: String?
    /// What a day off does to it (`on-holiday`; nil: it rings, as `.ring`, which is kept as nil).
    public var onHoliday: HolidayPolicy? {
        didSet { if onHoliday == .ring { onHoliday = nil } }
    }

    /// A trigger from any rule text (`16:35 mon-fri`, `in 5m`, `*:0/15`).
    public init(parsing text: String, repeats: Bool? = nil, timeZone: String? = nil, anchor: Instant) throws(RuleError) {
        let rule = try Rule(parsing: text)
        self.init(rule: rule, repeats: repeats ?? rule.repeats, timeZone: timeZone, anchor: anchor)
    }

    /// An egg timer: `span` from `anchor`.
    public static func timeInterval(_ span: TimeSpan, repeats: Bool = false, anchor: Instant) -> Trigger {
        Trigger(rule: .interval(span, repeats: repeats), repeats: repeats, timeZone: nil, anchor: anchor)
    }

    /// A `UNCalendarNotificationTrigger`: fires when the components match.
    public static func calendar(matching components: DateComponents, repeats: Bool, timeZone: String? = nil,
                                anchor: Instant) throws(RuleError) -> Trigger {
        Trigger(rule: .calendar(try components.expression()), repeats: repeats, timeZone: timeZone, anchor: anchor)
    }

    public init(rule: Rule, repeats: Bool, timeZone: String?, anchor: Instant) {
        self.rule = rule
        self.repeats = repeats
        self.timeZone = timeZone
        self.anchor = anchor
    }

    /// The zone the rule is evaluated in (a request that names one that does not exist is
    /// refused where it enters; the system's zone stands in for one removed since).
    public var zone: Zone {
        timeZone.flatMap { try? Zone.named($0) } ?? .system()
    }

    /// The zone the rule's wall-clock times are in: the rule's own (a trailing zone name, an
    /// iCalendar TZID) or `zone`. Exceptions and `until` dates are read in it.
    public var wallClockZone: Zone {
        switch rule {
        case .calendar(let expression): expression.timeZone.flatMap { try? Zone.named($0) } ?? zone
        // A UTC DTSTART names instants, not a wall clock (chime exports elapsed-time rules so):
        // the days an alarm leaves out are the person's, read in the alarm's zone.
        case .recurrence(let recurrence): if case .utc = recurrence.start { zone } else { recurrence.zone(floatingZone: zone) }
        case .interval, .instant: zone
        }
    }

    /// The rule in words in `language`, its times in its wall-clock zone (nil where words do not say it).
    public func words(_ language: PhraseLanguage) -> String? { rule.words(language, zone: wallClockZone) }

    /// The next occurrence strictly after `time`, recomputed from the rule every time; nil when
    /// there is none (up to `Instant.latest`). Exceptions and skips are stepped over; `until` and
    /// `count` end it.
    public func nextFire(after time: Instant) -> Instant? { next(after: time, skipping: true) }

    /// The next occurrence after `time` with skips not stepped over (a day off may move one onto,
    /// or off, a skipped time: skips are of the times it fires).
    func unskippedNextFire(after time: Instant) -> Instant? { next(after: time, skipping: false) }

    private func next(after time: Instant, skipping: Bool) -> Instant? {
        let zone = zone
        let wallClock = exceptions.isEmpty ? zone : wallClockZone
        var after = time
        // Each step passes a skipped occurrence or a whole excepted day or month (an excepted month
        // of a rule that fires every second is one step, not 2.6 million): the skips and the
        // exceptions, over the years to 2199, bound the steps.
        for _ in 0..<(skipped.count + exceptions.count * 2 * 231 + 8) {
            guard let next = ruleFire(after: after, zone: zone) else { return nil }
            if let until, next > until { return nil }
            if let countEnd, next > countEnd { return nil }
            let civil = wallClock.civil(at: next.seconds)
            if let excepted = exceptions.first(where: { $0.contains(civil) }) {
                after = max(next, Self.lastInstant(of: excepted, around: civil, in: wallClock))
                continue
            }
            if skipping, skipped.contains(next) {
                after = next
                continue
            }
            return next
        }
        return nil
    }

    /// The last second before the excepted day (or month) holding `civil` ends, as an instant: an
    /// occurrence after it is outside the exception. Read with the larger of the offsets around the
    /// boundary, so a DST change there can only make it earlier, never skip an occurrence.
    static func lastInstant(of excepted: ExceptDate, around civil: CivilTime, in zone: Zone) -> Instant {
        let end: Int64
        if excepted.day != nil {
            end = (civil.dayNumber + 1) * 86_400
        } else {
            let (year, month) = civil.month == 12 ? (civil.year + 1, 1) : (civil.year, civil.month + 1)
            end = daysFromCivil(year, month, 1) * 86_400
        }
        let offset = max(zone.offset(at: end - 86_400), zone.offset(at: end), zone.offset(at: end + 86_400))
        return Instant(seconds: end - Int64(offset) - 1)
    }

    /// The rule's next fire after `time`, moved by each offset.
    func ruleFire(after time: Instant, zone: Zone) -> Instant? {
        guard !offsets.isEmpty else { return rule.nextFire(after: time, anchor: anchor, repeats: repeats, in: zone) }
        return offsets.compactMap { offset in
            rule.nextFire(after: time - offset, anchor: anchor, repeats: repeats, in: zone).map { $0 + offset }
        }.min()
    }

    /// The next reminder strictly after `time`: when it is due, the occurrence it is for, and how
    /// long before that occurrence it comes.
    public func nextReminder(after time: Instant) -> (at: Instant, occurrence: Instant, lead: TimeSpan)? {
        var best: (at: Instant, occurrence: Instant, lead: TimeSpan)?
        for lead in leads {
            guard let occurrence = nextFire(after: time + lead) else { continue }
            let at = occurrence - lead
            if best.map({ at < $0.at }) ?? true { best = (at, occurrence, lead) }
        }
        return best
    }

    /// How long before each occurrence a popup comes: the reminders' leads and the notice's.
    public var leads: [TimeSpan] {
        guard let notice, !reminders.contains(notice) else { return reminders }
        return reminders + [notice]
    }

    /// The trigger as its phrase says it, without the rule the phrase became when it was read (which
    /// depends on when that was: `tomorrow 7am`, `every other tuesday`): what two readings of one
    /// phrase are compared by.
    public mutating func keepOnlyWhatWasSaid() {
        rule = .instant(.epoch)
        countEnd = nil
    }

    /// Ends the trigger after `count` occurrences from when it was set (nil: no such end).
    public mutating func limit(count: Int?) {
        self.count = count
        countEnd = nil
        guard let count, count > 0 else { return }
        var t = anchor - TimeSpan(nanoseconds: 1)
        var last: Instant?
        for _ in 0..<count {
            guard let next = ruleFire(after: t, zone: zone) else { break }
            last = next
            t = next
        }
        countEnd = last ?? anchor
    }

    // The stored form (the daemon's own database): seconds with a nanosecond part, as chime has
    // always written it, so stores from earlier versions read unchanged.
    private enum CodingKeys: String, CodingKey {
        case kind, rule, seconds, at, atNanosecond, repeats, timeZone, anchor, nanosecond
        case reminders, exceptions, until, count, countEnd, skipped, offsets, said, onHoliday, notice
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        repeats = try c.decodeIfPresent(Bool.self, forKey: .repeats) ?? false
        timeZone = try c.decodeIfPresent(String.self, forKey: .timeZone)
        let nanosecond = try c.decodeIfPresent(Int64.self, forKey: .nanosecond) ?? 0
        guard (0..<1_000_000_000).contains(nanosecond) else {
            throw DecodingError.dataCorruptedError(forKey: .nanosecond, in: c, debugDescription: "nanosecond must be 0-999999999")
        }
        anchor = Instant(seconds: try c.decodeIfPresent(Int64.self, forKey: .anchor) ?? 0, nanosecond: nanosecond)
        // What bounds the occurrences (none in stores from before they existed).
        reminders = (try c.decodeIfPresent([Int64].self, forKey: .reminders) ?? []).map { .seconds($0) }
        offsets = (try c.decodeIfPresent([Int64].self, forKey: .offsets) ?? []).map { .seconds($0) }
        notice = try c.decodeIfPresent(Int64.self, forKey: .notice).map { .seconds($0) }
        for text in try c.decodeIfPresent([String].self, forKey: .exceptions) ?? [] {
            do { exceptions.append(try ExceptDate(parsing: text)) } catch {
                throw DecodingError.dataCorruptedError(forKey: .exceptions, in: c, debugDescription: "\(text): \(error.message)")
            }
        }
        until = try c.decodeIfPresent(Int64.self, forKey: .until).map { Instant(nanosecondsSinceEpoch: $0) }
        count = try c.decodeIfPresent(Int.self, forKey: .count)
        countEnd = try c.decodeIfPresent(Int64.self, forKey: .countEnd).map { Instant(nanosecondsSinceEpoch: $0) }
        skipped = (try c.decodeIfPresent([Int64].self, forKey: .skipped) ?? []).map { Instant(nanosecondsSinceEpoch: $0) }
        said = try c.decodeIfPresent(String.self, forKey: .said)
        // A policy from a newer chime reads as the default (it rings).
        onHoliday = (try? c.decodeIfPresent(String.self, forKey: .onHoliday)).flatMap { $0.flatMap(HolidayPolicy.init(rawValue:)) }
        switch try c.decode(String.self, forKey: .kind) {
        case "interval":
            rule = .interval(.seconds(try c.decode(Int64.self, forKey: .seconds)), repeats: repeats)
        case "instant":
            let nanosecond = try c.decodeIfPresent(Int64.self, forKey: .atNanosecond) ?? 0
            guard (0..<1_000_000_000).contains(nanosecond) else {
                throw DecodingError.dataCorruptedError(forKey: .atNanosecond, in: c, debugDescription: "nanosecond must be 0-999999999")
            }
            rule = .instant(Instant(seconds: try c.decode(Int64.self, forKey: .at), nanosecond: nanosecond))
        case "recurrence":
            let text = try c.decode(String.self, forKey: .rule)
            do {
                rule = .recurrence(try Recurrence(parsing: text))
            } catch {
                throw DecodingError.dataCorruptedError(forKey: .rule, in: c, debugDescription: "\(text): \(error.message)")
            }
        default:
            let text = try c.decode(String.self, forKey: .rule)
            do {
                rule = .calendar(try CalendarExpression(parsing: text))
            } catch {
                throw DecodingError.dataCorruptedError(forKey: .rule, in: c, debugDescription: "\(text): \(error.message)")
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch rule {
        case .interval(let span, _):
            try c.encode("interval", forKey: .kind)
            try c.encode(span.seconds, forKey: .seconds)
        case .instant(let t):
            try c.encode("instant", forKey: .kind)
            try c.encode(t.seconds, forKey: .at)
            if t.nanosecond != 0 { try c.encode(t.nanosecond, forKey: .atNanosecond) }
        case .calendar(let expression):
            try c.encode("calendar", forKey: .kind)
            try c.encode(expression.description, forKey: .rule)
        case .recurrence(let recurrence):
            try c.encode("recurrence", forKey: .kind)
            try c.encode(recurrence.text, forKey: .rule)
        }
        try c.encode(repeats, forKey: .repeats)
        try c.encodeIfPresent(timeZone, forKey: .timeZone)
        try c.encode(anchor.seconds, forKey: .anchor)
        if anchor.nanosecond != 0 { try c.encode(anchor.nanosecond, forKey: .nanosecond) }
        if !reminders.isEmpty { try c.encode(reminders.map(\.seconds), forKey: .reminders) }
        if !offsets.isEmpty { try c.encode(offsets.map(\.seconds), forKey: .offsets) }
        try c.encodeIfPresent(notice?.seconds, forKey: .notice)
        if !exceptions.isEmpty { try c.encode(exceptions.map(\.description), forKey: .exceptions) }
        try c.encodeIfPresent(until?.nanosecondsSinceEpoch, forKey: .until)
        try c.encodeIfPresent(count, forKey: .count)
        try c.encodeIfPresent(countEnd?.nanosecondsSinceEpoch, forKey: .countEnd)
        if !skipped.isEmpty { try c.encode(skipped.map(\.nanosecondsSinceEpoch), forKey: .skipped) }
        try c.encodeIfPresent(said, forKey: .said)
        if let onHoliday, onHoliday != .ring { try c.encode(onHoliday.rawValue, forKey: .onHoliday) }
    }
}

/// An identifier, content and trigger; adding a request with an existing identifier replaces it.
public struct NotificationRequest: Hashable, Sendable, Codable {
    public var identifier: String
    public var content: NotificationContent
    public var trigger: Trigger

    public init(identifier: String, content: NotificationContent, trigger: Trigger) {
        self.identifier = identifier
        self.content = content
        self.trigger = trigger
    }
}
