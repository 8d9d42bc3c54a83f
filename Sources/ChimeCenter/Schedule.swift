import DBus
import Notifications
import Timekeeping

/// An alarm occurrence that passed while it could not be shown (daemon down, machine asleep).
public struct MissedOccurrence: Hashable, Sendable, Codable {
    public var identifier: String
    public var due: UnixTime
    public var recorded: UnixTime

    public init(identifier: String, due: UnixTime, recorded: UnixTime) {
        self.identifier = identifier
        self.due = due
        self.recorded = recorded
    }
}

/// A notification the server showed: our identifier, the server's id, when, and what.
public struct DeliveredNotification: Hashable, Sendable, Codable {
    public var identifier: String
    public var serverID: UInt32
    public var date: UnixTime
    public var content: NotificationContent

    public init(identifier: String, serverID: UInt32, date: UnixTime, content: NotificationContent) {
        self.identifier = identifier
        self.serverID = serverID
        self.date = date
        self.content = content
    }
}

/// Pending requests and delivered notifications, with UserNotifications' rules:
/// adding a request with an identifier already pending replaces it; pending
/// requests list in order of their next fire; delivered notifications map our
/// identifiers to the server's ids so they can be closed.
public struct Schedule: Hashable, Sendable, Codable {
    public private(set) var pending: [NotificationRequest] = []
    public private(set) var delivered: [DeliveredNotification] = []
    /// Where each identifier sits in `pending`, so lookups stay O(1) with 100,000 alarms.
    private var index: [String: Int] = [:]

    public init() {}

    private enum CodingKeys: String, CodingKey { case pending, delivered }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        for request in try c.decodeIfPresent([NotificationRequest].self, forKey: .pending) ?? [] { add(request) }
        delivered = try c.decodeIfPresent([DeliveredNotification].self, forKey: .delivered) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(pending, forKey: .pending)
        try c.encode(delivered, forKey: .delivered)
    }

    public static func == (a: Schedule, b: Schedule) -> Bool {
        a.pending == b.pending && a.delivered == b.delivered
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(pending)
        hasher.combine(delivered)
    }

    /// The pending request with this identifier.
    public func request(withIdentifier identifier: String) -> NotificationRequest? {
        index[identifier].map { pending[$0] }
    }

    /// Adds `request`, replacing a pending one with the same identifier; true when it replaced one.
    @discardableResult
    public mutating func add(_ request: NotificationRequest) -> Bool {
        if let position = index[request.identifier] {
            pending[position] = request
            return true
        }
        index[request.identifier] = pending.count
        pending.append(request)
        return false
    }

    /// Pending requests with their next fire after `now`, soonest first; requests
    /// that will not fire again come last, then ties by identifier.
    public func pendingRequests(after now: UnixTime) -> [(request: NotificationRequest, nextFire: UnixTime?)] {
        pending.map { ($0, $0.trigger.nextFireDate(after: now)) }.sorted { Schedule.soonerFirst(($0.0.identifier, $0.1), ($1.0.identifier, $1.1)) }
    }

    /// The listing order: soonest next fire first, never-again last, ties by identifier.
    public static func soonerFirst(_ a: (identifier: String, nextFire: UnixTime?), _ b: (identifier: String, nextFire: UnixTime?)) -> Bool {
        switch (a.nextFire, b.nextFire) {
        case let (x?, y?) where x != y: x < y
        case (_?, nil): true
        case (nil, _?): false
        default: a.identifier < b.identifier
        }
    }

    /// Removes the pending requests with these identifiers; returns those it found.
    @discardableResult
    public mutating func removePending(withIdentifiers identifiers: [String]) -> [String] {
        var found: [String] = []
        for identifier in identifiers {
            guard let position = index.removeValue(forKey: identifier) else { continue }
            found.append(identifier)
            // Move the last request into the gap: O(1); listing sorts by next fire anyway.
            let last = pending.removeLast()
            if position < pending.count {
                pending[position] = last
                index[last.identifier] = position
            }
        }
        return found
    }

    public mutating func removeAllPending() {
        pending.removeAll()
        index.removeAll()
    }

    /// Records that the server showed `identifier` as `serverID`.
    public mutating func recordDelivery(_ notification: DeliveredNotification) {
        delivered.removeAll { $0.identifier == notification.identifier }
        delivered.append(notification)
    }

    /// Delivered notifications, most recent last.
    public func deliveredNotifications() -> [DeliveredNotification] {
        delivered.sorted { ($0.date, $0.identifier) < ($1.date, $1.identifier) }
    }

    /// Forgets the delivered notifications with these identifiers and returns their server ids (to close).
    public mutating func removeDelivered(withIdentifiers identifiers: [String]) -> [UInt32] {
        let ids = delivered.filter { identifiers.contains($0.identifier) }.map(\.serverID)
        delivered.removeAll { identifiers.contains($0.identifier) }
        return ids
    }

    /// Forgets a notification the server closed (`NotificationClosed`).
    public mutating func serverClosed(_ serverID: UInt32) {
        delivered.removeAll { $0.serverID == serverID }
    }
}

/// Shows requests on the live notification server and closes them again: the
/// part of a notification center that talks to the server. The scheduler
/// daemon decides when; this does the showing, fitted to the server.
public final class Deliverer {
    public let client: NotificationClient
    private var capabilities: [Capability]?

    public init(connection: Connection) {
        client = NotificationClient(connection: connection, timeout: .milliseconds(10_000))
    }

    /// Renders `request` for the server's capabilities (asked once, then remembered), shows it
    /// (replacing an earlier delivery of the same identifier), and records the delivery.
    public func deliver(_ request: NotificationRequest, at now: UnixTime, into schedule: inout Schedule) throws -> Rendered {
        let capabilities = try self.capabilities ?? client.capabilities()
        self.capabilities = capabilities
        let previous = schedule.delivered.first { $0.identifier == request.identifier }?.serverID ?? 0
        let rendered = render(request.content, for: capabilities, replacesID: previous)
        let id = try client.notify(rendered.notification)
        schedule.recordDelivery(DeliveredNotification(identifier: request.identifier, serverID: id, date: now, content: request.content))
        return rendered
    }

    /// Closes the delivered notifications with these identifiers.
    public func removeDelivered(withIdentifiers identifiers: [String], from schedule: inout Schedule) throws {
        for id in schedule.removeDelivered(withIdentifiers: identifiers) { try client.close(id) }
    }

    /// Forgets the remembered capabilities (the server changed).
    public func serverChanged() { capabilities = nil }
}
