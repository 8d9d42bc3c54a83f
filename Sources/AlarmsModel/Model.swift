// What the desktop app shows and sends, without GTK: an alarm as its dialog edits it, the words
// its list shows (days, next ring, countdowns), and which pending alarms are alarms and which are
// timers. `make check` tests all of it; the app's pages only put these strings into widgets.
import ChimeCenter
import Notifications
import Timekeeping

/// Days of the week, Monday first (bit 0 Monday ... bit 6 Sunday, as `CalendarExpression.weekdays`).
public struct Weekdays: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x7F }

    public static let workdays = Weekdays(rawValue: 0b001_1111)
    public static let weekend = Weekdays(rawValue: 0b110_0000)
    public static let everyDay = Weekdays(rawValue: 0b111_1111)

    /// One day: 0 Monday ... 6 Sunday.
    public static func day(_ index: Int) -> Weekdays { Weekdays(rawValue: 1 << UInt8(index)) }

    /// The rule's day list (`mon-fri`, `mon,wed,fri`), as `chime at --days` takes it.
    public var ruleText: String {
        let names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
        return (0..<7).filter { contains(.day($0)) }.map { names[$0] }.joined(separator: ",")
    }

    /// The days as a person says them: Every day, Weekdays, Weekends, or "Mon, Wed, Fri".
    public var inWords: String {
        switch self {
        case .everyDay: return tr("Every day")
        case .workdays: return tr("Weekdays")
        case .weekend: return tr("Weekends")
        default: return (0..<7).filter { contains(.day($0)) }.map { Weekdays.shortName($0) }.joined(separator: ", ")
        }
    }

    /// "Mon" ... "Sun", in the user's language.
    public static func shortName(_ index: Int) -> String {
        [tr("Mon"), tr("Tue"), tr("Wed"), tr("Thu"), tr("Fri"), tr("Sat"), tr("Sun")][index]
    }

    /// "Monday" ... "Sunday", in the user's language (for assistive technologies).
    public static func fullName(_ index: Int) -> String {
        [tr("Monday"), tr("Tuesday"), tr("Wednesday"), tr("Thursday"), tr("Friday"), tr("Saturday"), tr("Sunday")][index]
    }
}

/// An alarm at a time of day, on some weekdays or once: what the app's dialog edits.
public struct ClockAlarm: Hashable, Sendable {
    public var hour = 7
    public var minute = 0
    /// Empty: once, at the next time the clock shows hour:minute.
    public var days: Weekdays = []
    /// When, said as a person says it or any rule chime reads (`every other tuesday 9am`, `am
    /// letzten Freitag im Monat um 16:35`, `*:0/15`), for what the clock and the day toggles cannot
    /// say; it takes their place. Empty: the clock and the days.
    public var when = ""
    public var label = ""
    public var sound: Sound? = .default
    /// How long the sound rings unanswered (0: it plays once).
    public var ring: TimeSpan = AlarmDefaults.ring
    /// The sound's own volume in percent.
    public var volume = 100
    /// From silence to the volume (zero: no fade).
    public var fade: TimeSpan = .zero
    /// Unmute and raise the output for the ring.
    public var insist = false
    public var snooze: TimeSpan = AlarmDefaults.snooze
    public var wake = false
    /// Told not to wake (kept as it was: the app's switch says only whether it wakes).
    public var stayAsleep = false
    public var doNotDisturb: DoNotDisturbPolicy = .breakThrough
    /// What a day off of the alarm file's holiday calendars does to it.
    public var onHoliday: HolidayPolicy = .ring
    /// The notice before each time it rings (nil: none).
    public var notice: TimeSpan?
    /// The calendar chime writes to that it lives in (nil: this machine).
    public var calendar: String?
    /// What an edited alarm said that the dialog does not show (its body, buttons, body command,
    /// grace, urgency...): kept as it was. nil for a new alarm.
    public private(set) var base: NotificationContent?
    /// The name the dialog opened with: while it is unchanged, the title and label stay as they were.
    private var openedName = ""

    public init() {}

    /// The alarm a pending request is, when it is one the dialog can edit: a time of day with
    /// weekdays, every day, or on one date (a one-off). nil for every other rule (`*:0/15`, timers).
    public init?(request: NotificationRequest) {
        // The dialog sets whole minutes; "16:35, once" (a time without a date that does not repeat)
        // is not something it says.
        if case .calendar(let expression) = request.trigger.rule, request.trigger.timeZone == nil, request.trigger.said == nil,
            let parts = Self.parts(expression), parts.second == 0, parts.days.isEmpty || request.trigger.repeats {
            hour = parts.hour
            minute = parts.minute
            days = parts.days
        } else {
            // Any other rule is edited in the When field: as it was said, or as it is written (a
            // timer counting down is not an alarm of this dialog, nor is a one-off at an instant).
            switch request.trigger.rule {
            case .interval(_, false), .instant: return nil
            default: when = request.trigger.said ?? request.summaryRule
            }
            if let zone = request.trigger.timeZone, request.trigger.said == nil { when += " " + zone }
        }
        let content = request.content
        base = content
        label = content.label.isEmpty ? (content.title == tr("Alarm") ? "" : content.title) : content.label
        openedName = label
        sound = content.sound
        ring = content.ring ?? .zero
        volume = content.volume ?? 100
        fade = content.fade ?? .zero
        insist = content.insist
        snooze = content.snooze ?? AlarmDefaults.snooze
        wake = content.wake
        stayAsleep = content.stayAsleep
        doNotDisturb = content.doNotDisturb ?? .breakThrough
        onHoliday = request.trigger.holidayPolicy
        notice = request.trigger.notice
        calendar = content.userInfo[CalendarKeys.calendar]
    }

    private static func single(_ chain: [CalendarExpression.Component]?) -> Int? {
        guard let chain, chain.count == 1, chain[0].stop == nil, chain[0].repeatEvery == 0 else { return nil }
        return chain[0].start
    }

    /// "07:00".
    public var timeText: String { Self.two(hour) + ":" + Self.two(minute) }

    /// The rule sent to the daemon: `07:00 mon-fri`, `07:00` every day, or the next date the clock
    /// shows the time (`2026-11-24 07:00`) for a one-off.
    public func rule(now: Instant, zone: Zone) -> String {
        if days == .everyDay { return timeText }
        if !days.isEmpty { return timeText + " " + days.ruleText }
        var civil = zone.civil(at: now.seconds)
        let todayPassed = (civil.hour, civil.minute) >= (hour, minute)
        if todayPassed {
            let next = civilFromDays(civil.dayNumber + 1)
            civil = CivilTime(year: next.year, month: next.month, day: next.day)
        }
        return "\(civil.year)-\(Self.two(civil.month))-\(Self.two(civil.day)) " + timeText
    }

    /// What the When field says, read as said at `now`: the words understood and the next three
    /// times (`.understood`), why it cannot be read (`.problem`), or nil when it is empty. It is read,
    /// and rings, in the system's zone, as the dialog's clock does.
    public func whenPreview(now: Instant, language: PhraseLanguage, twelveHourClock: Bool = false) -> WhenPreview? {
        let text = when.withoutSurroundingSpace
        guard !text.isEmpty else { return nil }
        do throws(RequestError) {
            let trigger = try whenDraft(text, now: now, language: language, twelveHourClock: twelveHourClock).buildTrigger()
            var times: [Instant] = []
            var after = now
            while times.count < 3, let next = trigger.nextFire(after: after) {
                times.append(next)
                after = next
            }
            if times.isEmpty { return .problem(trigger.neverFiresReason(now: now)) }
            let words = trigger.words(language)
            return .understood(words: words, next: times)
        } catch {
            return .problem(error.message)
        }
    }

    /// A draft saying when, from the When field.
    private func whenDraft(_ text: String, now: Instant, language: PhraseLanguage, twelveHourClock: Bool) -> AlarmDraft {
        var draft = AlarmDraft(kind: .alarm, anchor: now)
        draft.when = .rule(text)
        draft.readsPhrases = true
        draft.phraseLanguage = language
        draft.twelveHourClock = twelveHourClock
        return draft
    }

    /// The request the daemon gets: built as `chime at` builds one (critical, Snooze and Dismiss,
    /// chime's icon), titled with the label (or "Alarm"). A When field that says something is read
    /// as said now, in the user's language first (`language`).
    public func request(identifier: String?, now: Instant, zone: Zone, language: PhraseLanguage = .english,
                        twelveHourClock: Bool = false) throws(RequestError) -> NotificationRequest {
        var draft = base.map { AlarmDraft(kind: .alarm, content: $0, anchor: now) } ?? AlarmDraft(kind: .alarm, anchor: now)
        draft.identifier = identifier
        if base == nil || label != openedName {
            draft.title = label.isEmpty ? tr("Alarm") : label
            draft.label = label
        }
        draft.sound = sound
        draft.ring = sound == nil ? nil : ring
        draft.volume = sound == nil || volume == 100 ? nil : volume
        draft.fade = sound == nil || fade == .zero ? nil : fade
        if draft.fade == nil { draft.fadeFrom = nil }  // an edited alarm's own start level goes with its fade
        draft.insist = sound != nil && insist
        // Ringing itself out needs a ring to end.
        if draft.ring == nil || draft.ring == .zero { draft.autoSnooze = nil }
        draft.snooze = snooze
        draft.wake = wake ? true : stayAsleep ? false : nil
        draft.doNotDisturb = doNotDisturb
        draft.onHoliday = onHoliday
        draft.notice = notice
        let text = when.withoutSurroundingSpace
        if text.isEmpty {
            draft.when = .rule(rule(now: now, zone: zone))
        } else {
            let said = whenDraft(text, now: now, language: language, twelveHourClock: twelveHourClock)
            draft.when = said.when
            draft.readsPhrases = true
            draft.phraseLanguage = language
            draft.twelveHourClock = twelveHourClock
        }
        return try draft.build(now: now)
    }

    /// The days in words, or for a one-off "Once".
    public var daysText: String { days.isEmpty ? tr("Once") : days.inWords }

    static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}

/// What the dialog's When field was understood as.
public enum WhenPreview: Hashable, Sendable {
    /// The rule in words (nil where words do not say it) and its next times (one to three).
    case understood(words: String?, next: [Instant])
    /// Why it cannot be read, in one sentence.
    case problem(String)

    /// The words and the next times as the dialog shows them, one line each ("Next: Tue 1 Dec
    /// 09:00, Tue 15 Dec 09:00, Tue 29 Dec 09:00"), or the problem.
    public func text(zone: Zone) -> String {
        switch self {
        case .problem(let message): return message
        case .understood(let words, let next):
            let times = next.map { instant -> String in
                let civil = zone.civil(at: instant.seconds)
                return "\(Weekdays.shortName(civil.weekday - 1)) \(civil.year)-\(ClockAlarm.two(civil.month))-\(ClockAlarm.two(civil.day)) "
                    + "\(ClockAlarm.two(civil.hour)):\(ClockAlarm.two(civil.minute))"
            }
            return (words.map { $0 + "\n" } ?? "") + tr("Next: %s", times.joined(separator: ", "))
        }
    }
}

/// A pending alarm as a row of the app's lists shows it.
public struct AlarmRow: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// A time of day (the alarms page).
        case alarm
        /// Counts down from when it was set (the timers page).
        case timer
    }

    public var identifier: String
    public var kind: Kind
    /// "07:00", or for a rule with no one time of day, the time of its next ring.
    public var time: String
    /// The label or title.
    public var name: String
    /// "Weekdays", "Mon, Wed", "Once", the rule in words ("every 2 weeks on Tuesday at 09:00"), or
    /// as written where words do not say it (`*:0/15`).
    public var days: String
    /// "Rings in 5 h 3 min", "Off", or what holds it.
    public var status: String
    public var isOn: Bool
    public var fromFile: Bool
    public var nextFire: Instant?
    public var state: AlarmState
    /// A timer's whole duration (`in 5m` → 5 minutes).
    public var duration: TimeSpan?
    /// Its earliest occurrence skipped ahead (Undo skip brings it back).
    public var skipped: Instant?
    /// When the time away it is in now ends (nil: none).
    public var offUntil: Instant?
    /// Whether it repeats, so has a next occurrence to skip.
    public var repeats: Bool

    /// Whether the row offers Skip next (or Undo skip): an alarm that repeats and is planned.
    public var canSkip: Bool { kind == .alarm && repeats && (state == .scheduled || skipped != nil) && isOn }

    /// Whether `summary` is a timer (`kind == .timer`), read without making its row: only a rule
    /// said as `in …` (any case, after any blanks) can be one.
    public static func isTimer(_ summary: PendingSummary) -> Bool {
        let start = summary.rule.utf8.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        guard let i = start.first, i | 0x20 == UInt8(ascii: "i"), let n = start.dropFirst().first, n | 0x20 == UInt8(ascii: "n"),
              case .interval(_, false)? = try? Rule(parsing: summary.rule) else { return false }
        return true
    }

    public init(_ summary: PendingSummary, now: Instant, zone: Zone, language: PhraseLanguage = .english, skipped: Instant? = nil,
                offUntil: Instant? = nil) {
        self.skipped = skipped
        self.offUntil = offUntil
        identifier = summary.identifier
        name = summary.label.isEmpty ? summary.title : summary.label
        fromFile = summary.origin == .file
        nextFire = summary.nextFire
        state = summary.state
        isOn = summary.state != .disabled
        let rule = summary.rule.isEmpty ? nil : try? Rule(parsing: summary.rule)
        repeats = rule?.repeats ?? false
        if case .interval(let span, false)? = rule {
            kind = .timer
            duration = span
        } else {
            kind = .alarm
            duration = nil
        }
        time = "–"
        days = summary.rule
        if case .calendar(let expression)? = rule, let parsed = ClockAlarm.parts(expression) {
            time = ClockAlarm.two(parsed.hour) + ":" + ClockAlarm.two(parsed.minute) + (parsed.second == 0 ? "" : ":" + ClockAlarm.two(parsed.second))
            days = parsed.days.isEmpty ? tr("Once") : parsed.days.inWords
        } else if let next = summary.nextFire {
            let civil = zone.civil(at: next.seconds)
            time = ClockAlarm.two(civil.hour) + ":" + ClockAlarm.two(civil.minute)
            if summary.rule.isEmpty { days = tr("Once") }
        }
        if kind == .alarm, let rule, days == summary.rule {
            let ruleZone = summary.timeZone.flatMap { try? Zone.named($0) } ?? zone
            days = rule.words(language, zone: ruleZone) ?? summary.rule
        }
        switch summary.state {
        case .disabled: status = tr("Off")
        case .paused: status = tr("Paused")
        case .quarantined: status = tr("Not ringing: %s", summary.note)
        case .held, .retrying: status = summary.note
        case .scheduled:
            if let next = summary.nextFire { status = tr("Rings %s", relativeTime(from: now, to: next, zone: zone)) } else { status = "" }
            if let skipped, summary.nextFire != nil { status = tr("Skipped %s", relativeTime(from: now, to: skipped, zone: zone)) + " · " + status }
        }
        if let offUntil, summary.state == .scheduled || summary.state == .held {
            let civil = zone.civil(at: offUntil.seconds)
            let day = dayText(civil) + (civil.hour == 0 && civil.minute == 0 ? "" : " " + ClockAlarm.two(civil.hour) + ":" + ClockAlarm.two(civil.minute))
            status = tr("Off until %s", day) + (status.isEmpty ? "" : " · " + status)
        }
    }
}

extension ClockAlarm {
    /// The time of day and days of a calendar rule a list can say in words (weekdays or every
    /// day: days; one date: none), or nil.
    static func parts(_ expression: CalendarExpression) -> (hour: Int, minute: Int, second: Int, days: Weekdays)? {
        guard expression.timeZone == nil, !expression.daysFromEnd, let hour = single(expression.hours),
            let minute = single(expression.minutes), let second = single(expression.seconds) else { return nil }
        if expression.years == nil, expression.months == nil, expression.days == nil {
            return (hour, minute, second, expression.weekdays.map { Weekdays(rawValue: $0) } ?? .everyDay)
        }
        if expression.weekdays == nil, single(expression.years) != nil, single(expression.months) != nil, single(expression.days) != nil {
            return (hour, minute, second, [])
        }
        return nil
    }
}

/// A day as the lists say it: "Mon 2027-01-04".
public func dayText(_ civil: CivilTime) -> String {
    Weekdays.shortName(civil.weekday - 1) + " \(civil.year)-\(ClockAlarm.two(civil.month))-\(ClockAlarm.two(civil.day))"
}

/// When `then` is, seen from `now`, as a clock app says it: "in 45 min", "in 5 h 3 min",
/// "tomorrow at 07:00", "on Fri at 07:00", "on 24.12. at 18:00" (a week or more ahead).
public func relativeTime(from now: Instant, to then: Instant, zone: Zone) -> String {
    let seconds = then.seconds - now.seconds
    if seconds < 60 { return tr("in less than a minute") }
    let minutes = (seconds + 59) / 60
    if minutes < 60 { return tr("in %s min", "\(minutes)") }
    if minutes < 12 * 60 {
        let h = minutes / 60, m = minutes % 60
        return m == 0 ? tr("in %s h", "\(h)") : tr("in %s", tr("%s h", "\(h)") + " " + tr("%s min", "\(m)"))
    }
    let today = zone.civil(at: now.seconds), day = zone.civil(at: then.seconds)
    let time = ClockAlarm.two(day.hour) + ":" + ClockAlarm.two(day.minute)
    switch day.dayNumber - today.dayNumber {
    case 0: return tr("today at %s", time)
    case 1: return tr("tomorrow at %s", time)
    case 2..<7: return tr("on %s", Weekdays.shortName(day.weekday - 1) + " " + time)
    default: return tr("on %s", "\(day.year)-\(ClockAlarm.two(day.month))-\(ClockAlarm.two(day.day)) \(time)")
    }
}

/// A countdown as a timer shows it: "4:59", "1:02:03" (rounded up: a timer at 0:00 has rung).
public func countdown(_ left: TimeSpan) -> String {
    let total = max(0, (left.nanoseconds + 999_999_999) / 1_000_000_000)
    let h = total / 3600, m = total / 60 % 60, s = total % 60
    return h > 0 ? "\(h):\(ClockAlarm.two(Int(m))):\(ClockAlarm.two(Int(s)))" : "\(m):\(ClockAlarm.two(Int(s)))"
}

/// A duration in words for a setting's row: "5 min", "1 h 30 min", "30 s".
public func durationWords(_ span: TimeSpan) -> String {
    let s = span.seconds
    if s < 60 { return tr("%s s", "\(s)") }
    let h = s / 3600, m = s / 60 % 60
    if h == 0 { return tr("%s min", "\(m)") }
    return m == 0 ? tr("%s h", "\(h)") : "\(tr("%s h", "\(h)")) \(tr("%s min", "\(m)"))"
}

/// A timer the app starts with a custom duration: built as `chime timer`'s presets are.
public func timerRequest(duration: TimeSpan, label: String, now: Instant) throws(RequestError) -> NotificationRequest {
    var draft = AlarmDraft(kind: .timer, anchor: now)
    draft.title = label.isEmpty ? tr("Timer") : label
    draft.label = label.isEmpty ? nil : label
    draft.sound = .default
    draft.when = .rule("in \(duration)")
    return try draft.build(now: now)
}

extension String {
    /// Without the spaces, tabs and line breaks around it.
    var withoutSurroundingSpace: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[first...last])
    }
}
