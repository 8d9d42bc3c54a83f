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

    public init(identifier: String, nextFire: UnixTime?, title: String, label: String, timeZone: String?) {
        self.identifier = identifier
        self.nextFire = nextFire
        self.title = title
        self.label = label
        self.timeZone = timeZone
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

    public func removeAllPendingNotificationRequests() throws {
        _ = try call("RemoveAll")
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
