import DBus

/// No notification server could be reached on the bus: nobody owns
/// `org.freedesktop.Notifications` (`ServiceUnknown`, `NameHasNoOwner`) or
/// starting one through D-Bus activation failed or timed out.
public struct NoNotificationServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What the bus answered.
    public var underlying: DBusError

    public var description: String { Self.message }

    /// What the error says.
    public static let message = "no notification server is running on the session bus (org.freedesktop.Notifications has no owner)"

    /// The bus's answer `underlying`, which said no server owns the name.
    public init(underlying: DBusError) { self.underlying = underlying }

    /// Whether `error` means "no server" rather than a failure of a running server.
    static func matches(_ error: DBusError) -> Bool {
        switch error.name {
        case .serviceUnknown, .nameHasNoOwner, .timedOut: true
        default: error.name.rawValue.hasPrefix("org.freedesktop.DBus.Error.Spawn.")
        }
    }
}

/// A typed client of `org.freedesktop.Notifications` (Desktop Notifications spec 1.3).
///
/// ```swift
/// let client = NotificationClient(connection: try Connection(.session))
/// let id = try client.notify(Notification(summary: "Tea", body: "is ready"))
/// try client.close(id)
/// ```
public final class NotificationClient {
    public let connection: Connection
    /// How long each call may take.
    public var timeout: CallTimeout

    public static let busName: BusName = "org.freedesktop.Notifications"
    public static let objectPath: ObjectPath = "/org/freedesktop/Notifications"
    public static let interface: InterfaceName = "org.freedesktop.Notifications"

    public init(connection: Connection, timeout: CallTimeout = .default) {
        self.connection = connection
        self.timeout = timeout
    }

    private func call(_ member: MemberName, _ arguments: [Value] = []) throws -> [Value] {
        do {
            return try connection.call(
                destination: Self.busName, path: Self.objectPath, interface: Self.interface, member: member,
                arguments: arguments, timeout: timeout)
        } catch let error as DBusError where NoNotificationServerError.matches(error) {
            throw NoNotificationServerError(underlying: error)
        }
    }

    /// The error KDE Plasma answers to a notification identical (app name, summary and body) to the one
    /// it accepted less than a second before.
    public static let excessNotificationGeneration: ErrorName = "org.freedesktop.Notifications.Error.ExcessNotificationGeneration"

    /// Whether `error` is Plasma's refusal of a duplicate, which `Notification.variedInvisibly()` gets past.
    public static func isDuplicateRefusal(_ error: any Error) -> Bool {
        (error as? DBusError)?.name == excessNotificationGeneration
    }

    /// Shows (or replaces) a notification and returns its id. `Notify`. A server that refuses it as
    /// a duplicate of the one before (Plasma, within a second) gets it once more with a change the
    /// user cannot see: the user asked for two notifications, so they get two.
    public func notify(_ notification: Notification) throws -> UInt32 {
        do {
            return try notifyOnce(notification)
        } catch where Self.isDuplicateRefusal(error) {
            return try notifyOnce(notification.variedInvisibly())
        }
    }

    private func notifyOnce(_ notification: Notification) throws -> UInt32 {
        let reply = try call("Notify", notification.arguments)
        guard let id = reply.first?.uint32Value else {
            throw DBusError(name: .invalidSignature, message: "Notify replied with '\(reply.map(\.signature).joined())' instead of 'u'")
        }
        return id
    }

    /// Closes a notification; the server answers with `NotificationClosed` (reason 3). `CloseNotification`.
    public func close(_ id: UInt32) throws {
        _ = try call("CloseNotification", [.uint32(id)])
    }

    /// What the server can do. `GetCapabilities`.
    public func capabilities() throws -> [Capability] {
        let reply = try call("GetCapabilities")
        guard let items = reply.first?.arrayElements else {
            throw DBusError(name: .invalidSignature, message: "GetCapabilities replied with '\(reply.map(\.signature).joined())' instead of 'as'")
        }
        return items.compactMap { $0.stringValue.map(Capability.init(rawValue:)) }
    }

    /// The server's name, vendor, version and spec version. `GetServerInformation`.
    public func serverInformation() throws -> ServerInformation {
        let reply = try call("GetServerInformation")
        let strings = reply.compactMap(\.stringValue)
        guard strings.count == 4, reply.count == 4 else {
            throw DBusError(name: .invalidSignature, message: "GetServerInformation replied with '\(reply.map(\.signature).joined())' instead of 'ssss'")
        }
        return ServerInformation(name: strings[0], vendor: strings[1], version: strings[2], specVersion: strings[3])
    }

    // MARK: - Without waiting, for a poll loop

    /// Sends `Notify` and returns at once; the answer arrives through the call while the
    /// connection is dispatched (`notificationID(from:)` reads it).
    public func beginNotify(_ notification: Notification) throws -> PendingCall {
        try begin("Notify", notification.arguments)
    }

    /// Sends `GetCapabilities` and returns at once (`capabilities(from:)` reads the answer).
    public func beginCapabilities() throws -> PendingCall {
        try begin("GetCapabilities", [])
    }

    /// Sends `GetServerInformation` and returns at once (`serverInformation(from:)` reads the answer).
    public func beginServerInformation() throws -> PendingCall {
        try begin("GetServerInformation", [])
    }

    /// The server's name, vendor, version and spec version in a `GetServerInformation` answer.
    public static func serverInformation(from answer: Result<Message, any Error>) throws -> ServerInformation {
        let reply = try arguments(of: answer)
        let strings = reply.compactMap(\.stringValue)
        guard strings.count == 4, reply.count == 4 else {
            throw DBusError(name: .invalidSignature, message: "GetServerInformation replied with '\(reply.map(\.signature).joined())' instead of 'ssss'")
        }
        return ServerInformation(name: strings[0], vendor: strings[1], version: strings[2], specVersion: strings[3])
    }

    /// Asks the server to close a notification and does not wait for its answer.
    public func requestClose(_ id: UInt32) throws {
        try connection.send(try Message.methodCall(
            destination: Self.busName, path: Self.objectPath, interface: Self.interface, member: "CloseNotification",
            arguments: [.uint32(id)]))
    }

    private func begin(_ member: MemberName, _ arguments: [Value]) throws -> PendingCall {
        let message = try Message.methodCall(
            destination: Self.busName, path: Self.objectPath, interface: Self.interface, member: member, arguments: arguments)
        return try connection.send(message, timeout: timeout)
    }

    /// The notification id in a `Notify` answer; "no server" errors as `NoNotificationServerError`.
    public static func notificationID(from answer: Result<Message, any Error>) throws -> UInt32 {
        let reply = try arguments(of: answer)
        guard let id = reply.first?.uint32Value else {
            throw DBusError(name: .invalidSignature, message: "Notify replied with '\(reply.map(\.signature).joined())' instead of 'u'")
        }
        return id
    }

    /// The capabilities in a `GetCapabilities` answer.
    public static func capabilities(from answer: Result<Message, any Error>) throws -> [Capability] {
        let reply = try arguments(of: answer)
        guard let items = reply.first?.arrayElements else {
            throw DBusError(name: .invalidSignature, message: "GetCapabilities replied with '\(reply.map(\.signature).joined())' instead of 'as'")
        }
        return items.compactMap { $0.stringValue.map(Capability.init(rawValue:)) }
    }

    private static func arguments(of answer: Result<Message, any Error>) throws -> [Value] {
        do {
            return try answer.get().arguments()
        } catch let error as DBusError where NoNotificationServerError.matches(error) {
            throw NoNotificationServerError(underlying: error)
        }
    }

    /// Whether a server owns the name right now (without starting one).
    public func serverIsRunning() throws -> Bool {
        try connection.nameHasOwner(Self.busName)
    }

    /// Delivers `NotificationClosed`, `ActionInvoked` and `ActivationToken` to
    /// `handler` while the connection is dispatched. Subscribe before `notify`
    /// so no signal can slip past.
    @discardableResult
    public func subscribe(_ handler: @escaping (NotificationEvent) -> Void) throws -> [SubscriptionToken] {
        func rule(_ member: MemberName) -> MatchRule {
            MatchRule(sender: Self.busName, interface: Self.interface, member: member, path: Self.objectPath)
        }
        let closed = try connection.subscribe(rule("NotificationClosed")) { message in
            let args = message.arguments()
            guard args.count == 2, case .uint32(let id) = args[0], case .uint32(let reason) = args[1] else { return }
            handler(.closed(id: id, reason: CloseReason(wireValue: reason)))
        }
        let invoked = try connection.subscribe(rule("ActionInvoked")) { message in
            let args = message.arguments()
            guard args.count == 2, case .uint32(let id) = args[0], case .string(let key) = args[1] else { return }
            handler(.actionInvoked(id: id, key: key))
        }
        let token = try connection.subscribe(rule("ActivationToken")) { message in
            let args = message.arguments()
            guard args.count == 2, case .uint32(let id) = args[0], case .string(let text) = args[1] else { return }
            handler(.activationToken(id: id, token: text))
        }
        return [closed, invoked, token]
    }
}
