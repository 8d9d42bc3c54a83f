import DBus
import FoundationEssentials
import Timekeeping

/// The scheduler daemon's address on the session bus.
public enum SchedulerInterface {
    public static let busName: BusName = "org.chime.Scheduler"
    public static let path: ObjectPath = "/org/chime/Scheduler"
    public static let interface: InterfaceName = "org.chime.Scheduler1"
    /// Error names the daemon answers with.
    public static let invalidRequest: ErrorName = "org.chime.Scheduler.Error.InvalidRequest"
    public static let invalidRule: ErrorName = "org.chime.Scheduler.Error.InvalidRule"
    public static let unknownIdentifier: ErrorName = "org.chime.Scheduler.Error.UnknownIdentifier"
    public static let storeFailed: ErrorName = "org.chime.Scheduler.Error.StoreFailed"
    /// The identifier belongs to an alarm in the alarm file: change it there.
    public static let fromAlarmFile: ErrorName = "org.chime.Scheduler.Error.FromAlarmFile"
}

/// Where a pending alarm came from. The alarm file's alarms follow the file; a reload never
/// touches those added from the command line or over D-Bus.
public enum AlarmOrigin: String, Hashable, Sendable, Codable {
    case commandLine = "command-line"
    case file
}

/// A pending request with when it fires next (nil: never again).
public struct PendingRequest: Hashable, Sendable, Codable {
    public var request: NotificationRequest
    public var nextFire: UnixTime?
    public init(request: NotificationRequest, nextFire: UnixTime?) {
        self.request = request
        self.nextFire = nextFire
    }
}

/// A pending alarm as `chime list` shows it: small enough to list 100,000 in one reply.
public struct PendingSummary: Hashable, Sendable, Codable {
    public var identifier: String
    public var nextFire: UnixTime?
    public var title: String
    public var label: String
    public var timeZone: String?
    /// Absent (nil) for the command line's alarms, so a list of 100,000 stays small.
    private var from: AlarmOrigin?
    public var origin: AlarmOrigin {
        get { from ?? .commandLine }
        set { from = newValue == .commandLine ? nil : newValue }
    }

    enum CodingKeys: String, CodingKey {
        case identifier, nextFire, title, label, timeZone
        case from = "origin"
    }

    public init(identifier: String, nextFire: UnixTime?, title: String, label: String, timeZone: String?,
                origin: AlarmOrigin = .commandLine) {
        self.identifier = identifier
        self.nextFire = nextFire
        self.title = title
        self.label = label
        self.timeZone = timeZone
        self.origin = origin
    }
}

/// No scheduler daemon answers on the session bus.
public struct NoSchedulerError: Error, Hashable, Sendable, CustomStringConvertible {
    public var underlying: DBusError
    public var description: String {
        "the chime daemon is not running; start it with `chime daemon &`"
    }
}

/// The UserNotifications-style center: a client of the scheduler daemon, so any
/// Swift program can schedule alarms.
///
/// ```swift
/// let center = try UserNotificationCenter(connection: Connection(.session))
/// try center.add(NotificationRequest(identifier: "eggs", content: NotificationContent(title: "Wait!"),
///                                    trigger: .timeInterval(300, anchor: now)))
/// ```
public final class UserNotificationCenter {
    public let connection: Connection

    public init(connection: Connection) {
        self.connection = connection
    }

    private func call(_ member: MemberName, _ arguments: [Value] = []) throws -> [Value] {
        do {
            return try connection.call(
                destination: SchedulerInterface.busName, path: SchedulerInterface.path,
                interface: SchedulerInterface.interface, member: member, arguments: arguments,
                timeout: .milliseconds(30_000))
        } catch let error as DBusError where error.name == .serviceUnknown || error.name == .nameHasNoOwner {
            throw NoSchedulerError(underlying: error)
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ reply: [Value]) throws -> T {
        guard let text = reply.first?.stringValue else {
            throw DBusError(name: .invalidSignature, message: "the daemon replied without JSON")
        }
        return try JSONDecoder().decode(T.self, from: Data(text.utf8))
    }

    /// What the daemon's notification server can do, as the daemon sees it
    /// (including the local sound player it would use).
    public func notificationSettings() throws -> NotificationSettings {
        try decode(NotificationSettings.self, try call("Settings"))
    }

    /// Adds (or replaces) a request; returns its next fire time. Acknowledged only once it is on disk.
    @discardableResult
    public func add(_ request: NotificationRequest) throws -> UnixTime? {
        let json = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        guard case .int64(let next)? = try call("Add", [.string(json)]).first else { return nil }
        return next < 0 ? nil : next
    }

    /// Pending requests, soonest first.
    public func pendingNotificationRequests() throws -> [PendingRequest] {
        try decode([PendingRequest].self, try call("ListPending"))
    }

    /// Pending alarms in brief (identifier, next fire, title, label), soonest first.
    public func pendingSummaries() throws -> [PendingSummary] {
        try decode([PendingSummary].self, try call("ListPendingSummary"))
    }

    /// Removes pending requests; returns the identifiers that were pending.
    @discardableResult
    public func removePendingNotificationRequests(withIdentifiers identifiers: [String]) throws -> [String] {
        try call("Remove", [.strings(identifiers)]).first?.arrayElements?.compactMap(\.stringValue) ?? []
    }

    /// Removes every pending request added from the command line or over D-Bus (the alarm
    /// file's alarms are changed in the file); returns their identifiers.
    @discardableResult
    public func removeAllPendingNotificationRequests() throws -> [String] {
        try call("RemoveAll").first?.arrayElements?.compactMap(\.stringValue) ?? []
    }

    /// The alarm file the daemon follows, and what it made of it.
    public func alarmFileStatus() throws -> AlarmFileStatus {
        try decode(AlarmFileStatus.self, try call("AlarmFileStatus"))
    }

    /// Has the daemon read the alarm file again now (as on SIGHUP or an edit).
    public func reloadAlarmFile() throws -> AlarmFileStatus {
        try decode(AlarmFileStatus.self, try call("ReloadAlarmFile"))
    }

    /// Notifications the server is showing (or showed), oldest first.
    public func deliveredNotifications() throws -> [DeliveredNotification] {
        try decode([DeliveredNotification].self, try call("ListDelivered"))
    }

    /// Closes delivered notifications.
    public func removeDeliveredNotifications(withIdentifiers identifiers: [String]) throws {
        _ = try call("CloseDelivered", [.strings(identifiers)])
    }

    /// Occurrences that passed while nothing could show them.
    public func missedOccurrences() throws -> [MissedOccurrence] {
        try decode([MissedOccurrence].self, try call("ListMissed"))
    }
}

/// What the daemon made of the alarm file, as `chime status` shows it.
public struct AlarmFileStatus: Hashable, Sendable, Codable {
    /// The file the daemon follows.
    public var path: String
    /// Whether the file was there at the last look.
    public var exists: Bool
    /// Alarms from the file that are scheduled, and those set `enabled = false`.
    public var alarms: Int
    public var disabled: Int
    /// When the running set was loaded (nil: never, or no file).
    public var loaded: UnixTime?
    /// When the file was last read.
    public var checked: UnixTime?
    /// What was wrong at the last read (`file:line:col: message`); the last good set keeps running meanwhile.
    public var problems: [String]
    /// Alarms from the file left out because a command-line alarm has their identifier.
    public var conflicts: [String]

    public init(path: String, exists: Bool = false, alarms: Int = 0, disabled: Int = 0, loaded: UnixTime? = nil,
                checked: UnixTime? = nil, problems: [String] = [], conflicts: [String] = []) {
        self.path = path
        self.exists = exists
        self.alarms = alarms
        self.disabled = disabled
        self.loaded = loaded
        self.checked = checked
        self.problems = problems
        self.conflicts = conflicts
    }
}
