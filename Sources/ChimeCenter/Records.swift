import Timekeeping

/// An alarm occurrence that passed while it could not be shown (daemon down, machine asleep).
public struct MissedOccurrence: Hashable, Sendable {
    public var identifier: String
    public var due: Instant
    public var recorded: Instant

    public init(identifier: String, due: Instant, recorded: Instant) {
        self.identifier = identifier
        self.due = due
        self.recorded = recorded
    }
}

/// A notification the server showed: our identifier, the server's id, when, and what.
public struct DeliveredNotification: Hashable, Sendable {
    public var identifier: String
    public var serverID: UInt32
    public var date: Instant
    public var content: NotificationContent

    public init(identifier: String, serverID: UInt32, date: Instant, content: NotificationContent) {
        self.identifier = identifier
        self.serverID = serverID
        self.date = date
        self.content = content
    }
}
