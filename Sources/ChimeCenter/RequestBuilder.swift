// The one way a request is made. Every door (the command line, the alarm file, the D-Bus
// decoder) fills an `AlarmDraft` with what it was told, each field as given or nil for "not
// said", and `build` adds the defaults, applies the rules across fields and checks every bound
// (`validate`). It throws a `RequestError` naming the field; each door names the field its own
// way (`--snooze`, `alarm[2].snooze`, the `snooze` key). Nothing here exits or prints.
import Notifications
import Timekeeping

/// What a door was told of an alarm, before defaults and the rules across its fields.
public struct AlarmDraft: Sendable {
    /// Which defaults fill what was not said.
    public enum Kind: Sendable {
        /// An alarm of chime's own (`chime at`, `chime in`, the alarm file's `[[alarm]]`): critical,
        /// chime's icon, Snooze and Dismiss, and a sound that rings `AlarmDefaults.ring`.
        case alarm
        /// A timer preset (`[[timer]]`, `chime timer`): as an alarm, in the timer category.
        case timer
        /// A request as a program sent it (the D-Bus `Add`, the UserNotifications library): only
        /// what it says; a sound without a ring plays once.
        case asGiven
    }

    /// When it fires: a rule's text (parsed here), a recurrence already read from content lines
    /// (an imported event's), or one instant.
    public enum When: Sendable, Hashable {
        case rule(String)
        case recurrence(Recurrence)
        case instant(Instant)
    }

    public var kind: Kind
    /// nil: the daemon makes a unique one (an empty one given is refused).
    public var identifier: String?
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var bodyIsMarkup: Bool?
    public var label: String?
    public var icon: String?
    public var category: String?
    public var urgency: Urgency?
    public var sound: Sound?
    public var volume: Int?
    public var fade: TimeSpan?
    public var fadeFrom: Int?
    public var insist: Bool?
    public var actions: [NotificationAction]?
    public var userInfo: [String: String]?
    public var expire: TimeSpan?
    public var persistent: Bool?
    public var snooze: TimeSpan?
    public var grace: TimeSpan?
    public var ring: TimeSpan?
    public var autoSnooze: Bool?
    public var wake: Bool?
    public var doNotDisturb: DoNotDisturbPolicy?
    /// The program and its arguments.
    public var bodyCommand: [String]?
    public var bodyTimeout: TimeSpan?
    public var bodyOutputLimit: Int?
    public var when: When?
    public var repeats: Bool?
    /// The zone the request names itself (dropped with a rule that counts elapsed time).
    public var timeZone: String?
    /// A zone for clock rules the request did not name (the alarm file's `[defaults] tz`): an
    /// interval rule simply has none.
    public var defaultTimeZone: String?
    /// Where it fires relative to each occurrence (negative: before).
    public var offsets: [TimeSpan]?
    /// A reminder this long before each occurrence.
    public var reminders: [TimeSpan]?
    /// Days or months whose occurrences are left out.
    public var exceptions: [ExceptDate]?
    /// When a repeating alarm ends: an instant, or a date (through its end) or date and time in
    /// the alarm's zone, as a person writes it (`2027-06-30`, `2027-06-30 18:00`).
    public enum Until: Sendable, Hashable {
        case instant(Instant)
        case text(String)
    }
    public var until: Until?
    /// How many occurrences in all, from when it is set.
    public var count: Int?
    /// What a day off does to it (`on-holiday`; nil: it rings).
    public var onHoliday: HolidayPolicy?
    /// The notice this long before each occurrence (`--notice 2h`).
    public var notice: TimeSpan?
    /// Occurrences skipped (read back from the daemon only).
    public var skipped: [Instant]?
    /// The phrase `when` was read from, as typed, when a door read it itself (the app's dialog sends
    /// the rule it previewed with the phrase beside it); a phrase given as `when` is kept so anyway.
    public var said: String?
    /// When it was set: where an interval counts from.
    public var anchor: Instant
    /// Whether a zone given with a rule that counts elapsed time is refused (the command line)
    /// rather than dropped (a file or a program that names a zone for every alarm).
    public var refusesZoneForElapsedTime = false
    /// Whether `when` may be a phrase (`tomorrow 7am`, `jeden zweiten Dienstag um 9:00`), read as said
    /// at `anchor` in the alarm's zone: at doors where it is read once and stored as the rule it
    /// means (the command line, D-Bus). The alarm file is read again at each change, and a phrase
    /// counted from the moment it is read would move.
    public var readsPhrases = false
    /// The language a phrase's words are said back in, and whether its clock is the 12-hour one.
    public var phraseLanguage: PhraseLanguage = .english
    public var twelveHourClock = false

    public init(kind: Kind, anchor: Instant) {
        self.kind = kind
        self.anchor = anchor
    }

    /// A draft saying everything `content` says (a timer preset, to be started with a few changes).
    public init(kind: Kind, content: NotificationContent, anchor: Instant) {
        self.init(kind: kind, anchor: anchor)
        title = content.title
        subtitle = content.subtitle
        body = content.body
        bodyIsMarkup = content.bodyIsMarkup
        label = content.label
        icon = content.icon
        category = content.category
        urgency = content.urgency
        sound = content.sound
        volume = content.volume
        fade = content.fade
        fadeFrom = content.fadeFrom
        insist = content.insist
        actions = content.actions
        userInfo = content.userInfo
        switch content.expiry {
        case .serverDefault: break
        case .never: persistent = true
        case .after(let span): expire = span
        }
        snooze = content.snooze
        grace = content.grace
        ring = content.ring
        autoSnooze = content.autoSnooze
        wake = content.wake ? true : content.stayAsleep ? false : nil
        doNotDisturb = content.doNotDisturb
        if let command = content.bodyCommand {
            bodyCommand = command.arguments
            bodyTimeout = command.timeLimit
            bodyOutputLimit = command.outputLimit
        }
    }

    /// The request, with the defaults of its kind, after the rules across fields and every bound.
    /// With `now`, a request with no occurrence after it is refused (`.neverFires`); without, a
    /// one-off whose time has passed is valid (the alarm file keeps such a one harmlessly).
    public func build(now: Instant?) throws(RequestError) -> NotificationRequest {
        try build(now: now, trigger: nil)
    }

    /// As `build(now:)`, with the trigger already read from `when` (`buildTrigger`), so a door that
    /// reads it first for its own diagnostics does not parse the rule twice.
    public func build(now: Instant?, trigger: Trigger?) throws(RequestError) -> NotificationRequest {
        let content = try makeContent()
        let trigger = if let trigger { trigger } else { try buildTrigger() }
        var request = NotificationRequest(identifier: identifier ?? "", content: content, trigger: trigger)
        // The daemon makes a missing identifier: checked with a stand-in.
        if identifier == nil { request.identifier = "x" }
        try request.validate(now: now)  // every bound, the content's included
        request.identifier = identifier ?? ""
        return request
    }

    /// The content alone, with its defaults and rules (a timer preset has no trigger until it starts).
    public func buildContent() throws(RequestError) -> NotificationContent {
        let content = try makeContent()
        try content.validate()
        return content
    }

    /// The content with its defaults, after the rules across fields (its bounds not yet checked).
    private func makeContent() throws(RequestError) -> NotificationContent {
        guard let title else { throw RequestError(.title, "is required") }
        if let broken = conflicts().first { throw broken }
        var content = NotificationContent(title: title)
        switch kind {
        case .alarm, .timer:
            content.urgency = .critical
            content.icon = AlarmDefaults.icon
            content.category = kind == .timer ? AlarmDefaults.timerCategory : AlarmDefaults.alarmCategory
            content.actions = [.snooze, .dismiss]
        case .asGiven:
            break
        }
        content.subtitle = subtitle ?? ""
        content.body = body ?? ""
        content.bodyIsMarkup = bodyIsMarkup ?? false
        content.label = label ?? ""
        if let icon { content.icon = icon }
        if let category { content.category = category }
        if let urgency { content.urgency = urgency }
        if let actions { content.actions = actions }
        content.userInfo = userInfo ?? [:]
        content.sound = sound
        content.volume = volume
        content.fade = fade
        content.fadeFrom = fadeFrom
        content.insist = insist ?? false
        if let expire { content.expiry = .after(expire) } else if persistent == true { content.expiry = .never }
        content.snooze = snooze
        content.grace = grace
        content.ring = ring
        if sound != nil, ring == nil, kind != .asGiven { content.ring = AlarmDefaults.ring }
        content.autoSnooze = autoSnooze ?? false
        content.wake = wake ?? false
        content.stayAsleep = wake == false
        content.doNotDisturb = doNotDisturb
        if let bodyCommand {
            content.bodyCommand = BodyCommand(arguments: bodyCommand, timeLimit: bodyTimeout ?? BodyCommand.defaultTimeLimit,
                                              outputLimit: bodyOutputLimit ?? BodyCommand.defaultOutputLimit)
        }
        return content
    }

    /// Every rule across fields this draft breaks, in the order the fields are documented (a door
    /// that reports every problem at once, as the alarm file does, reports them all).
    public func conflicts() -> [RequestError] {
        var broken: [RequestError] = []
        if expire != nil, persistent == true { broken.append(RequestError(.persistent, "give expire or persistent, not both")) }
        if ring != nil, sound == nil { broken.append(RequestError(.ring, "needs a sound (an alarm without a sound has nothing to ring)")) }
        if bodyCommand == nil {
            if bodyTimeout != nil { broken.append(RequestError(.bodyTimeout, "needs body-command")) }
            if bodyOutputLimit != nil { broken.append(RequestError(.bodyOutputLimit, "needs body-command")) }
        }
        return broken
    }

    /// When it fires, read from `when` (an unreadable rule's error carries the offending part's offset).
    public func buildTrigger() throws(RequestError) -> Trigger {
        var trigger = try buildRuleTrigger()
        trigger.offsets = Array(Set(offsets ?? [])).sorted()
        trigger.reminders = Array(Set(reminders ?? [])).sorted()
        trigger.exceptions = Array(Set(exceptions ?? [])).sorted()
        trigger.skipped = skipped ?? []
        if let said { trigger.said = said }
        trigger.onHoliday = onHoliday == .ring ? nil : onHoliday
        trigger.notice = notice
        switch until {
        case nil: break
        case .instant(let instant)?: trigger.until = instant
        case .text(let text)?: trigger.until = try Self.endTime(text, in: trigger.wallClockZone)
        }
        if let count {
            guard RequestBounds.count.contains(count) else {
                throw RequestError(.count, "must be \(RequestBounds.count.lowerBound)-\(RequestBounds.count.upperBound), got \(count)")
            }
            trigger.limit(count: count)
        }
        return trigger
    }

    /// `2027-06-30` (through the end of that day) or `2027-06-30 18:00[:SS]`, in `zone`.
    static func endTime(_ text: String, in zone: Zone) throws(RequestError) -> Instant {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        let refusal = RequestError(.until, "\"\(escapedForMessage(text))\" is not a date (YYYY-MM-DD) or a date and time (YYYY-MM-DD HH:MM)")
        guard words.count == 1 || words.count == 2, let date = try? ExceptDate(parsing: String(words[0])), let year = date.year,
            let day = date.day
        else { throw refusal }
        var civil = CivilTime(year: year, month: date.month, day: day, hour: 23, minute: 59, second: 59)
        if words.count == 2 {
            let parts = words[1].split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
            guard parts.count == 2 || parts.count == 3, let hour = parts[0], let minute = parts[1], (0...23).contains(hour),
                (0...59).contains(minute), parts.count == 2 || (parts[2].map { (0...59).contains($0) } ?? false)
            else { throw refusal }
            civil = CivilTime(year: year, month: date.month, day: day, hour: hour, minute: minute, second: parts.count == 3 ? parts[2]! : 0)
        }
        let seconds: Int64 = switch zone.resolve(civil) {
        case .unique(let t): t
        case .ambiguous(_, let later): later  // the end: the later of the two
        case .gap(let endsAt): endsAt
        }
        return Instant(seconds: seconds)
    }

    /// The trigger of `when` alone.
    private func buildRuleTrigger() throws(RequestError) -> Trigger {
        if let timeZone { try Trigger.validateTimeZone(timeZone) }
        switch when {
        case .rule(let text)?:
            try checkText(text, .rule, RequestBounds.ruleBytes, allowing: .none)
            var parsed: Trigger
            do throws(RuleError) {
                if readsPhrases {
                    let zoneName = timeZone ?? defaultTimeZone
                    let zone = zoneName.flatMap { try? Zone.named($0) } ?? Zone.system()
                    let context = PhraseContext(said: anchor, zone: zone, language: phraseLanguage, twelveHourClock: twelveHourClock)
                    let reading = try Rule.reading(text, context)
                    parsed = Trigger(rule: reading.rule, repeats: repeats ?? reading.repeats ?? reading.rule.repeats, timeZone: zoneName,
                                     anchor: anchor)
                    // A phrase is kept as typed, to be shown as written (the rule is what runs).
                    if reading.words != nil { parsed.said = text }
                } else {
                    parsed = try Trigger(parsing: text, repeats: repeats, timeZone: timeZone ?? defaultTimeZone, anchor: anchor)
                }
            } catch {
                var refusal = RequestError(.rule, error.message)
                refusal.offset = error.offset
                refusal.length = error.length
                throw refusal
            }
            if case .interval = parsed.rule, parsed.timeZone != nil {
                // Elapsed time has no zone: a zone given with it is dropped, or refused where the
                // door asks (a person at the command line most likely meant a clock time).
                if timeZone != nil, refusesZoneForElapsedTime {
                    throw RequestError(.timeZone, "\"\(text)\" counts elapsed time, which has no time zone; a zone is for clock times such as 16:35")
                }
                parsed.timeZone = nil
            }
            return parsed
        case .recurrence(let recurrence)?:
            try checkText(recurrence.text, .rule, RequestBounds.ruleBytes, allowing: .none)
            let rule = Rule.recurrence(recurrence)
            return Trigger(rule: rule, repeats: repeats ?? rule.repeats, timeZone: timeZone ?? defaultTimeZone, anchor: anchor)
        case .instant(let instant)?:
            if repeats == true { throw RequestError(.repeats, "a request at one instant cannot repeat; give a rule") }
            return Trigger(rule: .instant(instant), repeats: false, timeZone: timeZone ?? defaultTimeZone, anchor: anchor)
        case nil:
            throw RequestError(.rule, "give rule (e.g. \"in 5m\", \"16:35 mon-fri\") or at (seconds since the epoch)")
        }
    }
}
