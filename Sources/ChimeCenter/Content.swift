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
}

/// A program whose standard output becomes an alarm's body when it fires (the
/// homeroom alarm's "today: 23 students"): an argument vector, run without a
/// shell, stopped after `timeLimit` seconds, its output cut at `outputLimit`
/// bytes. A command that fails leaves the static body with a short note.
public struct BodyCommand: Hashable, Sendable, Codable {
    public var arguments: [String]
    /// Seconds before the command is killed (1-60).
    public var timeLimit: Int
    /// Bytes of standard output kept (1-65536).
    public var outputLimit: Int

    public static let defaultTimeLimit = 5
    public static let defaultOutputLimit = 4096
    public static let timeLimits = 1...60
    public static let outputLimits = 1...65536

    public init(arguments: [String], timeLimit: Int = defaultTimeLimit, outputLimit: Int = defaultOutputLimit) {
        self.arguments = arguments
        self.timeLimit = min(max(timeLimit, Self.timeLimits.lowerBound), Self.timeLimits.upperBound)
        self.outputLimit = min(max(outputLimit, Self.outputLimits.lowerBound), Self.outputLimits.upperBound)
    }

    private enum CodingKeys: String, CodingKey { case arguments, timeLimit, outputLimit }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let arguments = try c.decode([String].self, forKey: .arguments)
        guard let first = arguments.first, !first.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: .arguments, in: c, debugDescription: "a body command needs a program")
        }
        guard !arguments.contains(where: { $0.utf8.contains(0) }) else {
            throw DecodingError.dataCorruptedError(forKey: .arguments, in: c, debugDescription: "an argument contains a NUL byte")
        }
        self.init(arguments: arguments,
                  timeLimit: try c.decodeIfPresent(Int.self, forKey: .timeLimit) ?? Self.defaultTimeLimit,
                  outputLimit: try c.decodeIfPresent(Int.self, forKey: .outputLimit) ?? Self.defaultOutputLimit)
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
    /// Seconds Snooze waits (the scheduler's default, 10 minutes, when nil).
    public var snooze: Int64? = nil
    /// Seconds after its time a missed occurrence is still shown (the scheduler's default, 1 hour, when nil).
    public var grace: Int64? = nil
    /// A program that writes the body at fire time.
    public var bodyCommand: BodyCommand? = nil

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
        case seconds(Int)

        var expiration: Expiration {
            switch self {
            case .serverDefault: .serverDefault
            case .never: .never
            case .seconds(let s): .milliseconds(Int32(clamping: max(1, s) * 1000))
            }
        }
    }

    private enum CodingKeys: String, CodingKey {
        case title, subtitle, body, label, sound, urgency, icon, category, actions, expiry, bodyIsMarkup, userInfo
        case snooze, grace, bodyCommand
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
        snooze = try c.decodeIfPresent(Int64.self, forKey: .snooze).map { max($0, 1) }
        grace = try c.decodeIfPresent(Int64.self, forKey: .grace).map { max($0, 0) }
        bodyCommand = try c.decodeIfPresent(BodyCommand.self, forKey: .bodyCommand)
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
        try c.encodeIfPresent(snooze, forKey: .snooze)
        try c.encodeIfPresent(grace, forKey: .grace)
        try c.encodeIfPresent(bodyCommand, forKey: .bodyCommand)
    }
}

/// When a request fires: a rule, whether it repeats, the zone it is evaluated
/// in (the system's when nil) and when it was set (intervals count from then).
public struct Trigger: Hashable, Sendable, Codable {
    public var rule: Rule
    public var repeats: Bool
    public var timeZone: String?
    public var anchor: UnixTime
    /// How far past its whole second each occurrence falls, in nanoseconds
    /// (0..<1,000,000,000). Calendar rules fire on the second (0); an egg timer
    /// set at 12:00:00.7 for 5 minutes fires at 12:05:00.7, not up to a second early.
    public var nanosecond: Int32 = 0

    /// A trigger from any rule text (`16:35 mon-fri`, `in 5m`, `*:0/15`).
    public init(parsing text: String, repeats: Bool? = nil, timeZone: String? = nil, anchor: UnixTime) throws(RuleError) {
        let rule = try Rule(parsing: text)
        self.init(rule: rule, repeats: repeats ?? rule.repeats, timeZone: timeZone, anchor: anchor)
    }

    /// An egg timer: `seconds` from `anchor` (and `nanosecond` past it).
    public static func timeInterval(_ seconds: Int64, repeats: Bool = false, anchor: UnixTime, nanosecond: Int32 = 0) -> Trigger {
        Trigger(rule: .interval(seconds: seconds, repeats: repeats), repeats: repeats, timeZone: nil, anchor: anchor,
                nanosecond: nanosecond)
    }

    /// A `UNCalendarNotificationTrigger`: fires when the components match.
    public static func calendar(matching components: DateComponents, repeats: Bool, timeZone: String? = nil,
                                anchor: UnixTime) throws(RuleError) -> Trigger {
        Trigger(rule: .calendar(try components.expression()), repeats: repeats, timeZone: timeZone, anchor: anchor)
    }

    public init(rule: Rule, repeats: Bool, timeZone: String?, anchor: UnixTime, nanosecond: Int32 = 0) {
        self.rule = rule
        self.repeats = repeats
        self.timeZone = timeZone
        self.anchor = anchor
        self.nanosecond = min(max(nanosecond, 0), 999_999_999)
    }

    /// The zone the rule is evaluated in.
    public var zone: Zone {
        timeZone.flatMap { try? Zone.named($0) } ?? .system()
    }

    /// The next fire time strictly after `time`, recomputed from the rule every time
    /// (whole seconds; the occurrence itself is `nanosecond` past it).
    public func nextFireDate(after time: UnixTime) -> UnixTime? {
        rule.nextFire(after: time, anchor: anchor, repeats: repeats, in: zone)
    }

    /// The next occurrence strictly after the whole second `time`, in nanoseconds since the epoch.
    public func nextFireNanoseconds(after time: UnixTime) -> Int64? {
        guard let seconds = nextFireDate(after: time) else { return nil }
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? Int64.max : scaled + Int64(nanosecond)
    }

    private enum CodingKeys: String, CodingKey { case kind, rule, seconds, at, repeats, timeZone, anchor, nanosecond }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        repeats = try c.decodeIfPresent(Bool.self, forKey: .repeats) ?? false
        timeZone = try c.decodeIfPresent(String.self, forKey: .timeZone)
        anchor = try c.decodeIfPresent(Int64.self, forKey: .anchor) ?? 0
        let nanosecond = try c.decodeIfPresent(Int32.self, forKey: .nanosecond) ?? 0
        guard (0..<1_000_000_000).contains(nanosecond) else {
            throw DecodingError.dataCorruptedError(forKey: .nanosecond, in: c, debugDescription: "nanosecond must be 0-999999999")
        }
        self.nanosecond = nanosecond
        switch try c.decode(String.self, forKey: .kind) {
        case "interval":
            rule = .interval(seconds: try c.decode(Int64.self, forKey: .seconds), repeats: repeats)
        case "instant":
            rule = .instant(try c.decode(Int64.self, forKey: .at))
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
        case .interval(let seconds, _):
            try c.encode("interval", forKey: .kind)
            try c.encode(seconds, forKey: .seconds)
        case .instant(let t):
            try c.encode("instant", forKey: .kind)
            try c.encode(t, forKey: .at)
        case .calendar(let expression):
            try c.encode("calendar", forKey: .kind)
            try c.encode(expression.description, forKey: .rule)
        }
        try c.encode(repeats, forKey: .repeats)
        try c.encodeIfPresent(timeZone, forKey: .timeZone)
        try c.encode(anchor, forKey: .anchor)
        if nanosecond != 0 { try c.encode(nanosecond, forKey: .nanosecond) }
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
