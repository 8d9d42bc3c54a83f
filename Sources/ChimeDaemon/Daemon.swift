// `chime daemon`: one poll loop on one thread over the bus, a wall-clock timer
// and signals; pending occurrences in a heap; every change on disk before it
// is acknowledged.
import ChimeCenter
import DBus
import FoundationEssentials
import Logging
import Notifications
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// Why the daemon could not start or stopped.
public struct DaemonError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// How an occurrence was shown.
public enum Timeliness: String, Sendable {
    case onTime = "on-time"
    /// Due while no notification server ran; shown when one appeared.
    case late
    /// Due while the daemon was not running (or the machine slept); shown on start, within the grace period.
    case missed
}

/// The scheduler daemon.
public final class SchedulerDaemon {
    /// How long after its due time a missed occurrence is still shown.
    public static let defaultGrace: Int64 = 3600
    /// How long Snooze waits unless the alarm says otherwise (`--snooze`).
    public static let defaultSnooze: Int64 = 600

    let connection: Connection
    let store: Store
    var logger: Logger
    var queue = OccurrenceQueue()
    let timer: WallClockTimer
    let signals: SignalSource
    let client: NotificationClient
    var capabilities: [Capability]? = nil
    var serverPresent = false
    /// Occurrences due while no server was there, shown when one appears.
    var waiting: [(identifier: String, due: UnixTime)] = []
    var stopping = false
    var counter = 0

    /// Connects the daemon to `connection` and its state in `store`; takes the bus name.
    public init(connection: Connection, store: Store, logger: Logger) throws {
        self.connection = connection
        self.store = store
        self.logger = logger
        timer = try WallClockTimer()
        signals = try SignalSource([SIGTERM, SIGINT, SIGHUP, SIGCHLD])
        client = NotificationClient(connection: connection, timeout: .milliseconds(10_000))
        for warning in store.warnings { logger.warning("\(warning)") }

        guard try connection.requestName(SchedulerInterface.busName) == .primaryOwner else {
            throw DaemonError(
                "another chime daemon is already running for this user (\(SchedulerInterface.busName) is taken)")
        }
        connection.export(makeObject(), at: SchedulerInterface.path)
        try client.subscribe { [weak self] event in self?.handle(event) }
        try connection.watchNameOwner(NotificationClient.busName) { [weak self] _, new in
            self?.serverOwnerChanged(to: new)
        }
        serverPresent = (try? client.serverIsRunning()) ?? false
    }

    // MARK: - The loop

    /// Runs until SIGTERM or SIGINT. Sleeps in `poll` while nothing is due: no periodic wake-ups.
    public func run() throws {
        let now = wallClockNow().seconds
        catchUp(now: now)
        logger.info("chime daemon ready", metadata: ["pending": "\(queue.count)"])
        while !stopping {
            // Blocking calls (ours, and libdbus's during them) may have read messages into
            // libdbus's queue: dispatch those first, or poll would sleep on a quiet socket.
            connection.dispatchPending()
            if stopping { break }
            armTimer()
            guard let busFD = connection.fileDescriptor else { throw DaemonError("lost the session bus") }
            var fds = [
                pollfd(fd: busFD, events: Int16(POLLIN) | (connection.hasMessagesToSend ? Int16(POLLOUT) : 0), revents: 0),
                pollfd(fd: timer.fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 3, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw DaemonError("poll failed: \(String(cString: strerror(errno)))")
            }
            if fds[2].revents != 0 { handleSignals() }
            if fds[1].revents != 0 {
                switch timer.read() {
                case .clockChanged:
                    logger.info("the wall clock changed; re-evaluating every alarm")
                    rescheduleAll(after: wallClockNow().seconds)
                default: break
                }
                fireDue()
            }
            if fds[0].revents != 0 || connection.hasMessagesToSend {
                guard connection.processAvailable() else { throw DaemonError("the session bus closed the connection") }
            }
        }
        connection.flush()
        logger.info("chime daemon stopped")
    }

    func armTimer() {
        if let (_, time) = queue.earliest() { timer.arm(at: time) } else { timer.disarm() }
    }

    func handleSignals() {
        for signal in signals.read() {
            switch signal {
            case SIGTERM, SIGINT:
                logger.info("stopping on signal \(signal)")
                stopping = true
            case SIGHUP:
                logger.info("SIGHUP: nothing to reload yet")
            case SIGCHLD:
                var status: Int32 = 0
                while waitpid(-1, &status, WNOHANG) > 0 {}
            default:
                break
            }
        }
    }

    // MARK: - Scheduling

    func nextFire(of request: NotificationRequest, after time: UnixTime) -> UnixTime? {
        request.trigger.nextFireDate(after: time)
    }

    /// On start: schedules every request, showing a missed occurrence within the grace period once.
    func catchUp(now: UnixTime) {
        for request in store.state.schedule.pending {
            let base = store.state.lastFired[request.identifier] ?? request.trigger.anchor
            guard let first = nextFire(of: request, after: base) else { continue }
            if first > now {
                queue.schedule(request.identifier, at: first)
                continue
            }
            // Missed while down: find the latest occurrence that passed.
            var latest = first
            var older: [UnixTime] = []
            var steps = 0
            while let next = nextFire(of: request, after: latest), next <= now, steps < 100_000 {
                if older.count < 100 { older.append(latest) }
                latest = next
                steps += 1
            }
            for due in older {
                record(.missed(MissedOccurrence(identifier: request.identifier, due: due, recorded: now)))
            }
            if now - latest <= Self.defaultGrace {
                deliver(request.identifier, due: latest, timeliness: .missed, now: now)
            } else {
                record(.missed(MissedOccurrence(identifier: request.identifier, due: latest, recorded: now)))
                emit("Missed", [.string(request.identifier), .int64(latest)])
                reschedule(request.identifier, after: latest, now: now)
            }
        }
    }

    func rescheduleAll(after now: UnixTime) {
        queue = OccurrenceQueue()
        for request in store.state.schedule.pending {
            let base = max(store.state.lastFired[request.identifier] ?? request.trigger.anchor, now - 1)
            if let next = nextFire(of: request, after: base) { queue.schedule(request.identifier, at: next) }
        }
    }

    func fireDue() {
        let now = wallClockNow().seconds
        for (identifier, due) in queue.popDue(now) {
            deliver(identifier, due: due, timeliness: .onTime, now: now)
        }
    }

    /// Shows one occurrence (or holds it until a server appears), records it, and schedules the next.
    func deliver(_ identifier: String, due: UnixTime, timeliness: Timeliness, now: UnixTime) {
        guard let request = store.state.schedule.request(withIdentifier: identifier) else { return }
        if !serverPresent {
            logger.warning("no notification server; holding the alarm until one appears", metadata: ["alarm.id": "\(identifier)"])
            if !waiting.contains(where: { $0.identifier == identifier && $0.due == due }) { waiting.append((identifier, due)) }
            reschedule(identifier, after: due, now: now)
            return
        }
        var content = request.content
        switch timeliness {
        case .onTime: break
        case .late: content.body = "Late: due at \(clock(due, request)). " + content.body
        case .missed: content.body = "Missed at \(clock(due, request)). " + content.body
        }
        do {
            let capabilities = try self.capabilities ?? client.capabilities()
            self.capabilities = capabilities
            let previous = store.state.schedule.delivered.first { $0.identifier == identifier }?.serverID ?? 0
            let rendered = render(content, for: capabilities, replacesID: previous)
            let serverID = try client.notify(rendered.notification)
            // Notify first, then the record: a crash in between repeats an alarm, never drops one.
            record(.fired(identifier: identifier, due: due))
            record(.delivered(DeliveredNotification(identifier: identifier, serverID: serverID, date: now, content: content)))
            emit("Fired", [.string(identifier), .int64(due), .string(timeliness.rawValue)])
            logger.info("fired", metadata: ["alarm.id": "\(identifier)", "notification.id": "\(serverID)", "timeliness": "\(timeliness.rawValue)"])
        } catch let error as NoNotificationServerError {
            logger.warning("\(error); holding the alarm", metadata: ["alarm.id": "\(identifier)"])
            serverPresent = false
            waiting.append((identifier, due))
        } catch {
            logger.error("could not show the alarm: \(error)", metadata: ["alarm.id": "\(identifier)"])
        }
        reschedule(identifier, after: due, now: now)
    }

    func reschedule(_ identifier: String, after due: UnixTime, now: UnixTime) {
        guard let request = store.state.schedule.request(withIdentifier: identifier) else { return }
        if let next = nextFire(of: request, after: max(due, now - 1)) {
            queue.schedule(identifier, at: next)
        } else if !waiting.contains(where: { $0.identifier == identifier }) {
            // A one-off that has fired leaves the pending list, as on iOS.
            record(.remove([identifier]))
        }
    }

    func clock(_ time: UnixTime, _ request: NotificationRequest) -> String {
        let civil = request.trigger.zone.civil(at: time)
        return pad2(civil.hour) + ":" + pad2(civil.minute)
    }

    func serverOwnerChanged(to owner: String) {
        capabilities = nil
        serverPresent = !owner.isEmpty
        guard serverPresent, !waiting.isEmpty else { return }
        let held = waiting
        waiting.removeAll()
        let now = wallClockNow().seconds
        logger.info("a notification server appeared; showing \(held.count) held alarm(s)")
        for (identifier, due) in held { deliver(identifier, due: due, timeliness: .late, now: now) }
    }

    func handle(_ event: NotificationEvent) {
        switch event {
        case .closed(let id, _):
            if let delivered = store.state.schedule.delivered.first(where: { $0.serverID == id }) {
                record(.undelivered([delivered.identifier]))
            }
        case .actionInvoked(let id, let key):
            guard let delivered = store.state.schedule.delivered.first(where: { $0.serverID == id }) else { return }
            if key == NotificationAction.snooze.identifier {
                let snooze = delivered.content.userInfo["snooze"].flatMap { Int64($0) } ?? Self.defaultSnooze
                let at = wallClockNow().seconds + snooze
                // A snoozed one-off stays pending until its snooze rings.
                if store.state.schedule.request(withIdentifier: delivered.identifier) == nil {
                    let again = NotificationRequest(identifier: delivered.identifier, content: delivered.content,
                                                    trigger: Trigger(rule: .instant(at), repeats: false, timeZone: nil, anchor: at))
                    record(.add(again))
                }
                queue.schedule(delivered.identifier, at: at)
                logger.info("snoozed for \(snooze) s", metadata: ["alarm.id": "\(delivered.identifier)"])
            }
            // Snooze and dismiss both take this ring down; a repeating alarm rings again at its next time.
            try? client.close(id)
        case .activationToken:
            break
        }
    }

    /// Makes a change durable; a failing disk is logged (the in-memory state goes on).
    func record(_ change: Change) {
        do { try store.append(change) } catch { logger.error("\(error)") }
    }

    func emit(_ member: MemberName, _ arguments: [Value]) {
        try? connection.emit(path: SchedulerInterface.path, interface: SchedulerInterface.interface, member: member, arguments: arguments)
    }

    func newIdentifier() -> String {
        counter += 1
        let now = wallClockNow()
        return "a\(String(now.seconds, radix: 36))\(String(now.nanoseconds % 46_656, radix: 36))\(counter)"
    }

    // MARK: - The exported interface

    /// The largest reply the daemon sends: the bus disconnects a peer whose message exceeds its
    /// limit (32 MiB by default), which would take the whole daemon down.
    static let maximumReply = 24 << 20

    func json<T: Encodable>(_ value: T) throws -> Value {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(value)
        guard data.count <= Self.maximumReply else {
            throw DBusError(name: .limitsExceeded, message: "the answer would be \(data.count >> 20) MiB, more than one D-Bus message may carry; use ListPendingSummary")
        }
        return .string(String(decoding: data, as: UTF8.self))
    }

    /// Pending requests with their next fire, soonest first.
    func sortedPending() -> [(request: NotificationRequest, nextFire: UnixTime?)] {
        store.state.schedule.pending.map { ($0, queue.time(of: $0.identifier)) }
            .sorted { Schedule.soonerFirst(($0.0.identifier, $0.1), ($1.0.identifier, $1.1)) }
    }

    /// Adds a request durably and schedules it; the reply is the next fire time (-1: never).
    func add(_ request: NotificationRequest) throws -> Value {
        guard !request.identifier.isEmpty, request.identifier.utf8.count <= 200 else {
            throw DBusError(name: SchedulerInterface.invalidRequest, message: "an identifier must be 1-200 bytes")
        }
        do {
            try store.append(.add(request))
        } catch {
            throw DBusError(name: SchedulerInterface.storeFailed, message: "\(error)")
        }
        let now = wallClockNow().seconds
        if let next = nextFire(of: request, after: now) {
            queue.schedule(request.identifier, at: next)
            return .int64(next)
        }
        queue.cancel(request.identifier)
        return .int64(-1)
    }

    func makeObject() -> ExportedObject {
        let object = ExportedObject(interfaces: [
            ExportedInterface(
                SchedulerInterface.interface,
                methods: [
                    ExportedMethod("Add", inputs: [Parameter("request_json", .string)], outputs: [Parameter("next_fire", .int64)]) {
                        [unowned self] call in
                        let text = call.arguments[0].stringValue ?? ""
                        let request: NotificationRequest
                        do {
                            request = try JSONDecoder().decode(NotificationRequest.self, from: Data(text.utf8))
                        } catch {
                            throw DBusError(name: SchedulerInterface.invalidRequest, message: "not a request: \(error)")
                        }
                        return [try self.add(request)]
                    },
                    ExportedMethod(
                        "Schedule",
                        inputs: [Parameter("identifier", .string), Parameter("rule", .string), Parameter("title", .string), Parameter("body", .string)],
                        outputs: [Parameter("identifier", .string), Parameter("next_fire", .int64)]
                    ) { [unowned self] call in
                        let args = call.arguments.compactMap(\.stringValue)
                        let identifier = args[0].isEmpty ? self.newIdentifier() : args[0]
                        let trigger: Trigger
                        do throws(RuleError) {
                            trigger = try Trigger(parsing: args[1], anchor: wallClockNow().seconds)
                        } catch {
                            throw DBusError(name: SchedulerInterface.invalidRule, message: "\(args[1]): \(error.message)")
                        }
                        let request = NotificationRequest(
                            identifier: identifier, content: NotificationContent(title: args[2], body: args[3]), trigger: trigger)
                        return [.string(identifier), try self.add(request)]
                    },
                    ExportedMethod("Remove", inputs: [Parameter("identifiers", .array(.string))], outputs: [Parameter("removed", .array(.string))]) {
                        [unowned self] call in
                        let ids = call.arguments[0].arrayElements?.compactMap(\.stringValue) ?? []
                        let known = ids.filter { self.store.state.schedule.request(withIdentifier: $0) != nil }
                        do {
                            try self.store.append(.remove(ids))
                        } catch {
                            throw DBusError(name: SchedulerInterface.storeFailed, message: "\(error)")
                        }
                        for id in ids { self.queue.cancel(id) }
                        self.waiting.removeAll { ids.contains($0.identifier) }
                        return [.strings(known)]
                    },
                    ExportedMethod("RemoveAll") { [unowned self] _ in
                        do {
                            try self.store.append(.removeAll)
                        } catch {
                            throw DBusError(name: SchedulerInterface.storeFailed, message: "\(error)")
                        }
                        self.queue = OccurrenceQueue()
                        self.waiting.removeAll()
                        return []
                    },
                    ExportedMethod("ListPending", outputs: [Parameter("pending_json", .string)]) { [unowned self] _ in
                        [try self.json(self.sortedPending().map { PendingRequest(request: $0.request, nextFire: $0.nextFire) })]
                    },
                    ExportedMethod("ListPendingSummary", outputs: [Parameter("pending_json", .string)]) { [unowned self] _ in
                        [try self.json(self.sortedPending().map {
                            PendingSummary(identifier: $0.request.identifier, nextFire: $0.nextFire, title: $0.request.content.title,
                                           label: $0.request.content.label, timeZone: $0.request.trigger.timeZone)
                        })]
                    },
                    ExportedMethod("ListDelivered", outputs: [Parameter("delivered_json", .string)]) { [unowned self] _ in
                        [try self.json(self.store.state.schedule.deliveredNotifications())]
                    },
                    ExportedMethod("ListMissed", outputs: [Parameter("missed_json", .string)]) { [unowned self] _ in
                        [try self.json(self.store.state.missed)]
                    },
                    ExportedMethod("CloseDelivered", inputs: [Parameter("identifiers", .array(.string))]) { [unowned self] call in
                        let ids = call.arguments[0].arrayElements?.compactMap(\.stringValue) ?? []
                        let unknown = ids.filter { id in !self.store.state.schedule.delivered.contains { $0.identifier == id } }
                        if !unknown.isEmpty {
                            throw DBusError(name: SchedulerInterface.unknownIdentifier, message: "not delivered: \(unknown.joined(separator: ", "))")
                        }
                        let serverIDs = self.store.state.schedule.delivered.filter { ids.contains($0.identifier) }.map(\.serverID)
                        self.record(.undelivered(ids))
                        for id in serverIDs { try? self.client.close(id) }
                        return []
                    },
                ],
                signals: [
                    ExportedSignal("Fired", arguments: [Parameter("identifier", .string), Parameter("due", .int64), Parameter("timeliness", .string)]),
                    ExportedSignal("Missed", arguments: [Parameter("identifier", .string), Parameter("due", .int64)]),
                ]),
        ])
        return object
    }
}

func pad2(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
