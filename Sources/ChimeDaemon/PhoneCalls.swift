// Phone calls, as GNOME Calls (the dialer of Phosh, for ModemManager's cellular calls and SIP
// alike) shows them on the session bus: `org.gnome.Calls` exports each call as an object under
// /org/gnome/Calls (an ObjectManager) with the `org.gnome.Calls.Call` interface and its `State`
// (1 active, 2 held, 3 dialing, 4 alerting, 5 incoming, 6 waiting, 7 disconnected; 0 unknown).
// While one is in progress (any state from 1 to 6), an alarm that rings is a quiet tone and
// vibration, not its full sound over the person's call; when the last call ends, it rings as it
// would have (Ringing.swift).
//
// Nothing here waits: the calls are read when GNOME Calls appears (a pending call with a
// deadline, which never starts it) and followed through its signals; GNOME Calls absent or
// hanging means no call is known, and alarms ring as they always do.
//
// Other parts may: `start`, ask `inCall`. The part tells the others (`events.changed`) when a call
// begins or the last one ends.
import DBus
import Logging
import Timekeeping

final class PhoneCalls: LoopPart {
    static let busName: BusName = "org.gnome.Calls"
    static let path: ObjectPath = "/org/gnome/Calls"
    static let callInterface = "org.gnome.Calls.Call"
    static let timeout = TimeSpan.seconds(2)

    private let connection: Connection
    private let clock: WallClock
    private let logger: Logger
    /// Each call GNOME Calls shows, by object path: its state.
    private var calls: [String: UInt32] = [:]
    private var subscriptions: [SubscriptionToken] = []
    private var asking: (call: PendingCall, until: Instant)?

    struct Events {
        /// A call began (true), or the last one ended (false).
        var changed: (_ inCall: Bool) -> Void = { _ in }
    }
    var events = Events()

    init(connection: Connection, clock: WallClock, logger: Logger) {
        self.connection = connection
        self.clock = clock
        self.logger = logger
    }

    /// Whether a call is in progress: dialing, ringing, on the line or held.
    var inCall: Bool { calls.values.contains { (1...6).contains($0) } }

    /// Follows GNOME Calls: whether it runs, and its calls as they come, change and go.
    func start() {
        do {
            subscriptions.append(try connection.watchNameOwner(Self.busName) { [unowned self] _, new in appeared(new) })
            let manager: InterfaceName = "org.freedesktop.DBus.ObjectManager"
            subscriptions.append(try connection.subscribe(MatchRule(sender: Self.busName, interface: manager, member: "InterfacesAdded")) {
                [unowned self] message in
                let arguments = message.arguments()
                guard arguments.count >= 2, case .objectPath(let path) = arguments[0] else { return }
                changing { take(path.rawValue, arguments[1]) }
            })
            subscriptions.append(try connection.subscribe(MatchRule(sender: Self.busName, interface: manager, member: "InterfacesRemoved")) {
                [unowned self] message in
                let arguments = message.arguments()
                guard arguments.count >= 2, case .objectPath(let path) = arguments[0],
                      arguments[1].arrayElements?.contains(where: { $0.stringValue == Self.callInterface }) == true else { return }
                changing { calls[path.rawValue] = nil }
            })
            subscriptions.append(try connection.subscribe(MatchRule(sender: Self.busName, interface: "org.freedesktop.DBus.Properties",
                                                                    member: "PropertiesChanged", arg0: Self.callInterface)) {
                [unowned self] message in
                let arguments = message.arguments()
                guard let path = message.path?.rawValue, arguments.count >= 2,
                      let state = arguments[1].dictionaryEntries?.first(where: { $0.key.stringValue == "State" })?.value.unwrappingVariants.uint32Value
                else { return }
                changing { calls[path] = state }
            })
            appeared((try? connection.nameOwner(Self.busName)) ?? "")
        } catch {
            logger.info("phone calls cannot be followed: \(error); alarms ring as usual during a call")
        }
    }

    /// Runs `body` (a change to the calls), and tells the others when a call began or the last ended.
    private func changing(_ body: () -> Void) {
        let before = inCall
        body()
        let now = inCall
        guard now != before else { return }
        logger.info(now ? "a phone call is in progress: alarms ring as a quiet tone and vibration until it ends"
                        : "the phone call ended: alarms ring as usual")
        events.changed(now)
    }

    /// One object's interfaces (`a{sa{sv}}`): its call's state, if it is a call.
    private func take(_ path: String, _ interfaces: Value) {
        guard let call = interfaces.dictionaryEntries?.first(where: { $0.key.stringValue == Self.callInterface }) else { return }
        let state = call.value.dictionaryEntries?.first(where: { $0.key.stringValue == "State" })?.value.unwrappingVariants.uint32Value
        calls[path] = state ?? 0
    }

    /// GNOME Calls came, went or was replaced: its calls are read again (none while it is away).
    private func appeared(_ owner: String) {
        asking?.call.cancel()
        asking = nil
        guard !owner.isEmpty else { return changing { calls = [:] } }
        do {
            let message = try Message.methodCall(destination: Self.busName, path: Self.path, interface: "org.freedesktop.DBus.ObjectManager",
                                                 member: "GetManagedObjects", arguments: [])
            message.autoStart = false
            let call = try connection.send(message, timeout: .milliseconds(Int32(Self.timeout.milliseconds)))
            asking = (call, clock.now() + Self.timeout)
            try call.onCompletion { [weak self] answer in
                guard let self else { return }
                asking = nil
                guard case .success(let reply) = answer, let objects = reply.arguments().first?.dictionaryEntries else {
                    return logger.info("GNOME Calls did not list its calls; alarms ring as usual")
                }
                changing {
                    calls = [:]
                    for object in objects {
                        guard case .objectPath(let path) = object.key else { continue }
                        take(path.rawValue, object.value)
                    }
                }
            }
        } catch {
            logger.info("GNOME Calls cannot be asked for its calls: \(error)")
        }
    }

    var deadline: Instant? { asking?.until }

    func deadlineReached(now: Instant) {
        guard let (call, until) = asking, until <= now else { return }
        call.cancel()
        asking = nil
        logger.info("GNOME Calls did not list its calls within \(Self.timeout); alarms ring as usual")
    }
}
