import DBus

/// How urgent a notification is (the `urgency` hint).
public enum Urgency: UInt8, Sendable, Hashable, CaseIterable {
    case low = 0
    case normal = 1
    case critical = 2

    /// The name people and notify-send use: `low`, `normal`, `critical`.
    public var name: String {
        switch self {
        case .low: "low"
        case .normal: "normal"
        case .critical: "critical"
        }
    }

    /// Parses `low`, `normal` or `critical`, ignoring case (as notify-send does).
    public init?(name: String) {
        switch name.lowercased() {
        case "low": self = .low
        case "normal": self = .normal
        case "critical": self = .critical
        default: return nil
        }
    }
}

/// When the server should take the notification down. Hides the protocol's
/// `-1` (server default) and `0` (never).
public enum Expiration: Sendable, Hashable {
    /// The server decides (`-1` on the wire).
    case serverDefault
    /// The notification stays until the user closes it (`0`).
    case never
    /// After this many milliseconds (a positive number).
    case milliseconds(Int32)
    /// A negative value other than -1, which the spec leaves undefined (servers take it as their
    /// default); kept so it goes on the wire as given, as notify-send sends `-t -5`.
    case undefined(Int32)

    /// The `expire_timeout` argument of `Notify`.
    public var wireValue: Int32 {
        switch self {
        case .serverDefault: -1
        case .never: 0
        case .milliseconds(let ms): max(1, ms)
        case .undefined(let value): value
        }
    }

    /// Reads an `expire_timeout`: -1 is the server's default, other negative values are undefined.
    public init(wireValue: Int32) {
        switch wireValue {
        case -1: self = .serverDefault
        case ..<0: self = .undefined(wireValue)
        case 0: self = .never
        default: self = .milliseconds(wireValue)
        }
    }
}

/// A button (or the default click) the server may offer.
public struct Action: Sendable, Hashable {
    /// The key reported back in `ActionInvoked`; `default` is the click on the body.
    public var key: String
    /// The label shown to the user.
    public var label: String

    public init(key: String, label: String) {
        self.key = key
        self.label = label
    }

    /// The action taken when the notification itself is clicked.
    public static func `default`(label: String = "Open") -> Action { Action(key: "default", label: label) }
}

/// Everything a `Notify` call carries.
///
/// ```swift
/// var note = Notification(summary: "Wait!", body: "Your eggs are almost done!")
/// note.hints = [.urgency(.critical), .soundName("alarm-clock-elapsed")]
/// let id = try client.notify(note)
/// ```
public struct Notification: Sendable, Hashable {
    /// The sending application's name.
    public var appName: String
    /// The id of a notification to replace, or 0 for a new one.
    public var replacesID: UInt32
    /// An icon name from the theme, or a `file://` URI or path.
    public var icon: String
    /// The single-line summary.
    public var summary: String
    /// The body (may contain markup where the server has `body-markup`).
    public var body: String
    /// Buttons, in order.
    public var actions: [Action]
    /// Hints; when one name appears twice the later one wins.
    public var hints: [Hint]
    /// When the server should expire it.
    public var expiration: Expiration

    public init(
        appName: String = "chime", replacesID: UInt32 = 0, icon: String = "", summary: String, body: String = "",
        actions: [Action] = [], hints: [Hint] = [], expiration: Expiration = .serverDefault
    ) {
        self.appName = appName
        self.replacesID = replacesID
        self.icon = icon
        self.summary = summary
        self.body = body
        self.actions = actions
        self.hints = hints
        self.expiration = expiration
    }

    /// The eight arguments of `Notify` (`susssasa{sv}i`).
    public var arguments: [Value] {
        var flatActions: [Value] = []
        flatActions.reserveCapacity(actions.count * 2)
        for action in actions {
            flatActions.append(.string(action.key))
            flatActions.append(.string(action.label))
        }
        return [
            .string(appName), .uint32(replacesID), .string(icon), .string(summary), .string(body),
            .array(element: .string, flatActions), Hint.dictionary(hints), .int32(expiration.wireValue),
        ]
    }
}

/// What a notification server says about itself (`GetServerInformation`).
public struct ServerInformation: Sendable, Hashable, Codable {
    public var name: String
    public var vendor: String
    public var version: String
    public var specVersion: String

    public init(name: String, vendor: String, version: String, specVersion: String) {
        self.name = name
        self.vendor = vendor
        self.version = version
        self.specVersion = specVersion
    }
}

/// A capability a server advertises (`GetCapabilities`), with the spec's names as constants.
public struct Capability: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }

    public static let actionIcons: Capability = "action-icons"
    public static let actions: Capability = "actions"
    public static let body: Capability = "body"
    public static let bodyHyperlinks: Capability = "body-hyperlinks"
    public static let bodyImages: Capability = "body-images"
    public static let bodyMarkup: Capability = "body-markup"
    public static let iconMulti: Capability = "icon-multi"
    public static let iconStatic: Capability = "icon-static"
    public static let persistence: Capability = "persistence"
    public static let sound: Capability = "sound"

    /// The capabilities the specification (1.3) defines, in its order.
    public static let standard: [Capability] = [
        .actionIcons, .actions, .body, .bodyHyperlinks, .bodyImages, .bodyMarkup, .iconMulti, .iconStatic,
        .persistence, .sound,
    ]

    /// What the specification says this capability means, or nil for a vendor extension.
    public var meaning: String? {
        switch self {
        case .actionIcons: "shows icons instead of text on action buttons"
        case .actions: "shows actions (buttons) and reports which one was invoked"
        case .body: "shows a body text"
        case .bodyHyperlinks: "turns <a href> in the body into links"
        case .bodyImages: "shows <img> in the body"
        case .bodyMarkup: "renders markup (<b>, <i>, <u>) in the body"
        case .iconMulti: "animates a sequence of icons"
        case .iconStatic: "shows one static icon"
        case .persistence: "keeps notifications until the user dismisses them"
        case .sound: "plays the sound-file and sound-name hints"
        default: nil
        }
    }
}

/// Why a notification closed (`NotificationClosed`'s reason).
public enum CloseReason: Sendable, Hashable {
    /// It expired (1).
    case expired
    /// The user dismissed it (2).
    case dismissed
    /// `CloseNotification` closed it (3).
    case closedByCall
    /// Undefined or reserved (4).
    case undefined
    /// A number the spec does not define.
    case other(UInt32)

    public init(wireValue: UInt32) {
        switch wireValue {
        case 1: self = .expired
        case 2: self = .dismissed
        case 3: self = .closedByCall
        case 4: self = .undefined
        default: self = .other(wireValue)
        }
    }

    public var wireValue: UInt32 {
        switch self {
        case .expired: 1
        case .dismissed: 2
        case .closedByCall: 3
        case .undefined: 4
        case .other(let value): value
        }
    }

    /// A word for scripts: `expired`, `dismissed`, `closed`, `undefined`, `unknown`.
    public var name: String {
        switch self {
        case .expired: "expired"
        case .dismissed: "dismissed"
        case .closedByCall: "closed"
        case .undefined: "undefined"
        case .other: "unknown"
        }
    }
}

/// A signal from the notification server.
public enum NotificationEvent: Sendable, Hashable {
    /// `NotificationClosed(id, reason)`.
    case closed(id: UInt32, reason: CloseReason)
    /// `ActionInvoked(id, action_key)`.
    case actionInvoked(id: UInt32, key: String)
    /// `ActivationToken(id, activation_token)`, sent just before `ActionInvoked`.
    case activationToken(id: UInt32, token: String)

    /// The notification this event is about.
    public var id: UInt32 {
        switch self {
        case .closed(let id, _), .actionInvoked(let id, _), .activationToken(let id, _): id
        }
    }
}

extension Notification {
    /// The same notification with a change nobody sees: a zero-width space (U+200B) after the
    /// body, or after the summary when the body is empty (where an empty body stays empty). Plasma
    /// compares app name, summary and body to refuse a repeat within a second; this passes it.
    public func variedInvisibly() -> Notification {
        var varied = self
        if body.isEmpty { varied.summary += "\u{200B}" } else { varied.body += "\u{200B}" }
        return varied
    }
}
