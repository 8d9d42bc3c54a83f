import Timekeeping

/// An alarm occurrence that passed while it could not be shown (daemon down, machine asleep).
public struct MissedOccurrence: Hashable, Sendable {
    public var identifier: String
    public var due: Instant
    public var recorded: Instant
    /// Why it was not shown, when something went wrong (nil: the daemon was not running, or the machine slept).
    public var reason: String?

    public init(identifier: String, due: Instant, recorded: Instant, reason: String? = nil) {
        self.identifier = identifier
        self.due = due
        self.recorded = recorded
        self.reason = reason
    }
}

/// An occurrence the notification server failed to show, waiting to be tried again.
public struct Retry: Hashable, Sendable {
    public var identifier: String
    public var due: Instant
    /// How many attempts failed so far.
    public var attempt: Int
    public var nextTry: Instant
    /// Why the last attempt failed.
    public var reason: String

    public init(identifier: String, due: Instant, attempt: Int, nextTry: Instant, reason: String) {
        self.identifier = identifier
        self.due = due
        self.attempt = attempt
        self.nextTry = nextTry
        self.reason = reason
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
