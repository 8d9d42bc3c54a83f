import DBus
import Foundation
import Notifications

/// A notification server of our own, exported with our dbus layer, that
/// records every call exactly as it arrived. Tests use it where they must see
/// the wire contents; dunst is the real server beside it.
///
/// It also answers `org.chime.Test.Recorder` methods on its object so a test
/// can make it emit `ActionInvoked` or `NotificationClosed`.
public final class RecordingServer: @unchecked Sendable {
    /// One `Notify` call: the eight arguments as received.
    public struct Call: Sendable {
        public var arguments: [Value]
        /// When the server received it.
        public var receivedAt = Date()
        /// The id the server answered with (0: refused).
        public var assignedID: UInt32 = 0
        public var appName: String { arguments[0].stringValue ?? "" }
        public var replacesID: UInt32 { arguments[1].uint32Value ?? 0 }
        public var icon: String { arguments[2].stringValue ?? "" }
        public var summary: String { arguments[3].stringValue ?? "" }
        public var body: String { arguments[4].stringValue ?? "" }
        public var actions: [String] { arguments[5].arrayElements?.compactMap(\.stringValue) ?? [] }
        /// Hints by name, each value without the variant of its `a{sv}` entry (a variant it holds kept).
        public var hints: [String: Value] {
            var result: [String: Value] = [:]
            for entry in arguments[6].dictionaryEntries ?? [] {
                if let key = entry.key.stringValue { result[key] = entry.value.variantContents }
            }
            return result
        }
        public var expireTimeout: Int32 {
            if case .int32(let value) = arguments[7] { return value }
            return 0
        }
    }

    /// What the server does after a Notify with actions.
    public enum AutoResponse: Sendable {
        case none
        /// Emit `ActionInvoked` with the first action's key, then nothing.
        case invokeFirstAction
        /// Emit `NotificationClosed` with this reason.
        case close(reason: UInt32)
    }

    /// How the server misbehaves on Notify, to prove the daemon loses nothing to it.
    public enum Fault: Sendable, Equatable {
        /// It answers at once.
        case none
        /// It answers every Notify with an error.
        case errorReply
        /// It takes Notify and never answers (a hung server).
        case neverReply
        /// It answers no method at all, GetCapabilities and GetServerInformation included.
        case hangsOnEverything
        /// It answers after this many milliseconds (a slow server); calls are answered in order.
        case delay(milliseconds: Int)
        /// It leaves the bus (closes its connection) when it receives Notify, without answering.
        case exitOnNotify
        /// As KDE Plasma does: a Notify with the same app name, summary and body as the one it showed
        /// less than a second before is answered `ExcessNotificationGeneration`.
        case refusesRepeats
    }

    private let lock = NSLock()
    private var _fault: Fault = .none
    private var _calls: [Call] = []
    private var _closed: [UInt32] = []
    private var _refused: [Call] = []
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    private let ready = DispatchSemaphore(value: 0)
    private var startError: (any Error)?
    public let address: String
    public let capabilities: [String]
    public let record: Bool
    public let autoResponse: AutoResponse
    /// The name it gives in GetServerInformation ("gnome-shell", "mako": the daemon reads each
    /// one's do-not-disturb its own way).
    public let serverName: String
    private var _makoModes: [String]?
    /// As `mako` (1.7, whose modes are only listed, not announced): what `ListModes` answers at
    /// `/fr/emersion/Mako` (nil: it never answers, a hung mako).
    public var makoModes: [String]? {
        get { lock.withLock { _makoModes } }
        set { lock.withLock { _makoModes = newValue } }
    }

    public static let controlInterface: InterfaceName = "org.chime.Test.Recorder"

    /// Starts serving `org.freedesktop.Notifications` on the bus at `address`.
    /// With `record: false` it only replies (for benchmarks).
    public init(
        address: String, capabilities: [String] = ["actions", "body", "body-markup", "persistence"],
        record: Bool = true, autoResponse: AutoResponse = .none, serverName: String = "chime-recorder", makoModes: [String]? = ["default"]
    ) throws {
        self.serverName = serverName
        self._makoModes = makoModes
        self.address = address
        self.capabilities = capabilities
        self.record = record
        self.autoResponse = autoResponse
        let thread = Thread { [unowned self] in self.serve() }
        thread.name = "recording-server"
        self.thread = thread
        thread.start()
        ready.wait()
        if let startError { throw startError }
    }

    /// Every Notify call the server showed (answered with an id, at once or after a delay).
    public var calls: [Call] { lock.withLock { _calls } }
    /// Notify calls it did not show: answered with an error, never answered, or taken as it left the bus.
    public var refusedCalls: [Call] { lock.withLock { _refused } }
    /// Ids closed through CloseNotification.
    public var closedIDs: [UInt32] { lock.withLock { _closed } }

    /// How the server treats the Notify calls that come next.
    public var fault: Fault {
        get { lock.withLock { _fault } }
        set { lock.withLock { _fault = newValue } }
    }

    /// Whether the server still serves (an `.exitOnNotify` fault ends it).
    public var isServing: Bool { lock.withLock { !exitedByFault && !stopped } }

    /// Waits until at least `count` Notify calls have arrived.
    public func waitForCalls(_ count: Int, timeout: TimeInterval = 30) -> [Call] {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let current = calls
            if current.count >= count { return current }
            usleep(2_000)
        }
        return calls
    }

    /// Makes the server emit `ActionInvoked(id, key)`.
    public func invokeAction(id: UInt32, key: String) throws {
        try control("EmitActionInvoked", [.uint32(id), .string(key)])
    }

    /// Makes the server emit `ActivationToken(id, token)`.
    public func emitActivationToken(id: UInt32, token: String) throws {
        try control("EmitActivationToken", [.uint32(id), .string(token)])
    }

    /// Makes the server emit `NotificationClosed(id, reason)`.
    public func emitClosed(id: UInt32, reason: UInt32) throws {
        try control("EmitClosed", [.uint32(id), .uint32(reason)])
    }

    /// Stops serving (the name goes away) and joins the thread (a second call does nothing).
    public func stop() {
        let (alreadyStopped, exited) = lock.withLock { () -> (Bool, Bool) in
            defer { stopped = true }
            return (stopped, exitedByFault)
        }
        if alreadyStopped { return }
        if !exited { try? control("Quit", []) }
        // The serving thread also looks at `stopped` every 100 ms, so a Quit that did not get through
        // (seen once: the call came back and the thread went on waiting) cannot hold a test for ever.
        if finished.wait(timeout: .now() + 30) == .timedOut {
            print("RecordingServer: the serving thread did not end within 30 s of stop(); left behind")
        }
    }

    private var stopped = false
    private var exitedByFault = false

    private func control(_ member: MemberName, _ arguments: [Value]) throws {
        let connection = try Connection(.address(address))
        _ = try connection.call(
            destination: NotificationClient.busName, path: NotificationClient.objectPath,
            interface: Self.controlInterface, member: member, arguments: arguments)
    }

    private func serve() {
        defer { finished.signal() }
        let connection: Connection
        do {
            connection = try Connection(.address(address))
        } catch {
            startError = error
            ready.signal()
            return
        }
        var nextID: UInt32 = 1
        var lastShown: ([String], Deadline)? = nil
        var quit = false
        var pendingSignals: [(MemberName, [Value])] = []
        var delayed: [(due: Deadline, message: Message, id: UInt32)] = []
        let path = NotificationClient.objectPath
        let object = ExportedObject(interfaces: [
            ExportedInterface(
                NotificationClient.interface,
                methods: [
                    ExportedMethod(
                        "Notify",
                        inputs: [
                            Parameter("app_name", .string), Parameter("replaces_id", .uint32),
                            Parameter("app_icon", .string), Parameter("summary", .string),
                            Parameter("body", .string), Parameter("actions", .array(.string)),
                            Parameter("hints", .dictionary(key: .string, value: .variant)),
                            Parameter("expire_timeout", .int32),
                        ],
                        outputs: [Parameter("id", .uint32)]
                    ) { [unowned self] call in
                        let fault = self.fault
                        if fault == .exitOnNotify {
                            self.lock.withLock { self._refused.append(Call(arguments: call.arguments)) }
                            quit = true
                            self.lock.withLock { self.exitedByFault = true }
                            throw ReplyLater()
                        }
                        if fault == .errorReply {
                            self.lock.withLock { self._refused.append(Call(arguments: call.arguments)) }
                            throw DBusError(name: "org.freedesktop.Notifications.Error.Failed", message: "the test server refuses")
                        }
                        if fault == .neverReply || fault == .hangsOnEverything {
                            self.lock.withLock { self._refused.append(Call(arguments: call.arguments)) }
                            throw ReplyLater()
                        }
                        if fault == .refusesRepeats {
                            let key = [0, 3, 4].map { call.arguments[$0].stringValue ?? "" }
                            if let (previous, at) = lastShown, previous == key, Deadline.now - at < .seconds(1) {
                                self.lock.withLock { self._refused.append(Call(arguments: call.arguments)) }
                                throw DBusError(name: "org.freedesktop.Notifications.Error.ExcessNotificationGeneration",
                                                message: "Created too many similar notifications in quick succession")
                            }
                            lastShown = (key, Deadline.now)
                        }
                        let replaces = call.arguments[1].uint32Value ?? 0
                        let id: UInt32
                        if replaces != 0 {
                            id = replaces
                        } else {
                            id = nextID
                            nextID += 1
                        }
                        if self.record {
                            self.lock.withLock { self._calls.append(Call(arguments: call.arguments, assignedID: id)) }
                        }
                        if case .delay(let milliseconds) = fault {
                            delayed.append((Deadline.now + .milliseconds(milliseconds), call.message, id))
                            throw ReplyLater()
                        }
                        let actions = call.arguments[5].arrayElements?.compactMap(\.stringValue) ?? []
                        switch self.autoResponse {
                        case .invokeFirstAction where !actions.isEmpty:
                            pendingSignals.append(("ActionInvoked", [.uint32(id), .string(actions[0])]))
                        case .close(let reason):
                            pendingSignals.append(("NotificationClosed", [.uint32(id), .uint32(reason)]))
                        default: break
                        }
                        return [.uint32(id)]
                    },
                    ExportedMethod("CloseNotification", inputs: [Parameter("id", .uint32)]) { [unowned self] call in
                        let id = call.arguments[0].uint32Value ?? 0
                        self.lock.withLock { self._closed.append(id) }
                        pendingSignals.append(("NotificationClosed", [.uint32(id), .uint32(3)]))
                        return []
                    },
                    ExportedMethod("GetCapabilities", outputs: [Parameter("capabilities", .array(.string))]) {
                        [unowned self] _ in
                        if self.fault == .hangsOnEverything { throw ReplyLater() }
                        return [.strings(self.capabilities)]
                    },
                    ExportedMethod(
                        "GetServerInformation",
                        outputs: [
                            Parameter("name", .string), Parameter("vendor", .string), Parameter("version", .string),
                            Parameter("spec_version", .string),
                        ]
                    ) { [unowned self] _ in
                        if self.fault == .hangsOnEverything { throw ReplyLater() }
                        return [.string(self.serverName), .string("chime tests"), .string("1.0"), .string("1.3")]
                    },
                ],
                signals: [
                    ExportedSignal("NotificationClosed", arguments: [Parameter("id", .uint32), Parameter("reason", .uint32)]),
                    ExportedSignal("ActionInvoked", arguments: [Parameter("id", .uint32), Parameter("action_key", .string)]),
                ]),
            ExportedInterface(
                Self.controlInterface,
                methods: [
                    ExportedMethod("EmitActionInvoked", inputs: [Parameter("id", .uint32), Parameter("key", .string)]) { call in
                        pendingSignals.append(("ActionInvoked", call.arguments))
                        return []
                    },
                    ExportedMethod("EmitActivationToken", inputs: [Parameter("id", .uint32), Parameter("token", .string)]) { call in
                        pendingSignals.append(("ActivationToken", call.arguments))
                        return []
                    },
                    ExportedMethod("EmitClosed", inputs: [Parameter("id", .uint32), Parameter("reason", .uint32)]) { call in
                        pendingSignals.append(("NotificationClosed", call.arguments))
                        return []
                    },
                    ExportedMethod("Quit") { _ in
                        quit = true
                        return []
                    },
                ]),
        ])
        connection.export(object, at: path)
        if serverName == "mako" {
            connection.export(ExportedObject(interfaces: [
                ExportedInterface("fr.emersion.Mako", methods: [
                    ExportedMethod("ListModes", outputs: [Parameter("modes", .array(.string))]) { [unowned self] _ in
                        guard let modes = self.makoModes else { throw ReplyLater() }
                        return [.strings(modes)]
                    },
                ]),
            ]), at: "/fr/emersion/Mako")
        }
        do {
            guard try connection.requestName(NotificationClient.busName) == .primaryOwner else {
                startError = HarnessError("org.freedesktop.Notifications is already owned on this bus")
                ready.signal()
                return
            }
        } catch {
            startError = error
            ready.signal()
            return
        }
        ready.signal()
        while !quit && !lock.withLock({ stopped }) {
            // Wakes every few milliseconds while a slow reply waits; otherwise every 100 ms, to see
            // whether it was asked to stop (and as soon as a message leaves a reply waiting).
            let repliesWaiting = !delayed.isEmpty
            let result = connection.run(until: .now + .milliseconds(repliesWaiting ? 2 : 100)) {
                // Signals go out after the reply that precedes them, as a real server's do.
                for (member, arguments) in pendingSignals {
                    try? connection.emit(path: path, interface: NotificationClient.interface, member: member, arguments: arguments)
                }
                pendingSignals.removeAll()
                return !quit && (repliesWaiting || delayed.isEmpty)
            }
            let now = Deadline.now
            while let first = delayed.first, first.due <= now {
                delayed.removeFirst()
                if let reply = try? first.message.makeReturn([.uint32(first.id)]) { _ = try? connection.send(reply) }
            }
            if result == .disconnected { break }
        }
        connection.flush()
        connection.close()
    }
}

/// Debian's notify-send with `reference`, then `ours`, against one recording server on a private bus:
/// both results, and the calls the server saw once `calls` had arrived (or its wait ran out). The
/// parity tests compare the two.
public func besideNotifySend(
    _ reference: [String], capabilities: [String] = ["actions", "body", "body-markup", "persistence"], calls: Int,
    ours: ([String: String]) throws -> CommandResult
) throws -> (reference: CommandResult, ours: CommandResult, calls: [RecordingServer.Call]) {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let recorder = try RecordingServer(address: bus.address, capabilities: capabilities)
    defer { recorder.stop() }
    let theirs = try runProgram("/usr/bin/notify-send", reference.map { Array($0.utf8) }, environment: bus.environment())
    let mine = try ours(bus.environment())
    return (theirs, mine, calls == 0 ? recorder.calls : recorder.waitForCalls(calls))
}
