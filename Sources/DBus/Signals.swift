internal import CDBus

/// A match rule: which signals the bus should route to this connection.
///
/// ```swift
/// let rule = MatchRule(sender: "org.freedesktop.Notifications",
///                      interface: "org.freedesktop.Notifications",
///                      member: "NotificationClosed")
/// rule.text  // "type='signal',sender='org.freedesktop.Notifications',..."
/// ```
public struct MatchRule: Hashable, Sendable, CustomStringConvertible {
    public var sender: BusName?
    public var interface: InterfaceName?
    public var member: MemberName?
    public var path: ObjectPath?
    /// Matches when the first argument is this string.
    public var arg0: String?

    public init(
        sender: BusName? = nil, interface: InterfaceName? = nil, member: MemberName? = nil,
        path: ObjectPath? = nil, arg0: String? = nil
    ) {
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.arg0 = arg0
    }

    /// The rule in the bus's syntax.
    public var text: String {
        var parts = ["type='signal'"]
        func quote(_ value: String) -> String {
            // Inside quotes only the apostrophe needs care: close, escape, reopen.
            "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
        }
        if let sender { parts.append("sender=" + quote(sender.rawValue)) }
        if let interface { parts.append("interface=" + quote(interface.rawValue)) }
        if let member { parts.append("member=" + quote(member.rawValue)) }
        if let path { parts.append("path=" + quote(path.rawValue)) }
        if let arg0 { parts.append("arg0=" + quote(arg0)) }
        return parts.joined(separator: ",")
    }

    public var description: String { text }

    /// Whether a received signal matches. A signal is believed only from its sender: any
    /// client may send any signal straight to us (unicast), whatever our match rules say,
    /// so the sender is checked here too. The bus driver's signals come from
    /// `org.freedesktop.DBus`; a well-known name's from its current owner (`owner`, which the
    /// connection follows), never from anyone else.
    func matches(_ message: Message, owner: (BusName) -> String?) -> Bool {
        if let sender {
            if sender == .bus || sender.isUnique {
                guard message.sender == sender.rawValue else { return false }
            } else {
                guard let current = owner(sender), message.sender == current else { return false }
            }
        }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let path, message.path != path { return false }
        if let arg0 {
            guard let first = message.arguments().first, case .string(let text) = first, text == arg0 else {
                return false
            }
        }
        return true
    }
}

/// A signal handler registered with `Connection.subscribe`.
struct Subscription {
    let rule: MatchRule
    let handler: (Message) -> Void
}

/// Identifies a subscription so it can be cancelled.
public struct SubscriptionToken: Hashable, Sendable {
    let id: Int
}

extension Connection {
    /// Asks the bus to route signals matching `rule` here and calls `handler`
    /// for each one while the connection is dispatched.
    /// The corresponding C function is `dbus_bus_add_match`.
    ///
    /// With a well-known `sender`, only signals from the name's current owner reach `handler`:
    /// the connection follows the name's owner (asked now, then kept by `NameOwnerChanged`
    /// from the bus driver), so a signal that another client forges is dropped.
    @discardableResult
    public func subscribe(_ rule: MatchRule, handler: @escaping (Message) -> Void) throws -> SubscriptionToken {
        installFilter()
        if rule.arg0?.utf8.contains(0) == true {
            throw InvalidValueError(location: "match rule arg0", reason: "string contains a NUL byte")
        }
        if let sender = rule.sender, sender != .bus, !sender.isUnique, !followedOwners.contains(where: { $0.name == sender }) {
            try addMatch(MatchRule(sender: .bus, interface: .dbus, member: "NameOwnerChanged", path: "/org/freedesktop/DBus",
                                   arg0: sender.rawValue))
            followedOwners.append((sender, try nameOwner(sender)))
        }
        try addMatch(rule)
        let id = nextSubscriptionID
        nextSubscriptionID += 1
        subscriptions.append((id, Subscription(rule: rule, handler: handler)))
        return SubscriptionToken(id: id)
    }

    /// Stops a subscription and removes its rule from the bus.
    public func unsubscribe(_ token: SubscriptionToken) throws {
        guard let index = subscriptions.firstIndex(where: { $0.id == token.id }) else { return }
        let subscription = subscriptions.remove(at: index).subscription
        try DBusError.check { dbus_bus_remove_match(raw, subscription.rule.text, $0) }
    }

    private func addMatch(_ rule: MatchRule) throws {
        try DBusError.check(call: CallDescription(destination: BusName.bus.rawValue, path: "/org/freedesktop/DBus",
                                                  interface: InterfaceName.dbus.rawValue, member: "AddMatch")) {
            dbus_bus_add_match(raw, rule.text, $0)
        }
    }

    /// The current owner of a name this connection follows (a subscription's well-known sender).
    func followedOwner(_ name: BusName) -> String? {
        followedOwners.first { $0.name == name }?.owner
    }

    func deliverSignal(_ message: Message) {
        // Ownership changes first, and only from the bus driver: the checks below use them.
        if message.sender == BusName.bus.rawValue, message.interface == .dbus, message.member == "NameOwnerChanged",
            !followedOwners.isEmpty
        {
            let args = message.arguments()
            if args.count == 3, let name = args[0].stringValue, let new = args[2].stringValue,
                let index = followedOwners.firstIndex(where: { $0.name.rawValue == name })
            {
                followedOwners[index].owner = new.isEmpty ? nil : new
            }
        }
        // Handlers may subscribe or unsubscribe; iterate over a snapshot, in subscription order.
        for (_, subscription) in subscriptions where subscription.rule.matches(message, owner: followedOwner) {
            subscription.handler(message)
        }
    }

    /// Emits a signal from `path`.
    public func emit(path: ObjectPath, interface: InterfaceName, member: MemberName, arguments: [Value] = []) throws {
        try send(Message.signal(path: path, interface: interface, member: member, arguments: arguments))
    }
}

// MARK: - The message bus's own methods

/// How `requestName` went.
public enum RequestNameReply: Sendable, Hashable {
    case primaryOwner, inQueue, exists, alreadyOwner
}

/// Options for `requestName`.
public struct RequestNameFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let allowReplacement = RequestNameFlags(rawValue: CDBUS_NAME_FLAG_ALLOW_REPLACEMENT)
    public static let replaceExisting = RequestNameFlags(rawValue: CDBUS_NAME_FLAG_REPLACE_EXISTING)
    public static let doNotQueue = RequestNameFlags(rawValue: CDBUS_NAME_FLAG_DO_NOT_QUEUE)
}

extension Connection {
    private func busCall(_ member: MemberName, _ arguments: [Value]) throws -> [Value] {
        try call(destination: .bus, path: "/org/freedesktop/DBus", interface: .dbus, member: member, arguments: arguments)
    }

    /// Asks the bus for a well-known name. The corresponding C function is `dbus_bus_request_name`.
    public func requestName(_ name: BusName, flags: RequestNameFlags = .doNotQueue) throws -> RequestNameReply {
        let result = try DBusError.check { dbus_bus_request_name(raw, name.rawValue, flags.rawValue, $0) }
        switch result {
        case CDBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER: return .primaryOwner
        case CDBUS_REQUEST_NAME_REPLY_IN_QUEUE: return .inQueue
        case CDBUS_REQUEST_NAME_REPLY_ALREADY_OWNER: return .alreadyOwner
        default: return .exists
        }
    }

    /// Gives up a well-known name.
    public func releaseName(_ name: BusName) throws {
        _ = try DBusError.check { dbus_bus_release_name(raw, name.rawValue, $0) }
    }

    /// Whether some connection owns `name` now.
    public func nameHasOwner(_ name: BusName) throws -> Bool {
        guard case .boolean(let owned)? = try busCall("NameHasOwner", [.string(name.rawValue)]).first else {
            return false
        }
        return owned
    }

    /// The unique name of the owner of `name`, or nil when nobody owns it.
    public func nameOwner(_ name: BusName) throws -> String? {
        do {
            return try busCall("GetNameOwner", [.string(name.rawValue)]).first?.stringValue
        } catch let error as DBusError where error.name == .nameHasNoOwner {
            return nil
        }
    }

    /// Subscribes to ownership changes of `name` (`NameOwnerChanged`):
    /// the handler receives the old and the new owner ("" for none).
    @discardableResult
    public func watchNameOwner(
        _ name: BusName, handler: @escaping (_ oldOwner: String, _ newOwner: String) -> Void
    ) throws -> SubscriptionToken {
        let rule = MatchRule(
            sender: .bus, interface: .dbus, member: "NameOwnerChanged", path: "/org/freedesktop/DBus",
            arg0: name.rawValue)
        return try subscribe(rule) { message in
            let args = message.arguments()
            guard args.count == 3, let old = args[1].stringValue, let new = args[2].stringValue else { return }
            handler(old, new)
        }
    }
}
