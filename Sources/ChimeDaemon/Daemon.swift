// `chime daemon`: one poll loop on one thread over the bus, a wall-clock timer
// and signals; pending occurrences in a heap; every change on disk before it
// is acknowledged.
import ChimeCenter
import DBus
import FoundationEssentials
import Logging
import Notifications
import Timekeeping
internal import CLinux
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
    /// The alarm file the daemon follows (nil: none). Set before `run()`.
    public var configPath: String?
    var watcher: ConfigWatcher?
    /// When to read the alarm file after an edit (nanoseconds).
    var reloadAt: Int64?
    var fileStatus = AlarmFileStatus(path: "")
    /// The file's alarms as last applied, by identifier.
    var appliedAlarms: [String: AppliedAlarm] = [:]

    /// An occurrence whose body command is running.
    struct Preparing {
        var occurrence: Occurrence
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
        // Asked now so the first alarm does not wait for it (it is asked again after a server change).
        if serverPresent { capabilities = try? client.capabilities() }
        // Timers wake us within 1 µs of their time instead of the default 50 µs slack.
        _ = chime_set_timer_slack(1)
    }

    // MARK: - The loop

    /// Runs until SIGTERM or SIGINT. Sleeps in `poll` while nothing is due: no periodic wake-ups.
    public func run() throws {
        // The file first: an alarm changed while the daemon was down is not caught up in its old form.
        startFollowingAlarmFile(now: wallClockNanoseconds())
        do { try catchUp(now: wallClockNanoseconds()) } catch { throw DaemonError("\(error)") }
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
                pollfd(fd: watcher?.fd ?? -1, events: Int16(POLLIN), revents: 0),
            ]
            let reading = children.values.filter { $0.output >= 0 }
            for child in reading { fds.append(pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw DaemonError("poll failed: \(String(cString: strerror(errno)))")
            }
            for (index, child) in reading.enumerated() where fds[4 + index].revents != 0 { child.readOutput() }
            if fds[2].revents != 0 { handleSignals() }
            if fds[3].revents != 0 { alarmFileTouched() }
            if fds[1].revents != 0 {
                switch timer.read() {
                case .clockChanged:
                    logger.info("the wall clock changed; re-evaluating every alarm")
                    rescheduleAll(after: wallClockNanoseconds())
                default: break
                }
                reloadIfSettled(now: wallClockNanoseconds())
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

    /// Arms the timer for whatever comes first: an occurrence, a child's time limit, a popup to
    /// close, a read of the alarm file after an edit.
    func armTimer() {
        var earliest = queue.earliest()?.time
        if let reloadAt { earliest = min(earliest ?? reloadAt, reloadAt) }
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
                if configPath == nil {
                    logger.info("SIGHUP: no alarm file to read (started with --no-config)")
                } else {
                    reloadAlarmFile(now: wallClockNanoseconds(), reason: "SIGHUP")
                }
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

    /// Logs a store failure; the daemon goes on with what it has in memory.
    func logging(_ body: () throws(StoreError) -> Void) {
        do { try body() } catch { logger.error("\(error)") }
    }

    /// On start (`nowNanoseconds`): queues every request from its stored next
    /// occurrence; one that passed while the daemon was down is shown once,
    /// marked missed, within its grace period, and older ones are recorded.
    func catchUp(now nowNanoseconds: Int64) throws(StoreError) {
        let now = nowNanoseconds / Self.second
        var overdue: [ScheduledTime] = []
        for time in try store.scheduledTimes() {
            guard let next = time.nextFire else { continue }
            if next > nowNanoseconds { queue.schedule(time.identifier, at: next) } else { overdue.append(time) }
        }
        for time in overdue {
            guard let request = try store.request(withIdentifier: time.identifier), let first = time.nextFire else { continue }
            // Missed while down: find the latest occurrence that passed.
            var latest = first / Self.second
            var older: [UnixTime] = []
            var steps = 0
            while let next = nextFire(of: request, after: latest), next <= nowNanoseconds, steps < 100_000 {
                if older.count < 100 { older.append(latest) }
                latest = next / Self.second
                steps += 1
            }
            logging { () throws(StoreError) in
                try store.recordMissed(older.map { MissedOccurrence(identifier: request.identifier, due: $0, recorded: now) })
            }
            if now - latest <= request.content.grace ?? Self.defaultGrace {
                deliver(request, due: latest, timeliness: .missed, now: now)
            } else {
                logging { () throws(StoreError) in
                    try store.write { () throws(StoreError) in
                        try store.recordMissed([MissedOccurrence(identifier: request.identifier, due: latest, recorded: now)])
                        try advance(request, past: latest, now: now)
                    }
                }
                emit("Missed", [.string(request.identifier), .int64(latest)])
            }
        }
        // Occurrences held for a server before the daemon stopped.
        for (identifier, due) in try store.held() where !waiting.contains(where: { $0 == (identifier, due) }) {
            waiting.append((identifier, due))
        }
        if serverPresent, !waiting.isEmpty { showHeld() }
    }

    /// After a clock jump: every request's next occurrence is computed again.
    func rescheduleAll(after nowNanoseconds: Int64) {
        let now = nowNanoseconds / Self.second
        queue = OccurrenceQueue()
        logging { () throws(StoreError) in
            let times = try store.scheduledTimes()
            try store.write { () throws(StoreError) in
                for time in times {
                    guard let request = try store.request(withIdentifier: time.identifier) else { continue }
                    let base = max(time.lastFired ?? request.trigger.anchor, now - 1)
                    let next = nextFire(of: request, after: base)
                    try store.setNextFire(time.identifier, next)
                    if let next { queue.schedule(time.identifier, at: next) }
                }
            }
        }
    }

    func fireDue() {
        let now = wallClockNanoseconds()
        for (identifier, due) in queue.popDue(now) {
            let request: NotificationRequest?
            do { request = try store.request(withIdentifier: identifier) } catch {
                logger.error("\(error)")
                // Unreadable now: try again in a minute rather than lose it.
                queue.schedule(identifier, at: now + 60 * Self.second)
                continue
            }
            guard let request else { continue }
            deliver(request, due: due / Self.second, timeliness: .onTime, now: now / Self.second)
        }
    }

    /// Moves `request` past its occurrence at `due` in the store: to its next
    /// occurrence, or out of the pending list when a one-off is done (and not held).
    /// Call inside a store transaction; the queue follows once it commits.
    @discardableResult
    func advance(_ request: NotificationRequest, past due: UnixTime, now: UnixTime) throws(StoreError) -> Int64? {
        let next = nextFire(of: request, after: max(due, now - 1))
        if next == nil, try !store.isHeld(request.identifier) {
            // A one-off that has fired leaves the pending list, as on iOS.
            try store.remove([request.identifier])
        } else {
            try store.setNextFire(request.identifier, next, handled: due)
        }
        return next
    }

    func requeue(_ identifier: String, _ next: Int64?) {
        if let next { queue.schedule(identifier, at: next) } else { queue.cancel(identifier) }
    }

    /// Shows one occurrence: holds it while no server runs, runs its body command first if it has one.
    func deliver(_ request: NotificationRequest, due: UnixTime, timeliness: Timeliness, now: UnixTime, held: Bool = false) {
        let identifier = request.identifier
        if !serverPresent {
            logger.warning("no notification server; holding the alarm until one appears", metadata: ["alarm.id": "\(identifier)"])
            hold(request, due: due, now: now, alreadyHeld: held)
            return
        }
        var content = request.content
        switch timeliness {
        case .onTime: break
        case .late: content.subtitle = Self.joined("Late: due at \(clock(due, request))", content.subtitle)
        case .missed: content.subtitle = Self.joined("Missed at \(clock(due, request))", content.subtitle)
        }
        let occurrence = Occurrence(request: request, due: due, timeliness: timeliness, held: held)
        if let command = content.bodyCommand {
            let deadline = wallClockNanoseconds() + Int64(command.timeLimit) * Self.second
            do throws(SpawnError) {
                let child = try spawnChild(command.arguments, captureOutput: true, outputLimit: command.outputLimit, deadline: deadline)
                children[child.pid] = child
                preparing[child.pid] = Preparing(occurrence: occurrence, content: content)
                return  // shown when the command finishes (finishChildren)
            } catch {
                logger.warning("\(error)", metadata: ["alarm.id": "\(identifier)"])
                content.body = Self.withNote(content.body, "body command could not start: \(error.reason.lowercased())")
            }
        }
        show(occurrence, content: content, now: now)
    }

    /// Keeps an occurrence for when a server appears (durably) and moves the request on.
    func hold(_ request: NotificationRequest, due: UnixTime, now: UnixTime, alreadyHeld: Bool) {
        if !waiting.contains(where: { $0 == (request.identifier, due) }) { waiting.append((request.identifier, due)) }
        guard !alreadyHeld else { return }
        logging { () throws(StoreError) in
            var next: Int64?
            try store.write(.firing) { () throws(StoreError) in
                try store.hold(request.identifier, due: due)
                next = try advance(request, past: due, now: now)
            }
            requeue(request.identifier, next)
        }
    }

    static func joined(_ note: String, _ subtitle: String) -> String {
        subtitle.isEmpty ? note : note + " · " + subtitle
    }

    /// The static body and a short note on why it is not the command's output.
    static func withNote(_ body: String, _ note: String) -> String {
        body.isEmpty ? "(\(note))" : body + "\n(\(note))"
    }

    /// One occurrence on its way to the screen.
    struct Occurrence {
        var request: NotificationRequest
        var due: UnixTime
        var timeliness: Timeliness
        /// Held for a server earlier: the request has already moved past it.
        var held: Bool
    }

    /// Sends one occurrence to the server, records it, plays its sound, and moves the request on.
    func show(_ occurrence: Occurrence, content: NotificationContent, now: UnixTime) {
        let identifier = occurrence.request.identifier
        do {
            let capabilities = try self.capabilities ?? client.capabilities()
            self.capabilities = capabilities
            let previous = (try? store.delivered(identifier: identifier))??.serverID ?? 0
            // The subtitle carries "Late"/"Missed"; rendering folds it into the text the server shows.
            let rendered = render(content, for: capabilities, replacesID: previous)
            let serverID = try client.notify(rendered.notification)
            // Notify first, then the record: a crash in between repeats an alarm, never drops one.
            var next: Int64?? = .none
            logging { () throws(StoreError) in
                try store.write(.firing) { () throws(StoreError) in
                    try store.recordDelivered(DeliveredNotification(identifier: identifier, serverID: serverID, date: now, content: content))
                    if occurrence.held {
                        try store.release(identifier, due: occurrence.due)
                        // A one-off shown late is done now.
                        if try store.scheduledTime(of: identifier)?.nextFire == nil, try !store.isHeld(identifier) {
                            try store.remove([identifier])
                        }
                    } else {
                        next = .some(try advance(occurrence.request, past: occurrence.due, now: now))
                    }
                }
            }
            if case .some(let next) = next { requeue(identifier, next) }
            emit("Fired", [.string(identifier), .int64(occurrence.due), .string(occurrence.timeliness.rawValue)])
            logger.info("fired", metadata: ["alarm.id": "\(identifier)", "notification.id": "\(serverID)",
                                            "timeliness": "\(occurrence.timeliness.rawValue)"])
            if let sound = content.sound, !capabilities.contains(.sound) { play(sound, for: identifier) }
            if case .seconds(let seconds) = content.expiry {
                closeDeadlines.append((wallClockNanoseconds() + Int64(seconds) * Self.second + Self.closeSlack, identifier, serverID))
            }
        } catch let error as NoNotificationServerError {
            logger.warning("\(error); holding the alarm", metadata: ["alarm.id": "\(identifier)"])
            serverPresent = false
            hold(occurrence.request, due: occurrence.due, now: now, alreadyHeld: occurrence.held)
        } catch {
            logger.error("could not show the alarm: \(error)", metadata: ["alarm.id": "\(identifier)"])
            if !occurrence.held {
                logging { () throws(StoreError) in
                    var next: Int64?
                    try store.write(.firing) { () throws(StoreError) in next = try advance(occurrence.request, past: occurrence.due, now: now) }
                    requeue(identifier, next)
                }
            }
        }
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
        guard (try? store.scheduledTime(of: waiting.occurrence.request.identifier)) != nil else {
            logger.info("cancelled while its body command ran", metadata: ["alarm.id": "\(waiting.occurrence.request.identifier)"])
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
        show(waiting.occurrence, content: content, now: wallClockNanoseconds() / Self.second)
    }

    /// Closes popups whose expiry passed but which the server left up.
    func closeExpired() {
        guard !closeDeadlines.isEmpty else { return }
        let now = wallClockNanoseconds()
        let due = closeDeadlines.filter { $0.time <= now }
        closeDeadlines.removeAll { $0.time <= now }
        for entry in due where (try? store.delivered(identifier: entry.identifier))??.serverID == entry.serverID {
            logger.info("closing an expired popup the server left up", metadata: ["alarm.id": "\(entry.identifier)"])
            try? client.close(entry.serverID)
        }
    }

    func clock(_ time: UnixTime, _ request: NotificationRequest) -> String {
        let civil = request.trigger.zone.civil(at: time)
        return pad2(civil.hour) + ":" + pad2(civil.minute)
    }

    func serverOwnerChanged(to owner: String) {
        capabilities = nil
        serverPresent = !owner.isEmpty
        if serverPresent, !waiting.isEmpty { showHeld() }
    }

    /// Shows every occurrence held for a server, marked late.
    func showHeld() {
        let held = waiting
        waiting.removeAll()
        let now = wallClockNanoseconds() / Self.second
        logger.info("a notification server is here; showing \(held.count) held alarm(s)")
        for (identifier, due) in held {
            guard let request = try? store.request(withIdentifier: identifier) else {
                logging { () throws(StoreError) in try store.release(identifier, due: due) }
                continue
            }
            deliver(request, due: due, timeliness: .late, now: now, held: true)
        }
    }

    func handle(_ event: NotificationEvent) {
        switch event {
        case .closed(let id, _):
            if let delivered = try? store.delivered(serverID: id) {
                logging { () throws(StoreError) in try store.removeDelivered([delivered.identifier]) }
            }
        case .actionInvoked(let id, let key):
            guard let delivered = try? store.delivered(serverID: id) else { return }
            if key == NotificationAction.snooze.identifier {
                let snooze = delivered.content.snooze ?? Self.defaultSnooze
                let at = wallClockNanoseconds() + snooze * Self.second
                let seconds = at / Self.second
                logging { () throws(StoreError) in
                    if try store.scheduledTime(of: delivered.identifier) != nil {
                        // A repeating alarm rings again after the snooze, then keeps its rule.
                        try store.setNextFire(delivered.identifier, at)
                    } else {
                        // A snoozed one-off is pending again until its snooze rings.
                        var content = delivered.content
                        content.subtitle = ""
                        let again = NotificationRequest(
                            identifier: delivered.identifier, content: content,
                            trigger: Trigger(rule: .instant(seconds), repeats: false, timeZone: nil, anchor: seconds,
                                             nanosecond: Int32(at % Self.second)))
                        try store.add(again, nextFire: at, origin: try store.isFileAlarm(delivered.identifier) ? .file : .commandLine)
                    }
                    queue.schedule(delivered.identifier, at: at)
                    logger.info("snoozed for \(snooze) s", metadata: ["alarm.id": "\(delivered.identifier)"])
                }
            }
            // Snooze and dismiss both take this ring down; a repeating alarm rings again at its next time.
            try? client.close(id)
        case .activationToken:
            break
        }
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

    /// A store failure as the D-Bus error a client sees.
    func storeCall<T>(_ body: () throws(StoreError) -> T) throws(DBusError) -> T {
        do { return try body() } catch { throw DBusError(name: SchedulerInterface.storeFailed, message: "\(error)") }
    }

    /// Adds a request durably and schedules it; the reply is the next fire time (-1: never).
    func add(_ request: NotificationRequest) throws -> Value {
        guard !request.identifier.isEmpty, request.identifier.utf8.count <= 200 else {
            throw DBusError(name: SchedulerInterface.invalidRequest, message: "an identifier must be 1-200 bytes")
        }
        try refuseFileAlarms([request.identifier])
        let next = firstFire(of: request, now: wallClockNanoseconds())
        try storeCall { () throws(StoreError) in try store.add(request, nextFire: next) }
        waiting.removeAll { $0.identifier == request.identifier }
        requeue(request.identifier, next)
        return .int64(next.map { $0 / Self.second } ?? -1)
    }

    /// The alarm file's alarms are changed in the file: a call that would change one is refused.
    func refuseFileAlarms(_ identifiers: [String]) throws(DBusError) {
        let owned = try storeCall { () throws(StoreError) in
            var owned: [String] = []
            for id in identifiers where try store.isFileAlarm(id) { owned.append(id) }
            return owned
        }
        guard !owned.isEmpty else { return }
        let which = owned.map { "'\($0)'" }.joined(separator: ", ")
        throw DBusError(name: SchedulerInterface.fromAlarmFile,
                        message: "\(which) \(owned.count == 1 ? "is an alarm" : "are alarms") from the alarm file \(configPath ?? ""); change \(owned.count == 1 ? "it" : "them") there (or set enabled = false)")
    }

    /// After a command-line alarm is cancelled, a file alarm left out for its identifier may fit now.
    func retryConflicts() {
        if !fileStatus.conflicts.isEmpty { reloadAt = wallClockNanoseconds() }
    }

    func fileStatusValue() throws -> Value {
        try json(fileStatus)
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
                        try self.refuseFileAlarms(ids)
                        let known = try self.storeCall { () throws(StoreError) in try self.store.remove(ids) }
                        for id in ids { self.queue.cancel(id) }
                        self.waiting.removeAll { ids.contains($0.identifier) }
                        self.retryConflicts()
                        return [.strings(known)]
                    },
                    ExportedMethod("RemoveAll", outputs: [Parameter("removed", .array(.string))]) { [unowned self] _ in
                        // The alarm file's alarms stay: the file is where they are changed.
                        let removed = try self.storeCall { () throws(StoreError) in try self.store.removeAll() }
                        for id in removed { self.queue.cancel(id) }
                        let gone = Set(removed)
                        self.waiting.removeAll { gone.contains($0.identifier) }
                        self.retryConflicts()
                        return [.strings(removed)]
                    },
                    ExportedMethod("AlarmFileStatus", outputs: [Parameter("status_json", .string)]) { [unowned self] _ in
                        [try self.fileStatusValue()]
                    },
                    ExportedMethod("ReloadAlarmFile", outputs: [Parameter("status_json", .string)]) { [unowned self] _ in
                        guard self.configPath != nil else {
                            throw DBusError(name: .failed, message: "this daemon follows no alarm file (it was started with --no-config)")
                        }
                        self.reloadAlarmFile(now: wallClockNanoseconds(), reason: "asked over D-Bus")
                        return [try self.fileStatusValue()]
                    },
                    ExportedMethod("ListPending", outputs: [Parameter("pending_json", .string)]) { [unowned self] _ in
                        [try self.json(try self.storeCall { () throws(StoreError) in try self.store.pendingRequests() })]
                    },
                    ExportedMethod("ListPendingSummary", outputs: [Parameter("pending_json", .string)]) { [unowned self] _ in
                        guard let json = try self.storeCall({ () throws(StoreError) in
                            try self.store.pendingSummariesJSON(limit: Self.maximumReply)
                        }) else {
                            throw DBusError(name: .limitsExceeded, message: "the list would be more than one D-Bus message may carry")
                        }
                        return [.string(String(decoding: json, as: UTF8.self))]
                    },
                    ExportedMethod("ListDelivered", outputs: [Parameter("delivered_json", .string)]) { [unowned self] _ in
                        [try self.json(try self.storeCall { () throws(StoreError) in try self.store.deliveredNotifications() })]
                    },
                    ExportedMethod("ListMissed", outputs: [Parameter("missed_json", .string)]) { [unowned self] _ in
                        [try self.json(try self.storeCall { () throws(StoreError) in try self.store.missedOccurrences() })]
                    },
                    ExportedMethod("Settings", outputs: [Parameter("settings_json", .string)]) { [unowned self] _ in
                        [try self.json(try notificationSettings(connection: self.connection))]
                    },
                    ExportedMethod("CloseDelivered", inputs: [Parameter("identifiers", .array(.string))]) { [unowned self] call in
                        let ids = call.arguments[0].arrayElements?.compactMap(\.stringValue) ?? []
                        let delivered = try self.storeCall { () throws(StoreError) in try self.store.deliveredNotifications() }
                        let unknown = ids.filter { id in !delivered.contains { $0.identifier == id } }
                        if !unknown.isEmpty {
                            throw DBusError(name: SchedulerInterface.unknownIdentifier, message: "not delivered: \(unknown.joined(separator: ", "))")
                        }
                        let serverIDs = delivered.filter { ids.contains($0.identifier) }.map(\.serverID)
                        try self.storeCall { () throws(StoreError) in try self.store.removeDelivered(ids) }
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
