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
    /// Nanoseconds in a second: the queue and the timer work in nanoseconds since the epoch.
    static let second: Int64 = 1_000_000_000

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
    /// Programs running: body commands and sound players, by process id.
    var children: [pid_t: Child] = [:]
    /// Occurrences waiting for their body command, by the command's process id.
    var preparing: [pid_t: Preparing] = [:]
    /// Notifications chime closes itself when their expiry passes (servers may ignore it).
    var closeDeadlines: [(time: Int64, identifier: String, serverID: UInt32)] = []
    /// The local sound player for servers that do not play sounds.
    let player: (name: String, path: String)?
    /// Seconds a sound player may run.
    public var playerTimeLimit: Int64 = 30
    /// How long after its expiry chime closes a popup the server left up.
    static let closeSlack: Int64 = 500_000_000

    /// An occurrence whose body command is running.
    struct Preparing {
        var identifier: String
        var due: UnixTime
        var timeliness: Timeliness
        var content: NotificationContent
    }

    /// Connects the daemon to `connection` and its state in `store`; takes the bus name.
    public init(connection: Connection, store: Store, logger: Logger) throws {
        self.connection = connection
        self.store = store
        self.logger = logger
        timer = try WallClockTimer()
        signals = try SignalSource([SIGTERM, SIGINT, SIGHUP, SIGCHLD])
        client = NotificationClient(connection: connection, timeout: .milliseconds(10_000))
        player = findSoundPlayer()
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
        catchUp(now: wallClockNanoseconds())
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
            let reading = children.values.filter { $0.output >= 0 }
            for child in reading { fds.append(pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw DaemonError("poll failed: \(String(cString: strerror(errno)))")
            }
            for (index, child) in reading.enumerated() where fds[3 + index].revents != 0 { child.readOutput() }
            if fds[2].revents != 0 { handleSignals() }
            if fds[1].revents != 0 {
                switch timer.read() {
                case .clockChanged:
                    logger.info("the wall clock changed; re-evaluating every alarm")
                    rescheduleAll(after: wallClockNanoseconds())
                default: break
                }
                fireDue()
                closeExpired()
            }
            finishChildren()
            if fds[0].revents != 0 || connection.hasMessagesToSend {
                guard connection.processAvailable() else { throw DaemonError("the session bus closed the connection") }
            }
        }
        connection.flush()
        logger.info("chime daemon stopped")
    }

    /// Arms the timer for whatever comes first: an occurrence, a child's time limit, a popup to close.
    func armTimer() {
        var earliest = queue.earliest()?.time
        for child in children.values where !child.finished { earliest = min(earliest ?? child.deadline, child.deadline) }
        for entry in closeDeadlines { earliest = min(earliest ?? entry.time, entry.time) }
        if let earliest { timer.arm(atNanoseconds: earliest) } else { timer.disarm() }
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
                while true {
                    let pid = waitpid(-1, &status, WNOHANG)
                    if pid <= 0 { break }
                    children[pid]?.waitStatus = status
                }
            default:
                break
            }
        }
    }

    // MARK: - Scheduling

    /// The next occurrence after the whole second `time`, in nanoseconds.
    func nextFire(of request: NotificationRequest, after time: UnixTime) -> Int64? {
        request.trigger.nextFireNanoseconds(after: time)
    }

    /// On start (`nowNanoseconds`): schedules every request, showing a missed
    /// occurrence within the grace period once.
    func catchUp(now nowNanoseconds: Int64) {
        let now = nowNanoseconds / Self.second
        for request in store.state.schedule.pending {
            let base = store.state.lastFired[request.identifier] ?? request.trigger.anchor
            guard let first = nextFire(of: request, after: base) else { continue }
            if first > nowNanoseconds {
                queue.schedule(request.identifier, at: first)
                continue
            }
            // Missed while down: find the latest occurrence that passed.
            var latest = first / Self.second
            var older: [UnixTime] = []
            var steps = 0
            while let next = nextFire(of: request, after: latest), next <= nowNanoseconds, steps < 100_000 {
                let next = next / Self.second
                if older.count < 100 { older.append(latest) }
                latest = next
                steps += 1
            }
            for due in older {
                record(.missed(MissedOccurrence(identifier: request.identifier, due: due, recorded: now)))
            }
            if now - latest <= request.content.grace ?? Self.defaultGrace {
                deliver(request.identifier, due: latest, timeliness: .missed, now: now)
            } else {
                record(.missed(MissedOccurrence(identifier: request.identifier, due: latest, recorded: now)))
                emit("Missed", [.string(request.identifier), .int64(latest)])
                reschedule(request.identifier, after: latest, now: now)
            }
        }
    }

    func rescheduleAll(after nowNanoseconds: Int64) {
        let now = nowNanoseconds / Self.second
        queue = OccurrenceQueue()
        for request in store.state.schedule.pending {
            let base = max(store.state.lastFired[request.identifier] ?? request.trigger.anchor, now - 1)
            if let next = nextFire(of: request, after: base) { queue.schedule(request.identifier, at: next) }
        }
    }

    func fireDue() {
        let now = wallClockNanoseconds()
        for (identifier, due) in queue.popDue(now) {
            deliver(identifier, due: due / Self.second, timeliness: .onTime, now: now / Self.second)
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
        case .late: content.subtitle = Self.joined("Late: due at \(clock(due, request))", content.subtitle)
        case .missed: content.subtitle = Self.joined("Missed at \(clock(due, request))", content.subtitle)
        }
        if let command = content.bodyCommand {
            let deadline = wallClockNanoseconds() + Int64(command.timeLimit) * Self.second
            do throws(SpawnError) {
                let child = try spawnChild(command.arguments, captureOutput: true, outputLimit: command.outputLimit, deadline: deadline)
                children[child.pid] = child
                preparing[child.pid] = Preparing(identifier: identifier, due: due, timeliness: timeliness, content: content)
                return  // shown when the command finishes (finishChildren)
            } catch {
                logger.warning("\(error)", metadata: ["alarm.id": "\(identifier)"])
                content.body = Self.withNote(content.body, "body command could not start")
            }
        }
        show(identifier, due: due, timeliness: timeliness, content: content, now: now)
    }

    static func joined(_ note: String, _ subtitle: String) -> String {
        subtitle.isEmpty ? note : note + " · " + subtitle
    }

    /// The static body and a short note on why it is not the command's output.
    static func withNote(_ body: String, _ note: String) -> String {
        body.isEmpty ? "(\(note))" : body + "\n(\(note))"
    }

    /// Sends one occurrence to the server, records it, plays its sound, and schedules the next.
    func show(_ identifier: String, due: UnixTime, timeliness: Timeliness, content: NotificationContent, now: UnixTime) {
        // The subtitle carries "Late"/"Missed"; rendering folds it into the text the server shows.
        do {
            let capabilities = try self.capabilities ?? client.capabilities()
            self.capabilities = capabilities
            let previous = store.state.schedule.delivered.first { $0.identifier == identifier }?.serverID ?? 0
            let rendered = render(content, for: capabilities, replacesID: previous)
            let serverID = try client.notify(rendered.notification)
            // Notify first, then the record: a crash in between repeats an alarm, never drops one.
            record([.fired(identifier: identifier, due: due),
                    .delivered(DeliveredNotification(identifier: identifier, serverID: serverID, date: now, content: content))])
            emit("Fired", [.string(identifier), .int64(due), .string(timeliness.rawValue)])
            logger.info("fired", metadata: ["alarm.id": "\(identifier)", "notification.id": "\(serverID)", "timeliness": "\(timeliness.rawValue)"])
            if let sound = content.sound, !capabilities.contains(.sound) { play(sound, for: identifier) }
            if case .seconds(let seconds) = content.expiry {
                closeDeadlines.append((wallClockNanoseconds() + Int64(seconds) * Self.second + Self.closeSlack, identifier, serverID))
            }
        } catch let error as NoNotificationServerError {
            logger.warning("\(error); holding the alarm", metadata: ["alarm.id": "\(identifier)"])
            serverPresent = false
            waiting.append((identifier, due))
        } catch {
            logger.error("could not show the alarm: \(error)", metadata: ["alarm.id": "\(identifier)"])
        }
        reschedule(identifier, after: due, now: now)
    }

    /// Plays `sound` through the local player (the server does not play sounds).
    func play(_ sound: Sound, for identifier: String) {
        guard let player else {
            logger.warning("the notification server plays no sounds and no local player was found (\(soundPlayers.joined(separator: ", ")))")
            return
        }
        let (name, isFile): (String, Bool) = switch sound {
        case .default: (Sound.defaultName, false)
        case .named(let name): (name, false)
        case .file(let path): (path, true)
        }
        guard let arguments = playerArguments(player: player, sound: name, isFile: isFile) else {
            logger.warning("\(player.name) cannot play the sound \(name)", metadata: ["alarm.id": "\(identifier)"])
            return
        }
        do throws(SpawnError) {
            let child = try spawnChild(arguments, captureOutput: false, outputLimit: 0,
                                       deadline: wallClockNanoseconds() + playerTimeLimit * Self.second)
            children[child.pid] = child
        } catch {
            logger.warning("\(error)", metadata: ["alarm.id": "\(identifier)"])
        }
    }

    /// Hands finished body commands' output to their occurrences, stops children past
    /// their time limit, and forgets children that are done and reaped.
    func finishChildren() {
        guard !children.isEmpty else { return }
        let now = wallClockNanoseconds()
        for (pid, child) in children {
            if !child.finished, !child.isDone, now >= child.deadline {
                child.kill()
                child.timedOut = true
                logger.warning("stopped \(pid): it ran past its time limit")
            }
            if !child.finished, child.isDone || child.timedOut {
                child.finished = true
                if let waiting = preparing.removeValue(forKey: pid) { bodyCommandFinished(child, waiting) }
            }
            if child.finished, child.waitStatus != nil { children[pid] = nil }
        }
    }

    func bodyCommandFinished(_ child: Child, _ waiting: Preparing) {
        var content = waiting.content
        guard store.state.schedule.request(withIdentifier: waiting.identifier) != nil else {
            logger.info("cancelled while its body command ran", metadata: ["alarm.id": "\(waiting.identifier)"])
            return
        }
        if child.timedOut {
            content.body = Self.withNote(content.body, "body command timed out after \(content.bodyCommand?.timeLimit ?? 0) s")
        } else if !child.succeeded {
            content.body = Self.withNote(content.body, "body command failed: \(child.ending)")
        } else {
            var text = String(decoding: child.collected.filter { $0 != 0 }, as: UTF8.self)
            while text.last?.isNewline == true { text.removeLast() }
            if child.truncated { text += "…" }
            // Output is plain text, even where the static body is markup.
            if !text.isEmpty { content.body = content.bodyIsMarkup ? escapeMarkup(text) : text }
        }
        show(waiting.identifier, due: waiting.due, timeliness: waiting.timeliness, content: content,
             now: wallClockNanoseconds() / Self.second)
    }

    /// Closes popups whose expiry passed but which the server left up.
    func closeExpired() {
        guard !closeDeadlines.isEmpty else { return }
        let now = wallClockNanoseconds()
        let due = closeDeadlines.filter { $0.time <= now }
        closeDeadlines.removeAll { $0.time <= now }
        for entry in due
        where store.state.schedule.delivered.contains(where: { $0.identifier == entry.identifier && $0.serverID == entry.serverID }) {
            logger.info("closing an expired popup the server left up", metadata: ["alarm.id": "\(entry.identifier)"])
            try? client.close(entry.serverID)
        }
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
                let snooze = delivered.content.snooze ?? Self.defaultSnooze
                let at = wallClockNanoseconds() + snooze * Self.second
                // A snoozed one-off stays pending until its snooze rings.
                if store.state.schedule.request(withIdentifier: delivered.identifier) == nil {
                    let seconds = at / Self.second
                    let again = NotificationRequest(
                        identifier: delivered.identifier, content: delivered.content,
                        trigger: Trigger(rule: .instant(seconds), repeats: false, timeZone: nil, anchor: seconds,
                                         nanosecond: Int32(at % Self.second)))
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
        record([change])
    }

    /// Makes changes durable with one fsync.
    func record(_ changes: [Change]) {
        do { try store.append(contentsOf: changes) } catch { logger.error("\(error)") }
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
        store.state.schedule.pending.map { ($0, queue.time(of: $0.identifier).map { $0 / Self.second }) }
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
        let now = wallClockNanoseconds()
        // The occurrence may fall later in the current second (an instant with a nanosecond part).
        var next = nextFire(of: request, after: now / Self.second - 1)
        if let early = next, early <= now { next = nextFire(of: request, after: now / Self.second) }
        if let next {
            queue.schedule(request.identifier, at: next)
            return .int64(next / Self.second)
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
                    ExportedMethod("Settings", outputs: [Parameter("settings_json", .string)]) { [unowned self] _ in
                        [try self.json(try notificationSettings(connection: self.connection))]
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
