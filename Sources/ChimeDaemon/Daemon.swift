// `chime daemon`: one poll loop on one thread over named sources (PollSet.swift): the bus,
// a wall-clock timer, signals, the alarm file's directory and the children's output. What
// happens when an alarm is due is in Scheduling.swift (the queue, the store, catching up,
// quarantine) and Delivery.swift (showing it, retries); what the daemon asks the server
// besides Notify is ServerAnswers.swift; the D-Bus interface is SchedulerService.swift.
import ChimeCenter
import DBus
import Logging
import Notifications
import Posix
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

/// The scheduler daemon: the wiring of its parts (each owns its state and shows the loop what to
/// poll and when it is due: `LoopPart`) and the scheduling and showing of alarms, which use them.
///
/// The parts, and what each may ask of the others:
/// - `ServerSession`: the notification server's presence, capabilities and name.
/// - `DoNotDisturb`: the server's do-not-disturb (asks the session who the server is; runs
///   `gsettings` through the children).
/// - `ChildProcesses`: every program the daemon runs (body commands, players, gsettings).
/// - `Ringing`: sounds and rings until answered (starts players through the children).
/// - `SleepFollower`: logind's sleep signal, the delay lock, block locks.
/// - `Waking`: waking the machine for `--wake` alarms and keeping it awake (holds block locks
///   through the sleep part).
/// The daemon itself keeps the queue, the store, presentation (calls in flight, retries, held
/// occurrences, close deadlines), the alarm file and the D-Bus service.
public final class SchedulerDaemon {
    /// How long after its due time a missed occurrence is still shown.
    public static let defaultGrace = AlarmDefaults.grace
    /// How long Snooze waits unless the alarm says otherwise (`--snooze`).
    public static let defaultSnooze = AlarmDefaults.snooze

    let connection: Connection
    let store: Store
    var logger: Logger
    /// Where "now" comes from (the system's clock; a test's).
    let clock: WallClock
    var queue = OccurrenceQueue()
    let timer: WallClockTimer
    let signals: SignalSource
    var stopping = false

    // MARK: Parts
    let session: ServerSession
    let doNotDisturb: DoNotDisturb
    let children: ChildProcesses
    let ringing: Ringing
    let sleep: SleepFollower?
    let waking: Waking
    /// Every part, for the loop.
    private var parts: [any LoopPart] { [session, doNotDisturb, children, ringing, waking] + (sleep.map { [$0] } ?? []) }
    var client: NotificationClient { session.client }

    // MARK: Presentation
    /// Occurrences due while no server was there (or deferred), shown when one appears.
    var waiting: [(identifier: String, due: Instant)] = []
    /// Occurrences whose body command runs, by the command's process id.
    var preparing: [pid_t: Occurrence] = [:]
    /// Notifications chime closes itself when their expiry passes (servers may ignore it).
    var closeDeadlines: [(time: Instant, identifier: String, serverID: UInt32)] = []
    /// Alarms held until do-not-disturb ends (`--dnd defer`); they wait with the held ones.
    var deferred: Set<String> = []
    /// Notify calls waiting for the server's answer.
    var presenting: [Presentation] = []
    /// Occurrences waiting for the server's capabilities before they can be rendered.
    var awaitingCapabilities: [(Occurrence, NotificationContent)] = []
    /// Occurrences the server failed to show, to be tried again (the `retrying` table, in memory).
    var retries: [Retry] = []
    /// How long after its expiry chime closes a popup the server left up.
    static let closeSlack = TimeSpan.milliseconds(500)

    // MARK: The alarm file and the system's zone
    /// The alarm file the daemon follows (nil: none). Set before `run()`.
    public var configPath: String?
    var watcher: ConfigWatcher?
    /// Follows the system's time zone (/etc/localtime, re-pointed by timedatectl): a change re-plans
    /// every alarm, as a clock jump does. nil when it cannot be watched (then only a restart sees it).
    var zoneWatcher: ConfigWatcher?
    /// The system's zone as last planned with, to tell a real change from other events in /etc.
    var plannedZone = ""
    /// When to read the alarm file after an edit.
    var reloadAt: Instant?
    var fileStatus = AlarmFileStatus(path: "")
    /// The file's alarms as last applied, by identifier.
    var appliedAlarms: [String: AppliedAlarm] = [:]

    // MARK: Crashes
    /// Which request is being fired, on disk, so a crash costs at most that request.
    let marker: FiringMarker
    /// Requests the daemon crashed while firing before (cleared once they fire cleanly).
    var suspects: Set<String> = []
    /// The exported interface.
    var service: SchedulerService?

    /// How long a sound player may run.
    public var playerTimeLimit: TimeSpan {
        get { ringing.playerTimeLimit }
        set { ringing.playerTimeLimit = newValue }
    }

    /// Takes the daemon's bus name, before anything else is opened: of two daemons started at
    /// once, the one that gets the name runs and the other says so, without touching the store.
    public static func claimBusName(on connection: Connection) throws {
        guard try connection.requestName(SchedulerInterface.busName) == .primaryOwner else {
            throw DaemonError("another chime daemon is already running for this user (\(SchedulerInterface.busName) is taken)")
        }
    }

    /// Connects the daemon to `connection` (which already owns the bus name) and its state in `store`.
    public init(connection: Connection, store: Store, logger: Logger, clock: WallClock = .system) throws {
        self.connection = connection
        self.store = store
        self.logger = logger
        self.clock = clock
        do {
            timer = try WallClockTimer()
            signals = try SignalSource([SIGTERM, SIGINT, SIGHUP, SIGCHLD])
            marker = try FiringMarker(directory: store.directory)
        } catch {
            throw DaemonError("cannot start: \(error)")
        }
        let client = NotificationClient(connection: connection, timeout: .milliseconds(Int32(ServerSession.timeout.milliseconds)))
        session = ServerSession(client: client, clock: clock, logger: logger)
        children = ChildProcesses(clock: clock, logger: logger)
        doNotDisturb = DoNotDisturb(connection: connection, session: session, children: children, clock: clock, logger: logger)
        ringing = Ringing(store: store, children: children, client: client, clock: clock, logger: logger)
        sleep = SleepFollower(clock: clock, logger: logger)
        waking = Waking(connection: connection, sleep: sleep, clock: clock, logger: logger)
        for warning in store.warnings { logger.warning("\(warning)") }

        let service = SchedulerService(daemon: self)
        self.service = service
        connection.export(service.object(), at: SchedulerInterface.path)
        connectParts()
        try client.subscribe { [weak self] event in self?.handle(event) }
        try doNotDisturb.follow()
        try session.start()
        // Popups shown by a server that has since left (while the daemon was down) are gone.
        do {
            let gone = try store.forgetDelivered(notShownBy: session.present ? session.owner : nil)
            if !gone.isEmpty { logger.info("\(gone.count) popup(s) shown by a notification server that has left are gone") }
        } catch {
            logger.error("\(error)")
        }
        // Timers wake us within 1 µs of their time instead of the default 50 µs slack.
        _ = chime_set_timer_slack(1)
    }

    /// What the parts tell the daemon.
    private func connectParts() {
        session.events.ownerChanged = { [unowned self] old, new in serverOwnerChanged(from: old, to: new) }
        session.events.gone = { [unowned self] in holdAwaitingCapabilities() }
        session.events.capabilities = { [unowned self] known in
            let ready = awaitingCapabilities
            awaitingCapabilities.removeAll()
            for (occurrence, content) in ready {
                firing(occurrence.request.identifier) { present(occurrence, content: content, capabilities: known) }
            }
        }
        session.events.capabilitiesFailed = { [unowned self] reason in
            let ready = awaitingCapabilities
            awaitingCapabilities.removeAll()
            for (occurrence, content) in ready {
                firing(occurrence.request.identifier) { failed(occurrence, content: content, reason: reason) }
            }
        }
        // Who the server is tells how to read its do-not-disturb: read once now, then followed.
        session.events.identified = { [unowned self] _ in doNotDisturb.refresh() }
        doNotDisturb.onRead = { [unowned self] state in
            // Deferred alarms are shown once do-not-disturb has ended.
            if state.on != true, !deferred.isEmpty {
                deferred.removeAll()
                if !waiting.isEmpty { showHeld() }
            }
        }
        ringing.rangOut = { [unowned self] identifier, due, serverID, snoozes in
            waking.release(identifier)
            emit("RangOut", [.string(identifier), .int64(due.seconds), .boolean(snoozes)])
            if snoozes, let delivered = (try? store.delivered(identifier: identifier)) ?? nil, delivered.serverID == serverID {
                firing(identifier) { snooze(delivered) }
                try? client.requestClose(serverID)
            }
        }
    }

    // MARK: - The loop

    /// Runs until SIGTERM or SIGINT. Sleeps in `poll` while nothing is due: no periodic wake-ups.
    public func run() throws {
        // A crash while firing (or computing) one request is charged before anything fires again.
        chargeCrash()
        // The file first: an alarm changed while the daemon was down is not caught up in its old form.
        startFollowingAlarmFile(now: clock.now())
        startFollowingTimeZone()
        startFollowingSleep()
        do { try catchUp(now: clock.now()) } catch { throw DaemonError("\(error)") }
        ringing.resume()
        logger.info("chime daemon ready", metadata: ["pending": "\(queue.count)"])
        while !stopping {
            connection.dispatchPending()
            sleep?.beforeWait()
            if stopping { break }
            prepareParts(now: clock.now())
            armTimer()
            guard let busFD = connection.fileDescriptor else { throw DaemonError(Self.busGone) }
            var sources = PollSet()
            sources.add(.bus, fd: busFD, writable: connection.hasMessagesToSend)
            sources.add(.timer, fd: timer.fd)
            sources.add(.signals, fd: signals.fd)
            sources.add(.alarmFile, fd: watcher?.fd ?? -1)
            sources.add(.timeZone, fd: zoneWatcher?.fd ?? -1)
            let parts = self.parts
            for (index, part) in parts.enumerated() {
                let writing = part.writing
                for fd in part.descriptors { sources.add(.part(index, fd), fd: fd, writable: writing.contains(fd)) }
            }
            do { try sources.wait() } catch { throw DaemonError("\(error)") }

            for case .part(let index, let fd) in sources.ready { parts[index].readable(fd) }
            if sources.isReady(.signals) { handleSignals() }
            if sources.isReady(.alarmFile) { alarmFileTouched() }
            if sources.isReady(.timeZone) { timeZoneTouched() }
            if sources.isReady(.timer), timer.read() == .clockChanged { wallClockJumped() }
            let now = clock.now()
            for part in parts { if let due = part.deadline, due <= now { part.deadlineReached(now: now) } }
            reloadIfSettled(now: now)
            fireDue()
            expireCalls(now: clock.now())
            retryDue(now: clock.now())
            closeExpired()
            if sources.isReady(.bus) || connection.hasMessagesToSend {
                guard connection.processAvailable() else { throw DaemonError(Self.busGone) }
            }
        }
        connection.flush()
        logger.info("chime daemon stopped")
    }

    /// What the parts need to know of the alarms before the loop waits: the earliest wake alarm
    /// (one indexed query), the next alarm, whether alarms are deferred.
    private func prepareParts(now: Instant) {
        var nextWake: (identifier: String, time: Instant, title: String)?
        do { nextWake = try store.nextWake() } catch { logger.error("\(error)") }
        waking.arrange(for: nextWake, now: now)
        doNotDisturb.expectAlarm(at: queue.earliest()?.time)
        doNotDisturb.recheck(!deferred.isEmpty)
    }

    /// Follows logind's PrepareForSleep where there is a system bus: before a sleep the store is made
    /// durable and the delay lock let go; after it, what fell due is caught up at once.
    func startFollowingSleep() {
        guard let sleep else { return }
        sleep.onSleep = { [unowned self] starting in
            if starting {
                logging { () throws(StoreError) in try store.makeDurable() }
            } else {
                rescheduleAll(after: clock.now())
            }
        }
        sleep.start()
    }

    /// What `chime status` says of sleep.
    var sleepStatus: String {
        guard let sleep, sleep.connection != nil else {
            return "not followed: no system bus; what falls due during a sleep is still caught up at resume (the clock tells)"
        }
        return sleep.following
            ? "followed: logind's delay lock is held, let go once the alarms are on disk"
            : "not followed: logind gives no sleep lock; what falls due during a sleep is still caught up at resume (the clock tells)"
    }

    /// The kernel said the wall clock was set (the timer's TFD_TIMER_CANCEL_ON_SET): every alarm's
    /// next time is computed again from the new now.
    func wallClockJumped() {
        logger.info("the wall clock changed; re-evaluating every alarm")
        rescheduleAll(after: clock.now())
    }

    func startFollowingTimeZone() {
        #if DEBUG
        // Test builds only: a test points the daemon at a localtime of its own, since a test must
        // never change the machine's zone. Release builds have no such switch.
        if let path = getenv("CHIME_TEST_LOCALTIME").map({ String(cString: $0) }), !path.isEmpty { Zone.localtimePath = path }
        #endif
        plannedZone = Self.zoneFingerprint(now: clock.now())
        do {
            zoneWatcher = try ConfigWatcher(path: Zone.localtimePath)
        } catch {
            logger.warning("cannot follow the system time zone (\(error)); a change is seen at the next start")
        }
    }

    /// Something changed where the system's zone is named: when the zone is another one now, every
    /// alarm's next time is computed again (a wall-clock rule keeps its wall time in the new zone).
    func timeZoneTouched() {
        guard let zoneWatcher, zoneWatcher.read() else { return }
        zoneWatcher.refresh()
        let zone = Self.zoneFingerprint(now: clock.now())
        guard zone != plannedZone else { return }
        logger.info("the system time zone changed (\(plannedZone) → \(zone)); re-evaluating every alarm")
        plannedZone = zone
        rescheduleAll(after: clock.now())
    }

    /// The system's zone by name and by its offsets now and in half a year: a localtime that is a
    /// copied file (no name to compare) is told apart by what it does.
    static func zoneFingerprint(now: Instant) -> String {
        let zone = Zone.system()
        return "\(zone.identifier) \(zone.offset(at: now.seconds))/\(zone.offset(at: now.seconds + 182 * 86_400))"
    }

    /// Why the daemon stops when the session bus goes away. It does not reconnect: a session bus
    /// that went away means the session ended (or its dbus-daemon died), and the next one has a new
    /// address and starts the daemon again (systemd's Restart=on-failure, or D-Bus activation).
    /// Nothing is lost meanwhile: what was not shown is still pending, held or retrying in the store.
    static let busGone = "the session bus went away (the session ended, or its dbus-daemon stopped); "
        + "alarms not yet shown are kept in the store and are shown, marked late or missed, when the daemon runs again"

    /// Arms the timer for whatever comes first: an occurrence, a part's deadline, a call to give up
    /// on, a retry, a popup to close, a read of the alarm file after an edit.
    func armTimer() {
        var earliest = queue.earliest()?.time
        func consider(_ time: Instant) { earliest = min(earliest ?? time, time) }
        if let reloadAt { consider(reloadAt) }
        for presentation in presenting { consider(presentation.deadline) }
        for retry in retries { consider(retry.nextTry) }
        for entry in closeDeadlines { consider(entry.time) }
        for part in parts { if let deadline = part.deadline { consider(deadline) } }
        if let earliest { timer.arm(at: earliest) } else { timer.disarm() }
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
                    reloadAlarmFile(now: clock.now(), reason: "SIGHUP")
                }
            case SIGCHLD:
                children.reap()
            default:
                break
            }
        }
    }

    /// Logs a store failure; the daemon goes on with what it has in memory.
    func logging(_ body: () throws(StoreError) -> Void) {
        do { try body() } catch { logger.error("\(error)") }
    }

    func emit(_ member: MemberName, _ arguments: [Value]) {
        try? connection.emit(path: SchedulerInterface.path, interface: SchedulerInterface.interface, member: member, arguments: arguments)
    }
}

func pad2(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
